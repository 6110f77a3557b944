import { describe, expect, it } from "vitest";
import { RecentIds, WaitingBucket } from "./rate.js";

describe("WaitingBucket", () => {
  it("grants the burst at once, then waits for refills instead of refusing", async () => {
    let now = 0;
    const slept: number[] = [];
    const bucket = new WaitingBucket(
      2,
      4,
      () => now,
      async (ms) => {
        slept.push(ms);
        now += ms;
      },
    );
    for (let i = 0; i < 4; i++) await bucket.acquire();
    expect(slept).toEqual([250, 250]);
  });
});

describe("RecentIds", () => {
  it("remembers the newest ids up to its size", () => {
    const ids = new RecentIds(2);
    ids.add("a");
    ids.add("b");
    ids.add("a");
    ids.add("c");
    expect([ids.has("a"), ids.has("b"), ids.has("c"), ids.size]).toEqual([true, false, true, 2]);
  });
});
