import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Writable } from "node:stream";
import { closeSync, openSync, readFileSync } from "node:fs";
import { StopWaiting } from "./wait-for.js";

/** A child process running in its own process group, with stdout and stderr in a log file. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  readonly exited: Promise<number | null>;
  /** True until the process has exited. */
  running(): boolean;
  /** Throws {@link StopWaiting}, quoting the log's tail, when the process has exited. */
  assertRunning(): void;
  /** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** What to run for {@link startProcess}. */
export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logPath: string;
  env?: NodeJS.ProcessEnv;
}

const live = new Map<number, string>();

// A test run that ends without its afterAll (a crash, a hook error) must not leave servers
// behind. On a normal exit the handler below kills every group still registered; a worker
// killed by a signal runs no handlers, so a watchdog in its own process group holds the same
// list and kills those groups when its stdin pipe from this process closes.
process.once("exit", () => {
  for (const pid of live.keys()) killGroup(pid, "SIGKILL");
});

const watchdogScript = `
declare -A groups
while read -r line; do
  case "$line" in -*) unset "groups[\${line#-}]" ;; *) groups[$line]=1 ;; esac
done
for pid in "\${!groups[@]}"; do kill -KILL -- "-$pid" 2>/dev/null; done
`;
let watchdog: ChildProcessByStdio<Writable, null, null> | undefined;

function tellWatchdog(line: string): void {
  if (watchdog === undefined) {
    watchdog = spawn("bash", ["-c", watchdogScript], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    watchdog.unref();
    // The pipe must not keep this process alive, and a watchdog that died must not crash it.
    (watchdog.stdin as Writable & { unref?: () => void }).unref?.();
    watchdog.stdin.on("error", () => undefined);
  }
  watchdog.stdin.write(`${line}\n`);
}

/** Starts `spec.command` detached in a new process group, appending its output to `spec.logPath`. */
export function startProcess(spec: ProcessSpec): ManagedProcess {
  const fd = openSync(spec.logPath, "a");
  const child = (() => {
    try {
      return spawn(spec.command, spec.args, {
        detached: true,
        stdio: ["ignore", fd, fd],
        env: spec.env ?? process.env,
      });
    } finally {
      closeSync(fd);
    }
  })();
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${spec.name}: could not start ${spec.command}`);
  live.set(pid, spec.name);
  tellWatchdog(String(pid));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => {
      exitCode = code;
      live.delete(pid);
      tellWatchdog(`-${pid}`);
      // Reap anything the process left behind in its group.
      killGroup(pid, "SIGKILL");
      resolve(code);
    });
  });
  const managed: ManagedProcess = {
    name: spec.name,
    pid,
    logPath: spec.logPath,
    exited,
    running: () => exitCode === undefined,
    assertRunning() {
      if (exitCode === undefined) return;
      throw new StopWaiting(
        `${spec.name} exited with code ${String(exitCode)}; log ${spec.logPath}:\n${logTail(spec.logPath)}`,
      );
    },
    async stop(graceMs = 10_000) {
      if (exitCode !== undefined) return;
      killGroup(pid, "SIGTERM");
      const timer = setTimeout(() => killGroup(pid, "SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  return managed;
}

/** Names and pids of processes started by this harness that have not exited yet. */
export function liveProcesses(): { name: string; pid: number }[] {
  return [...live].map(([pid, name]) => ({ name, pid }));
}

/** The last `lines` lines of a log file, or a note when it cannot be read. */
export function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch (error) {
    return `(no log: ${String(error)})`;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}
