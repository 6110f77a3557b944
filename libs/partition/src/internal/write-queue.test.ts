import { describe, expect, it } from "vitest";
import { WriteQueue } from "./write-queue.js";

/** A write whose outcome the test decides. */
function controllable() {
  const started: number[] = [];
  const finish = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  const start = (item: number) => {
    started.push(item);
    return new Promise<void>((resolve, reject) => finish.set(item, { resolve, reject }));
  };
  return { started, finish, start };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("WriteQueue", () => {
  it("starts at most `limit` writes, the rest in the order pushed as slots free up", async () => {
    const { started, finish, start } = controllable();
    const queue = new WriteQueue<number>(2, start);
    for (const item of [1, 2, 3, 4, 5]) queue.push(item);
    expect(started).toEqual([1, 2]);
    expect([queue.inFlight, queue.queued]).toEqual([2, 3]);

    finish.get(2)!.resolve();
    await turn();
    expect(started).toEqual([1, 2, 3]);

    // A failed write frees its slot like a successful one.
    finish.get(1)!.reject(new Error("timeout"));
    finish.get(3)!.resolve();
    await turn();
    expect(started).toEqual([1, 2, 3, 4, 5]);
    expect([queue.inFlight, queue.queued]).toEqual([2, 0]);

    finish.get(4)!.resolve();
    finish.get(5)!.resolve();
    await turn();
    expect([queue.inFlight, queue.queued]).toEqual([0, 0]);
  });

  it("starts a write pushed into a free slot at once", () => {
    const { started, start } = controllable();
    const queue = new WriteQueue<number>(8, start);
    queue.push(7);
    expect(started).toEqual([7]);
  });

  it("refuses a limit below one", () => {
    expect(() => new WriteQueue<number>(0, () => Promise.resolve())).toThrow(RangeError);
  });
});
