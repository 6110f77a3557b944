import { describe, expect, it } from "vitest";
import { RecentIds } from "./rate.js";

describe("RecentIds", () => {
  it("remembers the newest ids up to its size", () => {
    const ids = new RecentIds(2);
    ids.add("a");
    ids.add("b");
    ids.add("a");
    ids.add("c");
    expect([ids.has("a"), ids.has("b"), ids.has("c"), ids.size]).toEqual([true, false, true, 2]);
  });
});
