import { describe, expect, it } from "vitest";
import { forEachBounded } from "./bounded.js";

describe("forEachBounded", () => {
  it("never runs more than the limit at once, starts items in order, and runs every one", async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await forEachBounded([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      started.push(n);
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5 + (n % 3)));
      running--;
    });
    expect(most).toBe(3);
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("goes on past an item that fails", async () => {
    const done: number[] = [];
    await forEachBounded([1, 2, 3], 1, async (n) => {
      if (n === 2) throw new Error("refused");
      done.push(n);
    });
    expect(done).toEqual([1, 3]);
  });

  it("treats a limit below one as one", async () => {
    const done: number[] = [];
    await forEachBounded([1, 2], 0, async (n) => {
      done.push(n);
    });
    expect(done).toEqual([1, 2]);
  });
});
