import { describe, expect, it } from "vitest";
import { backoffDelay, sleep } from "./backoff.js";

describe("backoffDelay", () => {
  it("stays within [base, min(max, base*2^attempt)]", () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      expect(backoffDelay(attempt, 100, 5000, () => 0)).toBe(100);
      expect(backoffDelay(attempt, 100, 5000, () => 1)).toBe(Math.min(5000, 100 * 2 ** attempt));
    }
  });
});

describe("sleep", () => {
  it("returns early when aborted", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = sleep(10_000, controller.signal);
    controller.abort();
    await pending;
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
