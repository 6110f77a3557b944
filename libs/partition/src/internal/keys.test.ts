import { describe, expect, it } from "vitest";
import { encodeRecord, parseKey, workerOf } from "./keys.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("parseKey", () => {
  it("reads member and partition keys", () => {
    expect(parseKey("m.worker-1", 16)).toEqual({ kind: "member", worker: "worker-1" });
    expect(parseKey("p.0", 16)).toEqual({ kind: "partition", partition: 0 });
    expect(parseKey("p.15", 16)).toEqual({ kind: "partition", partition: 15 });
  });

  it.each(["p.16", "p.01", "p.-1", "p.1.2", "p.", "p.x", "m.", "m.a.b", "x.1", "p.1e1"])(
    "treats %j as a key it did not write",
    (key) => {
      expect(parseKey(key, 16)).toEqual({ kind: "other" });
    },
  );
});

describe("workerOf", () => {
  it("reads the worker of a lease record and nothing else", () => {
    expect(workerOf(bytes(encodeRecord("w-1")))).toBe("w-1");
    expect(workerOf(bytes("not json"))).toBeUndefined();
    expect(workerOf(bytes('{"owner":"w-1"}'))).toBeUndefined();
    expect(workerOf(bytes("null"))).toBeUndefined();
  });
});
