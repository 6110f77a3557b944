import { describe, expect, it } from "vitest";
import { TurnBatch } from "./turn-batch.js";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("TurnBatch", () => {
  it("runs what one turn queued together at its end, in order, and the next turn's apart", async () => {
    const runs: string[][] = [];
    let current: string[] = [];
    const batch = new TurnBatch();
    const send = (name: string) => () => current.push(name);
    batch.add(send("a"));
    await Promise.resolve();
    batch.add(send("b"));
    expect(current).toEqual([]);
    await turn();
    runs.push(current);
    current = [];
    batch.add(send("c"));
    await turn();
    runs.push(current);
    expect(runs).toEqual([["a", "b"], ["c"]]);
  });

  it("flush runs what is queued at once, and nothing twice", async () => {
    const sent: number[] = [];
    const batch = new TurnBatch();
    batch.add(() => sent.push(1));
    batch.flush();
    expect(sent).toEqual([1]);
    await turn();
    expect(sent).toEqual([1]);
  });
});
