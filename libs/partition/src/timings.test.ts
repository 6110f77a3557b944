import { describe, expect, it } from "vitest";
import { resolveTimings } from "./timings.js";

describe("resolveTimings", () => {
  it("derives renewal every TTL/2, a TTL/6 fence margin and a quarter-interval retry", () => {
    const timings = resolveTimings({ ttlMs: 6_000 });
    expect(timings).toEqual({
      ttlMs: 6_000,
      renewIntervalMs: 3_000,
      fenceMarginMs: 1_000,
      retryIntervalMs: 750,
    });
    // A failed renewal is retried twice before the lease fences.
    const retriesBeforeFence = Math.floor(
      (timings.ttlMs - timings.fenceMarginMs - timings.renewIntervalMs - 1) / timings.retryIntervalMs,
    );
    expect(retriesBeforeFence).toBe(2);
  });

  it("never fences less than 250 ms early", () => {
    expect(resolveTimings({ ttlMs: 1_000 }).fenceMarginMs).toBe(250);
  });

  it.each([
    [{ ttlMs: 999 }, /at least 1000/],
    [{ ttlMs: 3_000, fenceMarginMs: 3_000 }, /fenceMarginMs/],
    [{ ttlMs: 3_000, renewIntervalMs: 2_500 }, /would fence before its first renewal/],
    [{ ttlMs: 3_000, renewIntervalMs: 0 }, /renewIntervalMs/],
  ])("refuses %j", (partial, message) => {
    expect(() => resolveTimings(partial)).toThrow(message);
  });
});
