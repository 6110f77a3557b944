import { RequestBudget } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { admitSkip } from "./paced-skip.js";
import { SkipMemory } from "./skip-memory.js";

/** A tenant's write budget on a fake clock that advances only while someone waits for a token. */
function fakeBudget(perSecond: number, burst: number) {
  let now = 0;
  const budget = new RequestBudget(
    perSecond,
    burst,
    () => now,
    async (ms) => {
      now += ms;
    },
  );
  return { budget, elapsedMs: () => now };
}

describe("admitSkip", () => {
  it("paces a flood of Skips by the tenant's write budget, like writes", async () => {
    const { budget, elapsedMs } = fakeBudget(100, 200);
    const skips = new SkipMemory();
    const gate = { writeToken: () => budget.wait(), mayWrite: () => true };
    let admitted = 0;
    for (let i = 0; i < 1_200; i++) {
      if (await admitSkip(skips, `Pod/ns/p${i}`, "1", "refused", gate)) admitted++;
    }
    expect(admitted).toBe(1_200);
    // The burst of 200 goes at once; the other 1,000 at 100 a second.
    expect(elapsedMs()).toBeGreaterThanOrEqual(9_900);
    expect(elapsedMs()).toBeLessThan(10_500);
  });

  it("costs nothing for a Skip already published for the same version and reason", async () => {
    let tokens = 0;
    const skips = new SkipMemory();
    const gate = { writeToken: async () => void tokens++, mayWrite: () => true };
    expect(await admitSkip(skips, "Pod/ns/p", "1", "refused", gate)).toBe(true);
    for (let i = 0; i < 100; i++) expect(await admitSkip(skips, "Pod/ns/p", "1", "refused", gate)).toBe(false);
    expect(tokens).toBe(1);
    expect(await admitSkip(skips, "Pod/ns/p", "2", "refused", gate)).toBe(true);
    expect(tokens).toBe(2);
  });

  it("gives up a Skip when the lease is lost during the wait, and keeps it news", async () => {
    const skips = new SkipMemory();
    let owner = false;
    const gate = { writeToken: async () => undefined, mayWrite: () => owner };
    expect(await admitSkip(skips, "Pod/ns/p", "1", "refused", gate)).toBe(false);
    owner = true;
    expect(await admitSkip(skips, "Pod/ns/p", "1", "refused", gate)).toBe(true);
  });
});
