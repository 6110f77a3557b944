// A CPU profile of one service process over a window the bench chooses: the service is started
// with bench/cpu-profiler.mjs preloaded, SIGUSR2 starts the profiler and the next one stops it and
// writes the profile (see that file for why not --cpu-prof).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "../test/harness/index.js";
import type { CpuProfile } from "./cpu-profile.js";

const profiler = fileURLToPath(new URL("./cpu-profiler.mjs", import.meta.url));

export class ProfileWindows {
  private readonly dir = mkdtempSync(join(tmpdir(), "bench-profile-"));
  private count = 0;

  /** Environment for a service that can be profiled; `nodeOptions` are added to its NODE_OPTIONS. */
  env(nodeOptions?: string): { NODE_OPTIONS: string; CPU_PROFILE_PATH: string } {
    return {
      NODE_OPTIONS: `--import ${profiler}${nodeOptions ? ` ${nodeOptions}` : ""}`,
      CPU_PROFILE_PATH: join(this.dir, `service-${this.count++}.cpuprofile`),
    };
  }

  /** Starts profiling the process started with `env`. */
  start(pid: number): void {
    process.kill(pid, "SIGUSR2");
  }

  /** Stops profiling it and reads the profile written for `env`. */
  async stop(pid: number, env: { CPU_PROFILE_PATH: string }): Promise<CpuProfile> {
    process.kill(pid, "SIGUSR2");
    const path = env.CPU_PROFILE_PATH;
    await waitFor(() => existsSync(path) || undefined, {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: "the service's CPU profile",
    });
    return JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
