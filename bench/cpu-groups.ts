import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";

/**
 * CPU groups laid out as a kubelet lays out a node's Pods, for benches whose processes stand in
 * for Pods: a `kubepods` group weighted by the node's CPUs, and under it one group per Pod whose
 * weight is its CPU request (cpu.shares, 1024 per core) and whose CFS quota is its CPU limit.
 * Everything not placed (the host's control plane, NATS, the bench itself) stays in the root
 * group, as the system and other nodes would. Uses the cgroup v1 `cpu` hierarchy; `open` says
 * why when it cannot (no such mount, or not writable).
 */
export class PodCpuGroups {
  private readonly pods = new Map<string, string>();

  private constructor(private readonly root: string) {}

  static open(name: string, mount = "/sys/fs/cgroup/cpu"): PodCpuGroups | string {
    if (!existsSync(join(mount, "cpu.shares"))) return `no cgroup v1 cpu hierarchy at ${mount}`;
    const root = join(mount, name);
    try {
      mkdirSync(join(root, "kubepods"), { recursive: true });
      // The kubelet gives kubepods the node's allocatable CPU as its weight, beside the system's
      // processes at the top. This group stands where kubepods would and must weigh as much:
      // left at the default (1024, one process's weight) every Pod here together would count as
      // one process against the host's API server, etcd and the rest.
      const weight = String(sharesOf(availableParallelism() * 1000));
      writeFileSync(join(root, "cpu.shares"), weight);
      writeFileSync(join(root, "kubepods", "cpu.shares"), weight);
    } catch (err) {
      return `cannot create cpu groups under ${mount}: ${(err as Error).message}`;
    }
    return new PodCpuGroups(root);
  }

  /**
   * Places `pids` (every thread of each, and their later children) in the Pod group `pod`, with
   * the weight of `requestMilli` and, when given, a quota of `limitMilli`.
   */
  place(pod: string, pids: number[], resources: { requestMilli: number; limitMilli?: number }): void {
    const dir = join(this.root, "kubepods", pod);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "cpu.shares"), String(sharesOf(resources.requestMilli)));
    const period = Number(readFileSync(join(dir, "cpu.cfs_period_us"), "utf8"));
    const quota = resources.limitMilli === undefined ? -1 : Math.round((resources.limitMilli * period) / 1000);
    writeFileSync(join(dir, "cpu.cfs_quota_us"), String(quota));
    for (const pid of pids) writeFileSync(join(dir, "cgroup.procs"), String(pid));
    this.pods.set(pod, dir);
  }

  /** The Pod groups placed so far, in the order they were placed. */
  placed(): string[] {
    return [...this.pods.keys()];
  }

  /** The group's settings as the kernel holds them, and how often and how long its quota throttled it. */
  read(pod: string): { shares: number; quotaMilli: number | undefined; throttledPeriods: number; throttledMs: number } {
    const dir = this.pods.get(pod);
    if (!dir) throw new Error(`no cpu group ${pod}`);
    const period = Number(readFileSync(join(dir, "cpu.cfs_period_us"), "utf8"));
    const quota = Number(readFileSync(join(dir, "cpu.cfs_quota_us"), "utf8"));
    const stat = Object.fromEntries(
      readFileSync(join(dir, "cpu.stat"), "utf8")
        .trim()
        .split("\n")
        .map((l) => l.split(" ") as [string, string]),
    );
    return {
      shares: Number(readFileSync(join(dir, "cpu.shares"), "utf8")),
      quotaMilli: quota < 0 ? undefined : (quota * 1000) / period,
      throttledPeriods: Number(stat["nr_throttled"] ?? 0),
      throttledMs: Number(stat["throttled_time"] ?? 0) / 1e6,
    };
  }

  /** Moves whatever still runs in the groups back to the root group and removes them. */
  remove(): void {
    const mount = join(this.root, "..");
    for (const dir of [...this.pods.values(), join(this.root, "kubepods"), this.root]) {
      try {
        for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean))
          writeFileSync(join(mount, "cgroup.procs"), pid);
        rmdirSync(dir);
      } catch {
        // Already gone, or a process exited meanwhile: nothing to keep.
      }
    }
  }
}

/** A CPU request in millicores as cpu.shares, as the kubelet converts it (at least 2). */
export function sharesOf(milli: number): number {
  return Math.max(2, Math.floor((milli * 1024) / 1000));
}

/** A Kubernetes CPU quantity ("500m", "1", "0.5") in millicores. */
export function milliOf(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(quantity);
  if (!m) throw new Error(`not a CPU quantity: ${quantity}`);
  return m[2] === "m" ? Number(m[1]) : Number(m[1]) * 1000;
}
