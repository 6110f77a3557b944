import { describe, expect, it } from "vitest";
import { RecentIds, Slots, WaitingBucket } from "./rate.js";

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

describe("WaitingBucket queue", () => {
  it("serves waiters in arrival order with one sleeper at a time", async () => {
    let now = 0;
    let sleepers = 0;
    let most = 0;
    const bucket = new WaitingBucket(
      1,
      10,
      () => now,
      async (ms) => {
        sleepers++;
        most = Math.max(most, sleepers);
        await Promise.resolve();
        now += ms;
        sleepers--;
      },
    );
    const order: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => bucket.acquire().then(() => order.push(i))));
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(1);
    // 1 at once, then 19 refills of 100 ms each.
    expect(now).toBe(1_900);
  });
});

describe("Slots", () => {
  it("holds at most max at once and hands slots over in arrival order", async () => {
    const slots = new Slots(2);
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    const gates: (() => void)[] = [];
    const runs = Array.from({ length: 6 }, (_, i) =>
      slots.run(async () => {
        inside++;
        most = Math.max(most, inside);
        order.push(i);
        await new Promise<void>((r) => gates.push(r));
        inside--;
        return i;
      }),
    );
    for (let opened = 0; opened < 6; opened++) {
      await new Promise((r) => setTimeout(r, 1));
      gates.shift()!();
    }
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("frees the slot when the work throws", async () => {
    const slots = new Slots(1);
    await expect(slots.run(() => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect(await slots.run(async () => "next")).toBe("next");
  });
});
