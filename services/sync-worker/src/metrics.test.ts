import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createSyncMetrics } from "./metrics.js";

describe("tenantplane_sync_event_loop_delay_seconds", () => {
  it("shows a stall of the event loop at its length, and only in the scrape interval it happened in", async () => {
    const registry = new Registry();
    createSyncMetrics(registry, () => new Map());
    const read = async () => {
      const text = await registry.metrics();
      const max = /tenantplane_sync_event_loop_delay_seconds\{quantile="1"\} ([0-9.e-]+)/.exec(text);
      return Number(max?.[1] ?? Number.NaN);
    };
    await new Promise((r) => setTimeout(r, 50));
    await read();
    // The monitor's first sample after a reset only starts its clock.
    await new Promise((r) => setTimeout(r, 30));
    const until = performance.now() + 150;
    while (performance.now() < until); // a synchronous slice of 150 ms
    await new Promise((r) => setTimeout(r, 50));
    expect(await read()).toBeGreaterThanOrEqual(0.1);
    await new Promise((r) => setTimeout(r, 100));
    expect(await read()).toBeLessThan(0.1);
  });
});
