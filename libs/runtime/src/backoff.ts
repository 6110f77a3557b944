/**
 * Full-jitter exponential backoff: a random delay in [base, min(max, base*2^attempt)],
 * so many retriers hitting the same server spread out instead of synchronising.
 */
export function backoffDelay(attempt: number, baseMs = 250, maxMs = 30_000, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.round(baseMs + random() * Math.max(0, ceiling - baseMs));
}

/** Resolves after `ms`, or early (without throwing) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
