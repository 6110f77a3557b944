import { describe, expect, it } from "vitest";
import { RequestBudget, TokenBucket } from "./token-bucket.js";

describe("TokenBucket", () => {
  it("allows a burst, then refills at the given rate", () => {
    let now = 0;
    const bucket = new TokenBucket(3, 2, () => now);
    expect([bucket.take(), bucket.take(), bucket.take(), bucket.take()]).toEqual([true, true, true, false]);
    now += 500;
    expect(bucket.take()).toBe(true);
    expect(bucket.take()).toBe(false);
    now += 10_000;
    expect([bucket.take(), bucket.take(), bucket.take(), bucket.take()]).toEqual([true, true, true, false]);
  });

  it("says when its next token is due", () => {
    let now = 0;
    const bucket = new TokenBucket(1, 10, () => now);
    expect(bucket.waitMs()).toBe(0);
    bucket.take();
    expect(bucket.waitMs()).toBe(100);
    now = 60;
    expect(bucket.waitMs()).toBe(40);
  });
});

describe("TokenBucket costs", () => {
  it("takes a cost of many tokens at once, and one above the burst from a full bucket", () => {
    let now = 0;
    const bucket = new TokenBucket(1000, 1000, () => now);
    expect(bucket.take(600)).toBe(true);
    expect(bucket.take(600)).toBe(false);
    expect(bucket.waitMs(600)).toBe(200);
    now = 200;
    expect(bucket.take(600)).toBe(true);
    // 5000 can never fit: it waits for a full bucket (1 s from empty) and takes all of it.
    expect(bucket.waitMs(5000)).toBe(1000);
    now = 1200;
    expect(bucket.take(5000)).toBe(true);
    expect(bucket.take(1)).toBe(false);
  });

  it("lets a budget's waiters spend bytes in arrival order", async () => {
    let now = 0;
    const slept: number[] = [];
    const budget = new RequestBudget(
      1000,
      1000,
      () => now,
      async (ms) => {
        slept.push(ms);
        now += ms;
      },
    );
    const order: string[] = [];
    await Promise.all([
      budget.wait(800).then(() => order.push(`big at ${now}`)),
      budget.wait(100).then(() => order.push(`small at ${now}`)),
      budget.wait(900).then(() => order.push(`next at ${now}`)),
    ]);
    expect(order).toEqual(["big at 0", "small at 0", "next at 800"]);
    expect(slept).toEqual([800]);
  });
});

describe("RequestBudget", () => {
  it("lets a burst go at once, then one request per 1/perSecond, in arrival order", async () => {
    const budget = new RequestBudget(20, 2);
    const started = performance.now();
    const order: number[] = [];
    const at: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        budget.wait().then(() => {
          order.push(i);
          at.push(performance.now() - started);
        }),
      ),
    );
    expect(order).toEqual([0, 1, 2, 3, 4]);
    // Two at once, then three more 50 ms apart: at least 150 ms for the last (timers never fire early).
    expect(at[1]!).toBeLessThan(50);
    expect(at[4]!).toBeGreaterThanOrEqual(145);
  });

  it("refuses a budget that could never let a request go", () => {
    expect(() => new RequestBudget(0, 1)).toThrow(RangeError);
    expect(() => new RequestBudget(1, 0)).toThrow(RangeError);
  });
});

describe("RequestBudget waiting", () => {
  it("grants the burst at once, then waits for refills instead of refusing", async () => {
    let now = 0;
    const slept: number[] = [];
    const bucket = new RequestBudget(
      4,
      2,
      () => now,
      async (ms) => {
        slept.push(ms);
        now += ms;
      },
    );
    for (let i = 0; i < 4; i++) await bucket.wait();
    expect(slept).toEqual([250, 250]);
  });
});

describe("RequestBudget queue", () => {
  it("serves waiters in arrival order with one sleeper at a time", async () => {
    let now = 0;
    let sleepers = 0;
    let most = 0;
    const bucket = new RequestBudget(
      10,
      1,
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
    await Promise.all(Array.from({ length: 20 }, (_, i) => bucket.wait().then(() => order.push(i))));
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(1);
    // 1 at once, then 19 refills of 100 ms each.
    expect(now).toBe(1_900);
  });
});

describe("RequestBudget.holdingBackMs", () => {
  it("counts from the first request that had to sleep until one goes at once or the requests pause", async () => {
    let now = 0;
    const budget = new RequestBudget(
      1000,
      1000,
      () => now,
      async (ms) => {
        now += ms;
      },
    );
    await budget.wait(1000);
    expect(budget.holdingBackMs()).toBe(0);
    // Two more full seconds' worth: each sleeps a second, the run began with the first sleep.
    await budget.wait(1000);
    await budget.wait(1000);
    expect(now).toBe(2000);
    expect(budget.holdingBackMs()).toBe(2000);
    // A short gap between paced writes does not end the run.
    now += 500;
    expect(budget.holdingBackMs()).toBe(2500);
    await budget.wait(1000);
    expect(budget.holdingBackMs()).toBe(3000);
    // Nothing asked for over a second: not holding anything back.
    now += 1001;
    expect(budget.holdingBackMs()).toBe(0);
    // The next one to sleep after that pause starts a new run.
    await budget.wait(1000);
    await budget.wait(1000);
    expect(budget.holdingBackMs()).toBe(1000);
    // One that goes at once ends it.
    now += 900;
    await budget.wait(100);
    expect(budget.holdingBackMs()).toBe(0);
  });
});

describe("RequestBudget.backlogMs", () => {
  it("says how long the requests waiting now take to go", async () => {
    let now = 0;
    const wakes: (() => void)[] = [];
    const budget = new RequestBudget(
      1000,
      1000,
      () => now,
      (ms) =>
        new Promise<void>((resolve) =>
          wakes.push(() => {
            now += ms;
            resolve();
          }),
        ),
    );
    expect(budget.backlogMs()).toBe(0);
    const first = budget.wait(600);
    const second = budget.wait(900);
    const third = budget.wait(5000);
    await Promise.resolve();
    await new Promise((r) => setImmediate(r));
    // 600 went at once; 900 and a full bucket (5000 costs the burst) wait: 1900 short of 400 left.
    expect(budget.backlogMs()).toBe(1500);
    await first;
    wakes.shift()!();
    await second;
    expect(now).toBe(500);
    await new Promise((r) => setImmediate(r));
    expect(budget.backlogMs()).toBe(1000);
    wakes.shift()!();
    await third;
    expect(budget.backlogMs()).toBe(0);
  });
});
