import { describe, expect, it } from "vitest";
import { onAbort } from "./abort.js";

describe("onAbort", () => {
  it("calls back once on abort, at once when already aborted, and not after removal", () => {
    const calls: string[] = [];
    const later = new AbortController();
    onAbort(later.signal, () => calls.push("later"));
    const removed = new AbortController();
    onAbort(removed.signal, () => calls.push("removed"))();
    const done = new AbortController();
    done.abort();
    onAbort(done.signal, () => calls.push("already"));
    expect(calls).toEqual(["already"]);
    later.abort();
    removed.abort();
    later.abort();
    expect(calls).toEqual(["already", "later"]);
  });
});
