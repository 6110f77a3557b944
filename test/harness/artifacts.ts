import { mkdirSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

/** Options for stopping a stack. */
export interface StopOptions {
  /** Keep the artifact directory (logs, data) and print its path; set it when a test failed. */
  keepLogs?: boolean;
}

/** Root of the per-run artifact directories (gitignored). */
export const artifactsRoot = fileURLToPath(new URL("../.test-artifacts/", import.meta.url));

/** Creates a fresh directory `test/.test-artifacts/<label>-<time>-<random>` and returns its path. */
export function createArtifactsDir(label: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const dir = join(artifactsRoot, `${label}-${stamp}-${randomBytes(3).toString("hex")}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Removes an artifact directory, or keeps it and prints where it is when `keep` is set. */
export function releaseArtifactsDir(dir: string, keep: boolean): void {
  if (keep) {
    console.error(`[harness] kept logs and data in ${dir}`);
    return;
  }
  rmSync(dir, { recursive: true, force: true });
}
