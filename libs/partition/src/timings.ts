/** How long a lease lives and how its holder keeps it; all in milliseconds. */
export interface LeaseTimings {
  /** Bucket max age: a lease or membership key not renewed for this long is expired by the server. */
  readonly ttlMs: number;
  /** How often held leases and the membership key are rewritten. */
  readonly renewIntervalMs: number;
  /** A holder stops trusting a lease this long before the server could expire it (`ttlMs - fenceMarginMs` after the last successful renewal was sent). */
  readonly fenceMarginMs: number;
  /** Delay before retrying a round in which a renewal failed for a transient reason. */
  readonly retryIntervalMs: number;
}

/** The default lease lifetime: long enough to ride out a NATS restart, short enough to fail over well within 10 s. */
export const DEFAULT_TTL_MS = 6_000;

/**
 * Fills in the timings from a TTL: renew every TTL/2, fence TTL/6 early (never under 250 ms),
 * retry a failed round after a quarter of the renew interval, so a renewal that fails still has
 * two retries before the fence. Every renewal is one KV write per held partition and comes back
 * to every worker through the watch: renewing at TTL/3 cost an idle worker holding 128 partitions
 * about 4 MiB more resident memory in garbage, for a third retry nobody needed.
 * Throws a RangeError for combinations that cannot keep a lease.
 */
export function resolveTimings(partial: Partial<LeaseTimings> = {}): LeaseTimings {
  const ttlMs = partial.ttlMs ?? DEFAULT_TTL_MS;
  const renewIntervalMs = partial.renewIntervalMs ?? Math.round(ttlMs / 2);
  const fenceMarginMs = partial.fenceMarginMs ?? Math.max(250, Math.round(ttlMs / 6));
  const retryIntervalMs = partial.retryIntervalMs ?? Math.max(50, Math.round(renewIntervalMs / 4));
  // The server's delete-marker TTL and message TTLs have whole-second granularity.
  if (!Number.isInteger(ttlMs) || ttlMs < 1_000)
    throw new RangeError(`lease ttlMs must be at least 1000, got ${ttlMs}`);
  if (fenceMarginMs <= 0 || fenceMarginMs >= ttlMs) {
    throw new RangeError(`fenceMarginMs must be between 0 and ttlMs (${ttlMs}), got ${fenceMarginMs}`);
  }
  if (renewIntervalMs <= 0 || renewIntervalMs >= ttlMs - fenceMarginMs) {
    throw new RangeError(
      `renewIntervalMs (${renewIntervalMs}) must be positive and shorter than ttlMs - fenceMarginMs (${ttlMs - fenceMarginMs}), ` +
        `or a lease would fence before its first renewal`,
    );
  }
  if (retryIntervalMs <= 0) throw new RangeError(`retryIntervalMs must be positive, got ${retryIntervalMs}`);
  return { ttlMs, renewIntervalMs, fenceMarginMs, retryIntervalMs };
}
