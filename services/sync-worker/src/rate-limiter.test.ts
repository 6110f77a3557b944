import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limiter.js";

describe("RateLimiter", () => {
  it("allows a burst, then one token per 1/rate seconds", () => {
    let now = 0;
    const limiter = new RateLimiter(10, 3, () => now);
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(limiter.waitMs()).toBe(100);
    now = 100;
    expect(limiter.tryTake()).toBe(true);
    now = 10_000;
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  it("refuses a nonsensical configuration", () => {
    expect(() => new RateLimiter(0, 1)).toThrow(RangeError);
    expect(() => new RateLimiter(1, 0)).toThrow(RangeError);
  });
});
