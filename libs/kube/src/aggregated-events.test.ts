import type { CoreV1Event } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { AggregatedEvents, type EventSink } from "./aggregated-events.js";

class MemoryWriter implements EventSink {
  readonly events = new Map<string, CoreV1Event>();
  writes = 0;
  failNext = 0;
  async create(namespace: string, event: CoreV1Event) {
    this.check();
    this.events.set(`${namespace}/${event.metadata!.name}`, { ...event });
  }
  async patch(namespace: string, name: string, patch: { count: number; lastTimestamp: string; message: string }) {
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
