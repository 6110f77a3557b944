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
  const { cores } = after;
  const share = (n: number) => (total > 0 ? n / total : 0);
  return `${(share(after.busy - before.busy) * cores).toFixed(2)} of ${cores} cores busy, steal ${(share(after.steal - before.steal) * 100).toFixed(1)}%`;
}
