import { JetStreamApiError, type PubAck } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { DecisionPipeline } from "./decision-pipeline.js";
import { stampDecision, type StampedDecision } from "./publisher.js";

/**
 * A stream as JetStream keeps one: messages stored in the order they arrive, a message id seen
 * before dropped as a duplicate. `answer` decides per arriving publish what happens to it.
 */
class FakeStream {
  readonly stored: Array<{ subject: string; id: string }> = [];
  private readonly ids = new Set<string>();
  outstanding = 0;
  maxOutstanding = 0;
  sent = 0;
  answer: (id: string) => "store" | "lose" | "store-lose-ack" | "refuse" = () => "store";

  publish = async (subject: string, _payload?: unknown, opts?: { msgID?: string }): Promise<PubAck> => {
    const id = opts?.msgID ?? "";
    this.sent++;
    this.outstanding++;
    this.maxOutstanding = Math.max(this.maxOutstanding, this.outstanding);
    const what = this.answer(id);
    // Arrival is in call order (one connection); the ack comes back later.
    const duplicate = this.ids.has(id);
    if ((what === "store" || what === "store-lose-ack") && !duplicate) {
      this.ids.add(id);
      this.stored.push({ subject, id });
    }
    await new Promise((r) => setImmediate(r));
    this.outstanding--;
    if (what === "lose" || what === "store-lose-ack")
      throw Object.assign(new Error("timeout"), { name: "TimeoutError" });
    if (what === "refuse") {
      throw new JetStreamApiError({ code: 400, err_code: 10054, description: "message size exceeds maximum allowed" });
    }
    return { stream: "DECISIONS", seq: this.stored.length, duplicate, domain: "" };
  };
}

function decisions(count: number, tenants = ["a", "b", "c"]): StampedDecision[] {
  return Array.from({ length: count }, (_, i) =>
    stampDecision(
      {
        tenant: tenants[i % tenants.length]!,
        action: "Skip",
        kind: "ConfigMap",
        tenantRef: { namespace: "default", name: `cm-${i}` },
        hostRef: { namespace: "tp-x", name: `cm-${i}` },
        reason: `refused ${i}`,
      },
      "sync-worker",
    ),
  );
}

/** Each subject's ids in stored order equal that subject's ids in publish order. */
function expectOrderPerSubject(stored: FakeStream["stored"], published: StampedDecision[]): void {
  const bySubject = (list: Array<{ subject: string; id: string }>) => {
    const map = new Map<string, string[]>();
    for (const { subject, id } of list) map.set(subject, [...(map.get(subject) ?? []), id]);
    return map;
  };
  const want = bySubject(
    published.map((d) => ({ subject: `tenantplane.decisions.${d.tenant}.${d.kind}.${d.action}`, id: d.id })),
  );
  expect(bySubject(stored)).toEqual(want);
}

const noWait = async () => undefined;

describe("DecisionPipeline", () => {
  it("keeps at most maxInFlight publishes on the wire and stores each subject's Decisions in order", async () => {
    const stream = new FakeStream();
    const pipeline = new DecisionPipeline(stream, { maxInFlight: 16, sleep: noWait });
    const all = decisions(1_000);
    const acks = await Promise.all(all.map((d) => pipeline.publish(d)));
    expect(acks).toHaveLength(1_000);
    expect(stream.maxOutstanding).toBe(16);
    expect(stream.sent).toBe(1_000);
    expectOrderPerSubject(stream.stored, all);
    expect(pipeline.pending).toBe(0);
  });

  it("loses nothing and reorders nothing when NATS fails mid-pipeline, and probes with one message while it is away", async () => {
    const stream = new FakeStream();
    let arrivals = 0;
    let downFor = 0;
    // The 300th publish is stored but its ack is lost: the connection dropped right after it,
    // so whatever was sent behind it is lost too until the server answers again (40 arrivals,
    // more than the window). Around the 700th the same happens without the store.
    stream.answer = () => {
      arrivals++;
      if (arrivals === 300 || arrivals === 700) {
        downFor = 40;
        return arrivals === 300 ? "store-lose-ack" : "lose";
      }
      if (downFor > 0) {
        downFor--;
        return "lose";
      }
      return "store";
    };
    const retries: number[] = [];
    const pipeline = new DecisionPipeline(stream, {
      maxInFlight: 32,
      sleep: noWait,
      onRetry: (_err, attempt) => retries.push(attempt),
    });
    const all = decisions(2_000);
    await Promise.all(all.map((d) => pipeline.publish(d)));
    expect(stream.stored).toHaveLength(2_000);
    expect(new Set(stream.stored.map((s) => s.id)).size).toBe(2_000);
    expectOrderPerSubject(stream.stored, all);
    // While away, one message per retry goes out, not the whole window each time.
    expect(stream.sent).toBeLessThan(2_000 + 2 * (32 + 40));
    expect(retries.length).toBeGreaterThan(1);
  });

  it("rejects only a message the server refuses for good, and carries on with the rest", async () => {
    const stream = new FakeStream();
    const all = decisions(50);
    const refused = all[10]!.id;
    stream.answer = (id) => (id === refused ? "refuse" : "store");
    const pipeline = new DecisionPipeline(stream, { maxInFlight: 8, sleep: noWait });
    const results = await Promise.allSettled(all.map((d) => pipeline.publish(d)));
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(1);
    expect((results[10] as PromiseRejectedResult).reason).toBeInstanceOf(JetStreamApiError);
    expect(stream.stored.map((s) => s.id)).toEqual(all.filter((d) => d.id !== refused).map((d) => d.id));
  });

  it("gives up with a TransientError only at shutdown, and settles", async () => {
    const stream = new FakeStream();
    stream.answer = () => "lose";
    const controller = new AbortController();
    let waits = 0;
    const pipeline = new DecisionPipeline(stream, {
      maxInFlight: 4,
      signal: controller.signal,
      sleep: async () => {
        if (++waits === 5) controller.abort();
      },
    });
    const results = await Promise.allSettled(decisions(10).map((d) => pipeline.publish(d)));
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ name: "TransientError", transient: true });
    expect(waits).toBe(5);
    await pipeline.settled();
    expect(pipeline.pending).toBe(0);
  });
});
