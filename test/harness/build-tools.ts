import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const buildScript = fileURLToPath(new URL("../cluster/build.sh", import.meta.url));

/**
 * Builds (or finds cached) the pinned test-stack binaries with `test/cluster/build.sh` and
 * resolves with their directory. The script's progress goes to this process's stderr, so a
 * cold build (minutes on 2 cores) is visible; a warm one only checks stamps.
 */
export async function buildTools(): Promise<string> {
  return new Promise((resolve, reject) => {
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
