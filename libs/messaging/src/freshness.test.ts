import { describe, expect, it } from "vitest";
import { Freshness } from "./freshness.js";

describe("Freshness", () => {
  it("supersedes older messages of a key once a newer one was seen", () => {
    const f = new Freshness();
    expect(f.observe("alpha", 3)).toBe(true);
    expect(f.observe("alpha", 7)).toBe(true);
    expect(f.observe("alpha", 3)).toBe(false);
    expect(f.observe("alpha", 7)).toBe(true);
  });

  it("tracks keys independently", () => {
    const f = new Freshness();
    f.observe("alpha", 10);
    expect(f.observe("beta", 2)).toBe(true);
  });
});
