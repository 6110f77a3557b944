import type { CoreV1Event } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { AggregatedEvents, type EventPatch, type EventSink } from "./aggregated-events.js";

class MemoryWriter implements EventSink {
  readonly events = new Map<string, CoreV1Event>();
  writes = 0;
  failNext = 0;
  async create(namespace: string, event: CoreV1Event) {
    this.check();
    this.events.set(`${namespace}/${event.metadata!.name}`, { ...event });
  }
  async patch(namespace: string, name: string, patch: EventPatch) {
    this.check();
    const e = this.events.get(`${namespace}/${name}`);
    if (!e) throw Object.assign(new Error("gone"), { code: 404 });
    Object.assign(e, patch);
  }
  total(): number {
    return [...this.events.values()].reduce((n, e) => n + (e.count ?? 0), 0);
  }
  private check() {
    this.writes++;
    if (this.failNext > 0) {
      this.failNext--;
      throw Object.assign(new Error("admission webhook refused"), { code: 500 });
    }
  }
}

const tc = { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", name: "dev", uid: "u" };
const input = (message: string) => ({ regarding: tc, type: "Normal" as const, reason: "CreateConfigMap", message });
const options = {
  component: "tenantplane",
  instance: "r-1",
  clusterEventsNamespace: "events",
  burst: 100,
  perSecond: 100,
};

describe("AggregatedEvents", () => {
  it("folds repeats of one message into one Event's count", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, options);
    for (let i = 0; i < 5; i++) await events.record(input("same"));
    expect(writer.events.size).toBe(1);
    expect([...writer.events.values()][0]).toMatchObject({ count: 5, message: "same" });
  });

  it("combines many distinct messages instead of dropping any, even when rate-limited", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, burst: 3, perSecond: 20, similarLimit: 4 });
    await Promise.all(Array.from({ length: 60 }, (_, i) => events.record(input(`cm-${i}`))));
    expect(writer.total()).toBe(60);
    expect(writer.events.size).toBe(5);
    const combined = [...writer.events.values()].find((e) => e.message?.startsWith("(combined"));
    expect(combined?.count).toBe(56);
    // Every Decision that queued behind the rate limit rode on a shared write.
    expect(writer.writes).toBeLessThan(20);
  });

  it("rejects the Decisions of a failed write and counts them once when they come back", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, options);
    writer.failNext = 1;
    await expect(events.record(input("a"))).rejects.toThrow(/webhook/);
    await events.record(input("a"));
    expect(writer.total()).toBe(1);
  });

  it("starts a new Event when the old one expired", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, options);
    await events.record(input("a"));
    writer.events.clear();
    expect(await events.record(input("a"))).toBe("created");
    expect(writer.total()).toBe(1);
  });

  it("keeps its memory bounded", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, maxSeries: 3 });
    for (let i = 0; i < 20; i++) await events.record({ ...input("m"), regarding: { ...tc, name: `t-${i}` } });
    expect(events.size).toBeLessThanOrEqual(3);
  });

  it("keeps at most maxInFlight writes in flight over every object, dropping nothing", async () => {
    let inFlight = 0;
    let most = 0;
    const memory = new MemoryWriter();
    const slow: EventSink = {
      create: async (namespace, event) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 2));
        inFlight--;
        await memory.create(namespace, event);
      },
      patch: (namespace, name, patch) => memory.patch(namespace, name, patch),
    };
    const events = new AggregatedEvents(slow, { ...options, maxInFlight: 2 });
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        events.record({ ...input(`m-${i % 3}`), regarding: { ...tc, name: `t-${i % 10}` } }),
      ),
    );
    expect(most).toBe(2);
    expect(memory.total()).toBe(30);
  });

  it("past a drop budget leaves Events out instead of queueing them, except those riding on a queued write", async () => {
    let now = 0;
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, {
      ...options,
      burst: 2,
      perSecond: 1,
      overBudget: "drop",
      now: () => now,
    });
    expect(await events.record(input("a"))).toBe("created");
    expect(await events.record(input("b"))).toBe("created");
    expect(await events.record(input("c"))).toBe("dropped");
    now += 1_000;
    expect(await events.record(input("a"))).toBe("aggregated");
    expect(writer.total()).toBe(3);
  });

  it("bounds the writes over every object with a total budget", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, total: { burst: 3, perSecond: 0.001 } });
    const outcomes = [];
    for (let i = 0; i < 5; i++)
      outcomes.push(await events.record({ ...input("m"), regarding: { ...tc, name: `t-${i}` } }));
    expect(outcomes).toEqual(["created", "created", "created", "dropped", "dropped"]);
    expect(writer.events.size).toBe(3);
  });

  it("writes the component as source and reporting component", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, component: "tenantplane-sync-worker" });
    await events.record(input("a"));
    expect([...writer.events.values()][0]).toMatchObject({
      source: { component: "tenantplane-sync-worker" },
      reportingComponent: "tenantplane.io/tenantplane-sync-worker",
      reportingInstance: "r-1",
    });
  });
});

describe("AggregatedEvents routine series (tally)", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const only = (writer: MemoryWriter) => {
    expect(writer.events.size).toBe(1);
    return [...writer.events.values()][0]!;
  };

  it("writes the first record at once, as its own message, without a series", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, seriesIntervalMs: 60_000 });
    events.tally(input("created ConfigMap tp-dev/a-x-default-x-dev"));
    await events.flush();
    const event = only(writer);
    expect(event).toMatchObject({ count: 1, message: "created ConfigMap tp-dev/a-x-default-x-dev", type: "Normal" });
    expect(event.series).toBeUndefined();
  });

  it("counts a burst of distinct records in one Event per object, type and reason, with a series", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, seriesIntervalMs: 60_000 });
    for (let i = 0; i < 300; i++) events.tally(input(`created ConfigMap cm-${i}`));
    for (let i = 0; i < 7; i++) events.tally({ ...input(`created Pod p-${i}`), reason: "CreatePod" });
    await events.flush();
    const byReason = new Map([...writer.events.values()].map((e) => [e.reason, e]));
    expect(byReason.size).toBe(2);
    expect(byReason.get("CreateConfigMap")).toMatchObject({
      count: 300,
      series: { count: 300 },
      message: "latest of 300: created ConfigMap cm-299",
    });
    expect(byReason.get("CreatePod")).toMatchObject({ count: 7, series: { count: 7 } });
    // MicroTime: six fractional digits, as the API server parses it.
    expect(JSON.stringify(byReason.get("CreatePod")!.series!.lastObservedTime)).toMatch(/\.\d{6}Z"$/);
    // A burst recorded before the first write leaves rides on it: one write per series.
    expect(writer.writes).toBe(2);
  });

  it("writes a series at most once per interval, carrying every record since the last write", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, seriesIntervalMs: 150 });
    events.tally(input("m-0"));
    await sleep(20);
    expect(writer.writes).toBe(1);
    for (let i = 1; i <= 50; i++) events.tally(input(`m-${i}`));
    await sleep(50);
    // Still inside the interval: nothing written since the first record.
    expect(writer.writes).toBe(1);
    expect(only(writer).count).toBe(1);
    await sleep(200);
    expect(writer.writes).toBe(2);
    expect(only(writer)).toMatchObject({ count: 51, message: "latest of 51: m-50" });
  });

  it("keeps the records of failed writes and counts them once a write succeeds", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, seriesIntervalMs: 20 });
    writer.failNext = 3;
    for (let i = 0; i < 14; i++) events.tally(input(`m-${i}`));
    for (let i = 0; i < 100 && writer.total() < 14; i++) await sleep(10);
    expect(writer.total()).toBe(14);
    expect(only(writer).count).toBe(14);
  });

  it("starts a new Event when the series' Event expired, counting what was waiting", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, seriesIntervalMs: 60_000 });
    events.tally(input("a"));
    await events.flush();
    writer.events.clear();
    events.tally(input("b"));
    events.tally(input("c"));
    await events.flush();
    expect(only(writer)).toMatchObject({ count: 2, message: "latest of 2: c" });
  });

  it("keeps attention Events apart from the routine series of the same reason", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, seriesIntervalMs: 60_000 });
    for (let i = 0; i < 5; i++) events.tally(input(`cm-${i}`));
    await events.record({ ...input("held by a foreign object"), type: "Warning", reason: "SkipConfigMap" });
    await events.flush();
    const reasons = [...writer.events.values()].map((e) => `${e.reason} ${e.count}`).sort();
    expect(reasons).toEqual(["CreateConfigMap 5", "SkipConfigMap 1"]);
  });

  it("gives up a failing series' flush after its attempts instead of spinning", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, seriesIntervalMs: 60_000 });
    writer.failNext = 1_000;
    events.tally(input("a"));
    await events.flush(3);
    expect(writer.writes).toBeLessThanOrEqual(4);
    expect(writer.events.size).toBe(0);
  });

  it("keeps its memory bounded, forgetting written series first", async () => {
    const writer = new MemoryWriter();
    const events = new AggregatedEvents(writer, { ...options, maxSeries: 3, seriesIntervalMs: 60_000 });
    for (let i = 0; i < 20; i++) {
      events.tally({ ...input("m"), regarding: { ...tc, name: `t-${i}` } });
      await events.flush();
    }
    expect(events.routineSize).toBeLessThanOrEqual(3);
    expect(writer.total()).toBe(20);
  });
});
