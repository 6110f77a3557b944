import { describe, expect, it } from "vitest";
import { KeyedQueue } from "./keyed-queue.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("KeyedQueue", () => {
  it("runs one key serially, in order", async () => {
    const q = new KeyedQueue(4);
    const log: string[] = [];
    let active = 0;
    let maxActive = 0;
    const task = (id: string) => async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await tick();
      log.push(id);
      active--;
    };
    await Promise.all(["1", "2", "3"].map((id) => q.run("tenant-a", task(id))));
    expect(log).toEqual(["1", "2", "3"]);
    expect(maxActive).toBe(1);
    expect(q.size).toBe(0);
  });

  it("runs different keys concurrently up to the limit", async () => {
    const q = new KeyedQueue(2);
    let active = 0;
    let maxActive = 0;
    const task = async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await tick();
      active--;
    };
    await Promise.all(["a", "b", "c", "d", "e"].map((k) => q.run(k, task)));
    expect(maxActive).toBe(2);
  });

  it("keeps going after a failing task", async () => {
    const q = new KeyedQueue(1);
    const failed = q.run("k", async () => {
      throw new Error("boom");
    });
    await expect(failed).rejects.toThrow("boom");
    let ran = false;
    await q.run("k", async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });
});
