import { describe, expect, it } from "vitest";
import { SkipMemory } from "./skip-memory.js";

describe("SkipMemory", () => {
  it("publishes a Skip once per change of source version or reason", () => {
    const memory = new SkipMemory();
    expect(memory.shouldPublish("k", "1", "held by foreign object")).toBe(true);
    expect(memory.shouldPublish("k", "1", "held by foreign object")).toBe(false);
    expect(memory.shouldPublish("k", "2", "held by foreign object")).toBe(true);
    expect(memory.shouldPublish("k", "2", "held by tenant x/a/b")).toBe(true);
    expect(memory.shouldPublish("other", "2", "held by tenant x/a/b")).toBe(true);
  });

  it("publishes again after the source was synced in between", () => {
    const memory = new SkipMemory();
    memory.shouldPublish("k", "1", "r");
    memory.forget("k");
    expect(memory.shouldPublish("k", "1", "r")).toBe(true);
  });
});
