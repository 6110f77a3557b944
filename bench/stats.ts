/** Helpers the benches share: a bounded job pool and how figures are summarised. */

/** Runs `jobs` with at most `width` in flight. */
export async function pool(jobs: (() => Promise<unknown>)[], width: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}

/** The p-th percentile (nearest rank) of `values`; NaN when empty. */
export function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export function ms(value: number): string {
  return `${value.toFixed(0)} ms`;
}

/**
 * The q-quantile (0-1) of a Prometheus histogram in `metricsText` (the exposition format),
 * over the series whose labels include `labels`: linear within the bucket it falls in, as
 * PromQL's histogram_quantile does. NaN when the histogram holds no observations.
 */
export function histogramQuantile(
  metricsText: string,
  name: string,
  labels: Record<string, string>,
  q: number,
): number {
  const buckets = new Map<number, number>();
  for (const line of metricsText.split("\n")) {
    const m = new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (!m) continue;
    const pairs = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((p) => [p[1]!, p[2]!]));
    if (!Object.entries(labels).every(([k, v]) => pairs[k] === v)) continue;
    const le = pairs["le"] === "+Inf" ? Infinity : Number(pairs["le"]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]));
  }
  const sorted = [...buckets.entries()].sort((a, b) => a[0] - b[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [le, count] of sorted) {
    if (count >= rank) {
      // Past the last finite bucket nothing says where: report that bound, as PromQL does.
      if (le === Infinity) return lowerBound;
      return lowerBound + (le - lowerBound) * ((rank - lowerCount) / Math.max(1, count - lowerCount));
    }
    lowerBound = le;
    lowerCount = count;
  }
  return lowerBound;
}
