import { JetStreamApiError } from "@nats-io/jetstream";
import { backoffDelay, sleep } from "@tenantplane/runtime";

/**
 * True for what a JetStream that is still forming (a new cluster electing its meta leader, a
 * stream's replicas being placed on a loaded machine) answers: no answer in time, no responders,
 * or "temporarily unavailable". Worth asking again; anything else (a refused configuration, a
 * permission) is not.
 */
export function isJetStreamUnavailable(err: unknown): boolean {
  if (err instanceof JetStreamApiError) return err.status === 503;
  if (!(err instanceof Error)) return false;
  return err.name === "TimeoutError" || err.name === "NoResponders" || err.name === "JetStreamNotEnabled";
}

/** Options of {@link whenJetStreamAnswers}. */
export interface JetStreamWaitOptions {
  /** Told before each wait, so a service that is not ready yet says why. */
  onRetry: (err: unknown, attempt: number, delayMs: number) => void;
  /** Stops waiting (the service is shutting down); the last error is thrown. */
  signal?: AbortSignal;
  /** Backoff bounds; default 250 ms doubling up to 5 s. */
  baseMs?: number;
  maxMs?: number;
}

/**
 * Runs `task` (idempotent: a declaration of streams and consumers) until it succeeds, waiting
 * with backoff while JetStream is unavailable ({@link isJetStreamUnavailable}); any other error
 * is thrown at once. A service that starts before its NATS cluster has a leader waits for it
 * instead of exiting.
 */
export async function whenJetStreamAnswers<T>(task: () => Promise<T>, options: JetStreamWaitOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await task();
    } catch (err) {
      if (!isJetStreamUnavailable(err) || options.signal?.aborted) throw err;
      const delayMs = backoffDelay(attempt, options.baseMs ?? 250, options.maxMs ?? 5_000);
      options.onRetry(err, attempt + 1, delayMs);
      await sleep(delayMs, options.signal).catch(() => undefined);
      if (options.signal?.aborted) throw err;
    }
  }
}
