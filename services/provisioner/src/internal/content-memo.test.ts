import { describe, expect, it } from "vitest";
import { ContentMemo } from "./content-memo.js";

describe("ContentMemo", () => {
  it("computes once per distinct input and tells part boundaries apart", () => {
    const memo = new ContentMemo<string>(8);
    let calls = 0;
    const join = (parts: string[]) => memo.get(parts, () => `${++calls}:${parts.join("|")}`);
    expect(join(["ab", "c"])).toBe("1:ab|c");
    expect(join(["ab", "c"])).toBe("1:ab|c");
    expect(join(["a", "bc"])).toBe("2:a|bc");
    expect(calls).toBe(2);
  });

  it("does not remember a computation that threw", () => {
    const memo = new ContentMemo<number>(8);
    let calls = 0;
    const failing = () => {
      calls++;
      throw new Error("bad input");
    };
    expect(() => memo.get(["x"], failing)).toThrow("bad input");
    expect(() => memo.get(["x"], failing)).toThrow("bad input");
    expect(calls).toBe(2);
    expect(memo.size).toBe(0);
  });

  it("forgets the least recently used entry past its size", () => {
    const memo = new ContentMemo<number>(2);
    let calls = 0;
    const get = (key: string) => memo.get([key], () => ++calls);
    get("a");
    get("b");
    get("a"); // a is now the most recently used
    get("c"); // forgets b
    expect(memo.size).toBe(2);
    expect(get("a")).toBe(1);
    expect(get("b")).toBe(4);
  });
});
