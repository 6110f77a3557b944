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
