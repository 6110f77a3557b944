/** Helpers the benches share: a bounded job pool and how figures are summarised. */
import { interpolatedQuantile, readHistograms, sumHistograms } from "./histograms.js";

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
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const series = [...readHistograms(metricsText, name)].filter(([key]) =>
    wanted.every((w) => key.split(",").includes(w)),
  );
  return interpolatedQuantile(sumHistograms(series.map(([, h]) => h)), q);
}
