import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import "./harness/tools.js";

const buildScript = fileURLToPath(new URL("./cluster/build.sh", import.meta.url));

/** Builds (or finds cached) the pinned binaries once per run and provides their directory to tests. */
export default async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  const toolsDir = await runBuild();
  console.error(`[harness] tools ready in ${((Date.now() - started) / 1000).toFixed(1)}s: ${toolsDir}`);
  project.provide("toolsDir", toolsDir);
}

async function runBuild(): Promise<string> {
  return new Promise((resolve, reject) => {
    // stderr is inherited so a cold build's progress is visible; stdout's last line is the tools dir.
    const child = spawn("bash", [buildScript], { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.once("error", reject);
    child.once("exit", (code) => {
      const lastLine = stdout.trimEnd().split("\n").at(-1) ?? "";
      if (code === 0 && lastLine !== "") resolve(lastLine);
      else reject(new Error(`${buildScript} exited with code ${String(code)}; stdout: ${stdout}`));
    });
  });
}
