import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";

/** A memory line of a process's /proc status (VmRSS now, VmHWM its peak), in MiB; 0 when absent. */
export function procStatusMib(pid: number, field: "VmHWM" | "VmRSS"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

/** What the scheduler did with one thread: time on a core, and time runnable but waiting for one. */
export interface ThreadSched {
  runMs: number;
  waitMs: number;
}

/**
 * The scheduler's account of a process's main thread (its thread id is the process id), from
 * /proc/<pid>/task/<pid>/schedstat. A thread that waits for a core is counted by the event loop's
 * delay histogram and by a wall-clock CPU profiler as if it were busy: this tells the two apart.
 */
export function mainThreadSched(pid: number): ThreadSched {
  const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(/\s+/);
  return { runMs: Number(run) / 1e6, waitMs: Number(wait) / 1e6 };
}

/** Processes whose command line contains `text` (this process left out). */
export function pidsWithArgument(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text)) pids.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/**
 * Gives `pid`, every thread of it, and its session's scheduling group the nice value `nice`.
 * Linux keeps a nice value per thread, and with autogroup on a nice value weighs only within
 * the session, where each process the harness starts has its own.
 */
export function reniceProcess(pid: number, nice: number): void {
  for (const tid of readdirSync(`/proc/${pid}/task`)) setPriority(Number(tid), nice);
  if (existsSync(`/proc/${pid}/autogroup`)) writeFileSync(`/proc/${pid}/autogroup`, String(nice));
}
