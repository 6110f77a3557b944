import { describe, expect, it } from "vitest";
import { FairQueue } from "./fair-queue.js";

describe("FairQueue", () => {
  it("serves tenants in turn, so a tenant with many keys does not starve one with few", () => {
    const q = new FairQueue(100);
    for (let i = 0; i < 1000; i++) q.add("big", `k${i}`);
    q.add("small", "a");
    q.add("small", "b");
    const order = [q.take(), q.take(), q.take(), q.take()].map((item) => item?.tenant);
    expect(order).toEqual(["big", "small", "big", "small"]);
  });

  it("queues a key once and never hands it out twice at a time", () => {
    const q = new FairQueue();
    q.add("t", "k");
    q.add("t", "k");
    expect(q.depth("t")).toBe(1);
    const first = q.take();
    expect(first?.key).toBe("k");
    q.add("t", "k");
    expect(q.take()).toBeUndefined();
    q.done("t", "k");
    expect(q.take()?.key).toBe("k");
  });

  it("passes over a tenant at its active limit or not eligible", () => {
    const q = new FairQueue(1);
    q.add("a", "1");
    q.add("a", "2");
    q.add("b", "1");
    expect(q.take()?.tenant).toBe("a");
    expect(q.take()?.tenant).toBe("b");
    expect(q.take()).toBeUndefined();
    q.done("a", "1");
    expect(q.take((t) => t !== "a")).toBeUndefined();
    expect(q.take()?.key).toBe("2");
  });

  it("keeps the time a key was first queued until it is taken", () => {
    let now = 1000;
    const q = new FairQueue(2, () => now);
    q.add("t", "k");
    now = 2000;
    q.add("t", "k");
    expect(q.take()?.since).toBe(1000);
  });

  it("forgets a dropped tenant, and a done after drop is harmless", () => {
    const q = new FairQueue();
    q.add("t", "k");
    q.add("t", "j");
    q.take();
    q.drop("t");
    q.done("t", "k");
    expect(q.depth("t")).toBe(0);
    expect(q.take()).toBeUndefined();
    expect(q.tenants()).toEqual([]);
  });
});
