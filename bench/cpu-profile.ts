// Where a process's CPU went, from a V8 CPU profile (the `.cpuprofile` JSON that --cpu-prof and
// the inspector's Profiler.stop produce): self and inclusive time per function, the busiest first.

/** The parts of a V8 CPU profile this reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  startTime: number;
  endTime: number;
  samples?: number[];
  /** Microseconds before each sample (the first from startTime). */
  timeDeltas?: number[];
}

/** One function's time: where it is defined, milliseconds, share of the busy (non-idle) time. */
export interface SelfTime {
  name: string;
  where: string;
  ms: number;
  share: number;
}

type Frame = CpuProfile["nodes"][number]["callFrame"];

/**
 * Self time per function over the whole profile, the `top` busiest first, and the busy total
 * (idle samples left out). A sample's time is the gap to the next sample (as Chrome's DevTools
 * counts it); functions of one name defined at one place are summed over their call sites.
 */
export function selfTimes(profile: CpuProfile, top = 10): { busyMs: number; rows: SelfTime[] } {
  return tally(profile, top, (stack) => stack.slice(0, 1));
}

/**
 * Inclusive time per function: a busy sample counts once for every distinct function on its
 * stack, so a caller carries the cost of what it calls (self time alone hides a hot caller whose
 * work is spread over many small callees).
 */
export function totalTimes(profile: CpuProfile, top = 10): { busyMs: number; rows: SelfTime[] } {
  return tally(profile, top, (stack) => stack.filter((f) => f.functionName !== "(root)" && (f.url || f.functionName)));
}

/** Sums each busy sample's time over the frames `pick` chooses from its stack (leaf first). */
function tally(
  profile: CpuProfile,
  top: number,
  pick: (stack: Frame[]) => Frame[],
): { busyMs: number; rows: SelfTime[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const perKey = new Map<string, SelfTime>();
  let busyUs = 0;
  for (const [i, id] of samples.entries()) {
    const leaf = byId.get(id)?.callFrame;
    if (!leaf || leaf.functionName === "(idle)") continue;
    // The last sample runs until the profile's end.
    const us = i + 1 < deltas.length ? deltas[i + 1]! : Math.max(0, profile.endTime - sampleTime(profile, i));
    busyUs += us;
    const stack: Frame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame) stack.push(frame);
    }
    const counted = new Set<string>();
    for (const frame of pick(stack)) {
      const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : "";
      const name = frame.functionName || "(anonymous)";
      const key = `${name}\u0000${where}`;
      // A recursive function is on the stack more than once but spent the time once.
      if (counted.has(key)) continue;
      counted.add(key);
      const row = perKey.get(key) ?? { name, where, ms: 0, share: 0 };
      row.ms += us / 1000;
      perKey.set(key, row);
    }
  }
  const busyMs = busyUs / 1000;
  const rows = [...perKey.values()]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, top)
    .map((r) => ({ ...r, share: busyMs > 0 ? r.ms / busyMs : 0 }));
  return { busyMs, rows };
}

/** One stretch of consecutive busy samples: the event loop held that long. */
export interface LongTask {
  ms: number;
  /** Its busiest functions by self time within the stretch. */
  rows: SelfTime[];
}

/**
 * The `top` longest stretches of consecutive busy samples (no idle sample between them), each
 * with its busiest functions (by self time, or by inclusive time with `inclusive`): what held
 * the event loop, which self time summed over the whole profile does not show.
 */
export function longestTasks(profile: CpuProfile, top = 3, inclusive = false): LongTask[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const tasks: { ms: number; ids: number[]; times: number[] }[] = [];
  let current: { ms: number; ids: number[]; times: number[] } | undefined;
  for (const [i, id] of samples.entries()) {
    const idle = byId.get(id)?.callFrame.functionName === "(idle)";
    const us = i + 1 < deltas.length ? deltas[i + 1]! : 0;
    if (idle) {
      if (current) tasks.push(current);
      current = undefined;
      continue;
    }
    current ??= { ms: 0, ids: [], times: [] };
    current.ms += us / 1000;
    current.ids.push(id);
    current.times.push(us);
  }
  if (current) tasks.push(current);
  return tasks
    .sort((a, b) => b.ms - a.ms)
    .slice(0, top)
    .map((t) => {
      // A profile of just this stretch: its samples, each with the time it took.
      const stretch: CpuProfile = {
        ...profile,
        samples: t.ids,
        timeDeltas: [0, ...t.times],
        endTime: profile.startTime,
      };
      // Inclusive time names the caller that ran the stretch, not only the leaf it ended in.
      return { ms: t.ms, rows: (inclusive ? totalTimes(stretch, 8) : selfTimes(stretch, 4)).rows };
    });
}

/** Lines for a report: `  12.3%   456 ms  name  where`. */
export function formatSelfTimes(result: { busyMs: number; rows: SelfTime[] }, indent = "    "): string[] {
  return result.rows.map(
    (r) =>
      `${indent}${(r.share * 100).toFixed(1).padStart(5)}% ${r.ms.toFixed(0).padStart(6)} ms  ${r.name}${r.where ? `  ${r.where}` : ""}`,
  );
}

function sampleTime(profile: CpuProfile, index: number): number {
  let t = profile.startTime;
  for (let i = 0; i <= index; i++) t += profile.timeDeltas?.[i] ?? 0;
  return t;
}

// Paths from the repository or a package down: file:///work/main/services/x/dist/... -> services/x/dist/...
function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, "");
  const m = /(?:.*\/node_modules\/|.*\/(?=(?:services|libs)\/))(.*)$/.exec(path);
  return m?.[1] ?? path;
}
