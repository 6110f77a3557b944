import { describe, expect, it } from "vitest";
import { resolveTimings } from "./timings.js";

describe("resolveTimings", () => {
  it("derives renewal every TTL/3, a TTL/6 fence margin and a quarter-interval retry", () => {
    expect(resolveTimings({ ttlMs: 6_000 })).toEqual({
      ttlMs: 6_000,
      renewIntervalMs: 2_000,
      fenceMarginMs: 1_000,
      retryIntervalMs: 500,
    });
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
