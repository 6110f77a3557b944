// CPU time per process group over a window, read from /proc: which part of the stack (host API
// server, etcd, tenant API servers, each service, NATS) did the work of a benchmark phase.
import { readFileSync, readdirSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU ticks per live process, with the name {@link groupOf} gives it. */
export type CpuSnapshot = Map<number, { group: string; ticks: number }>;

export function cpuSnapshot(): CpuSnapshot {
  const out: CpuSnapshot = new Map();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // Fields after the command name (which may hold spaces) start past the last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ticks = Number(fields[11]) + Number(fields[12]);
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      const group = groupOf(args);
      if (group !== undefined) out.set(pid, { group, ticks });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return out;
}

/**
 * Seconds of CPU per group between two snapshots, largest first. A process that started in
 * between counts from zero; one that ended is left out (its last ticks are unknowable).
 */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): Array<[string, number]> {
  const sums = new Map<string, number>();
  for (const [pid, { group, ticks }] of after) {
    const start = before.get(pid);
    const used = start !== undefined && start.group === group ? ticks - start.ticks : ticks;
    sums.set(group, (sums.get(group) ?? 0) + used / TICKS_PER_SECOND);
  }
  return [...sums].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]);
}

/** One line: `group 1.23s, …` for groups above `floor` seconds. */
export function formatCpu(usage: Array<[string, number]>, floor = 0.05): string {
  return usage
    .filter(([, s]) => s >= floor)
    .map(([g, s]) => `${g} ${s.toFixed(2)}s`)
    .join(", ");
}

// The stack's processes by what they are: the cluster binary's components by subcommand (the
// host's and the tenant stand-ins' API servers both run as kube-apiserver; the stand-ins are
// told apart by their address on 127.0.0.x and their data under tenant-127.0.0.x), services by
// their directory.
function groupOf(args: string[]): string | undefined {
  const exe = args[0]?.split("/").pop() ?? "";
  if (exe.startsWith("cluster")) {
    const component = args[1] ?? "cluster";
    const standIn = args.some(
      (a) => /^--advertise-address=127\.0\.0\.(?!1$)\d+$/.test(a) || a.includes("/tenant-127.0.0."),
    );
    return standIn ? `tenant ${component}` : component;
  }
  if (exe.startsWith("nats-server")) return "nats-server";
  if (exe.startsWith("kwok")) return "kwok";
  if (exe.startsWith("etcd")) return "etcd";
  if (exe === "node") {
    const service = args.map((a) => /services\/([^/]+)\/dist\//.exec(a)?.[1]).find(Boolean);
    return service ?? "other node";
  }
  return undefined;
}

/** The whole machine's CPU ticks from /proc/stat: busy, stolen by the hypervisor, and all; and its cores. */
export interface MachineTicks {
  busy: number;
  steal: number;
  total: number;
  cores: number;
}

export function machineTicks(): MachineTicks {
  const lines = readFileSync("/proc/stat", "utf8").split("\n");
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const [user, nice, system, idle, iowait, irq, softirq, steal] = lines[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq!;
  const cores = lines.filter((l) => /^cpu\d/.test(l)).length;
  return { busy, steal: steal!, total: busy + idle! + iowait! + steal!, cores };
}

/**
 * How busy the machine was between two readings: cores in use, and the share of time the
 * hypervisor gave to someone else (steal), which makes one run's CPU-second worth less than another's.
 */
export function formatMachine(before: MachineTicks, after: MachineTicks): string {
  const total = after.total - before.total;
  const share = (n: number) => (total > 0 ? n / total : 0);
  return `${busyCores(before, after).toFixed(2)} of ${after.cores} cores busy, steal ${(share(after.steal - before.steal) * 100).toFixed(1)}%`;
}

/** Cores in use between two readings. */
export function busyCores(before: MachineTicks, after: MachineTicks): number {
  const total = after.total - before.total;
  return total > 0 ? ((after.busy - before.busy) / total) * after.cores : 0;
}

/** How a wait for a quiet machine ended: how long it took, how busy the last interval was. */
export interface Settled {
  waitedMs: number;
  busyCores: number;
  quiet: boolean;
}

/**
 * Waits until the machine has been quiet (at most `maxBusyCores` in use over `intervalMs`) or
 * `timeoutMs` have passed. A window measured while the last one's work (or a fresh cluster's
 * start-up) still runs is charged for it: a baseline measured seconds after the API server
 * started took from 6 to 12 s for the same objects.
 */
export async function settle(
  opts: { maxBusyCores?: number; intervalMs?: number; timeoutMs?: number } = {},
): Promise<Settled> {
  const { maxBusyCores = 0.3, intervalMs = 5_000, timeoutMs = 180_000 } = opts;
  const started = Date.now();
  for (;;) {
    const before = machineTicks();
    await new Promise((r) => setTimeout(r, intervalMs));
    const busy = busyCores(before, machineTicks());
    const waitedMs = Date.now() - started;
    if (busy <= maxBusyCores || waitedMs >= timeoutMs)
      return { waitedMs, busyCores: busy, quiet: busy <= maxBusyCores };
  }
}

/**
 * The machine's busy level at rest: 5 s readings until two in a row agree within 0.1 cores (or
 * `timeoutMs`), the last one returned. A stack of tenant control planes is never under
 * {@link settle}'s fixed 0.3 cores, so a bench waits for "back to this level" instead.
 */
export async function restingBusy(timeoutMs = 90_000): Promise<number> {
  const started = Date.now();
  let previous = Number.POSITIVE_INFINITY;
  for (;;) {
    const before = machineTicks();
    await new Promise((r) => setTimeout(r, 5_000));
    const busy = busyCores(before, machineTicks());
    if (Math.abs(busy - previous) <= 0.1 || Date.now() - started >= timeoutMs) return busy;
    previous = busy;
  }
}

/** One line on a {@link settle}: e.g. "quiet after 15 s (0.12 cores busy)". */
export function formatSettled(s: Settled): string {
  return `${s.quiet ? "quiet" : "NOT quiet"} after ${(s.waitedMs / 1000).toFixed(0)} s (${s.busyCores.toFixed(2)} cores busy)`;
}

/** Seconds of CPU of one group in a {@link cpuBetween} result (0 when it used none). */
export function cpuOf(usage: Array<[string, number]>, group: string): number {
  return usage.find(([g]) => g === group)?.[1] ?? 0;
}

/** Seconds of CPU the processes `pids` used between two snapshots (a process that started in between counts from zero). */
export function cpuOfPids(before: CpuSnapshot, after: CpuSnapshot, pids: Iterable<number>): number {
  let ticks = 0;
  for (const pid of pids) {
    const end = after.get(pid);
    if (end !== undefined) ticks += end.ticks - (before.get(pid)?.ticks ?? 0);
  }
  return ticks / TICKS_PER_SECOND;
}
