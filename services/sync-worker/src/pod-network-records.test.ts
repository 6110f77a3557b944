import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PodNetworkRecords, type PodNetworkDeps } from "./pod-network-records.js";

// Each pass starts by asking for the pod environment; "unknown" ends it there, so the count of
// those calls is the count of passes.
function records(): { records: PodNetworkRecords; passes: () => number } {
  let passes = 0;
  const deps = {
    tenant: "a",
    environment: () => {
      passes++;
      return "unknown";
    },
  } as unknown as PodNetworkDeps;
  return { records: new PodNetworkRecords(deps, 200, 2_000), passes: () => passes };
}

describe("PodNetworkRecords pacing", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("writes a lone change after the debounce, and a stream of changes at most every interval", async () => {
    const { records: r, passes } = records();
    r.schedule();
    r.schedule();
    await vi.advanceTimersByTimeAsync(200);
    expect(passes()).toBe(1);

    // Changes keep coming: the next pass waits for the interval since the last one started.
    for (let t = 0; t < 1_700; t += 100) {
      r.schedule();
      await vi.advanceTimersByTimeAsync(100);
    }
    // The first pass started at 200 ms; it is 1,900 ms now.
    await vi.advanceTimersByTimeAsync(299);
    expect(passes()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes()).toBe(2);

    // After a quiet spell a change is written after the debounce again.
    await vi.advanceTimersByTimeAsync(5_000);
    r.schedule();
    await vi.advanceTimersByTimeAsync(199);
    expect(passes()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes()).toBe(3);
    r.stop();
  });
});
