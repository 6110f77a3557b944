import { describe, expect, it } from "vitest";
import { LocalWork } from "./consumer.js";

describe("LocalWork", () => {
  it("holds work fired before the consumer runs and hands it over in order", () => {
    const work = new LocalWork<string>();
    work.fire("a");
    work.fire("b");
    const seen: string[] = [];
    work.attach((m) => seen.push(m));
    work.fire("c");
    expect(seen).toEqual(["a", "b", "c"]);
  });
});
