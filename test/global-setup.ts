import type { TestProject } from "vitest/node";
import { buildTools } from "./harness/build-tools.js";
import "./harness/tools.js";

/** Builds (or finds cached) the pinned binaries once per run and provides their directory to tests. */
export default async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  const toolsDir = await buildTools();
  console.error(`[harness] tools ready in ${((Date.now() - started) / 1000).toFixed(1)}s: ${toolsDir}`);
  project.provide("toolsDir", toolsDir);
}
