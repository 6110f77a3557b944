import { describe, expect, it } from "vitest";
import { SharedWrites } from "./shared-writes.js";

function counter(): { write: () => Promise<void>; calls: () => number; finish: () => void; fail: () => void } {
  let calls = 0;
  let settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
  return {
    write: () => {
      calls++;
      return new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    },
    calls: () => calls,
    finish: () => settle?.resolve(),
    fail: () => settle?.reject(new Error("refused")),
  };
}

describe("SharedWrites", () => {
  it("sends one write for callers that ask while it is in flight, and all of them see its end", async () => {
    const writes = new SharedWrites(30_000);
    const c = counter();
    const asked = [writes.run("node-0", c.write), writes.run("node-0", c.write), writes.run("node-0", c.write)];
    expect(c.calls()).toBe(1);
    c.finish();
    await Promise.all(asked);
  });

  it("keeps other keys apart", () => {
    const writes = new SharedWrites(30_000);
    const c = counter();
    void writes.run("node-0", c.write);
    void writes.run("node-1", c.write);
    expect(c.calls()).toBe(2);
  });

  it("remembers a finished write until the cache shows it, then writes again when asked", async () => {
    const writes = new SharedWrites(30_000);
    const c = counter();
    const first = writes.run("node-0", c.write);
    c.finish();
    await first;
    await writes.run("node-0", c.write);
    expect(c.calls()).toBe(1);
    writes.seen("node-0");
    void writes.run("node-0", c.write);
    expect(c.calls()).toBe(2);
  });

  it("forgets a finished write after its memory, though the cache never showed it", async () => {
    let now = 0;
    const writes = new SharedWrites(30_000, () => now);
    const c = counter();
    const first = writes.run("node-0", c.write);
    c.finish();
    await first;
    now = 29_999;
    await writes.run("node-0", c.write);
    expect(c.calls()).toBe(1);
    now = 30_000;
    void writes.run("node-0", c.write);
    expect(c.calls()).toBe(2);
  });

  it("forgets a failed write at once: every caller gets the error and the next one writes again", async () => {
    const writes = new SharedWrites(30_000);
    const c = counter();
    const asked = [writes.run("node-0", c.write), writes.run("node-0", c.write)];
    c.fail();
    for (const p of asked) await expect(p).rejects.toThrow("refused");
    void writes.run("node-0", c.write);
    expect(c.calls()).toBe(2);
  });
});
