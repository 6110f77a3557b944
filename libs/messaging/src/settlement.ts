import { backoffDelay, normalizeError } from "@tenantplane/runtime";

/** What to tell JetStream about one message. */
export type Settlement =
  | { readonly outcome: "ack" }
  | { readonly outcome: "nak"; readonly delayMs: number; readonly reason: string; readonly waiting: boolean }
  | { readonly outcome: "term"; readonly reason: string };

/**
 * How many deliveries an error nobody classified (code `Unknown`) gets before its
 * message is termed: retrying an unknown bug forever would hide it, and the watcher's
 * periodic resync brings a fresh message for the tenant anyway.
 */
export const UNCLASSIFIED_RETRY_LIMIT = 20;

/**
 * The one place that maps a handler's result to ack / nak(delay) / term:
 * success acks; a transient error naks after its own retryAfterMs, or with
 * jittered backoff growing with the delivery count; a terminal error terms, because
 * redelivery cannot help, and so does an unclassified error after UNCLASSIFIED_RETRY_LIMIT deliveries.
 */
export function settlementFor(error: unknown, deliveryCount: number): Settlement {
  if (error === undefined) return { outcome: "ack" };
  const err = normalizeError(error);
  if (err.transient && err.code === "Unknown" && deliveryCount >= UNCLASSIFIED_RETRY_LIMIT) {
    return {
      outcome: "term",
      reason: `${err.code}: ${err.message} (still failing after ${deliveryCount} deliveries; the next change or resync retries)`,
    };
  }
  if (err.transient) {
    // Waiting for something known (a pod, an address) polls at the pace it names;
    // failures back off exponentially.
    const waiting = err.retryAfterMs !== undefined;
    const delayMs = waiting
      ? waitingDelay(err.retryAfterMs!, deliveryCount)
      : backoffDelay(deliveryCount - 1, 500, 60_000);
    return { outcome: "nak", delayMs, reason: err.message, waiting };
  }
  return { outcome: "term", reason: `${err.code}: ${err.message}` };
}

// A wait polls at the pace it asked for during its first deliveries, then slows
// down (doubling every ten deliveries, at most a minute), so a tenant that never
// becomes ready costs little.
function waitingDelay(retryAfterMs: number, deliveryCount: number): number {
  return Math.min(60_000, retryAfterMs * 2 ** Math.floor((deliveryCount - 1) / 10));
}
