import {
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  DecisionPipeline,
  DECISIONS_PER_SUBJECT,
  ensureTopology,
  MAX_DECISION_TEXT,
  publishDecision,
  stampDecision,
  subjects,
  type Decision,
  type PlannedDecision,
  type StampedDecision,
} from "@tenantplane/messaging";
import { SYNC_KINDS } from "@tenantplane/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNats, trackFailures, waitFor, type NatsServer } from "../harness/index.js";

// A real nats-server (the pinned one) on 127.0.0.1 and a free port: this suite needs no
// address of its own from the 127.0.0.221-225 range it was given.
const failures = trackFailures();
/** Skips one tenant floods the stream with: the 100,000 (15-25 s on 2 cores); FLOOD_SKIPS changes it. */
const FLOOD_SKIPS = Number(process.env.FLOOD_SKIPS ?? 100_000);
/** The stream's byte limit in this suite: far below what the flood writes, so only the per-tenant limit can save the others. */
const MAX_BYTES = 24 * 1024 * 1024;

let nats: NatsServer;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop({ keepLogs: failures.failed() });
});

/**
 * A Skip as the sync worker publishes it, by default with the longest reason a tenant can make
 * (its text cut to 1 KiB); `long: false` for a short one.
 */
function skip(tenant: string, i: number, long = true): StampedDecision {
  const kind = SYNC_KINDS[i % SYNC_KINDS.length]!;
  return stampDecision(
    {
      tenant,
      action: "Skip",
      kind,
      tenantRef: { namespace: "default", name: `obj-${i}` },
      hostRef: { namespace: `tp-${tenant}`, name: `obj-${i}-x-default-x-${tenant}` },
      reason: long
        ? `refused by host rules: metadata.annotations[a]: AppArmor profile ${"x".repeat(2_000)} is forbidden`
        : `refused ${i}`,
    },
    "sync-worker",
  );
}

function quietDecisions(): PlannedDecision[] {
  return (["Create", "Update", "Delete", "Skip", "Fail"] as const).flatMap((action) =>
    SYNC_KINDS.map((kind) => ({
      tenant: "quiet",
      action,
      kind,
      tenantRef: { namespace: "default", name: `${kind.toLowerCase()}-1` },
      hostRef: { namespace: "tp-quiet", name: `${kind.toLowerCase()}-1-x-default-x-quiet` },
      reason: `${action} of the quiet tenant's ${kind}`,
      ...(action === "Fail" ? { error: { code: 403, reason: "Forbidden", message: "quota" } } : {}),
    })),
  );
}

/** Every Decision stored under `filter`, in stream order, as an outside subscriber reads them. */
async function stored(filter: string): Promise<Decision[]> {
  const info = await jsm.streams.info(subjects.decisionsStream, { subjects_filter: filter });
  const count = Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  const out: Decision[] = [];
  if (count === 0) return out;
  const reader = await js.consumers.get(subjects.decisionsStream, { filter_subjects: [filter] });
  while (out.length < count) {
    const batch = await reader.fetch({ max_messages: 1_000, expires: 2_000 });
    for await (const m of batch) out.push(m.json<Decision>());
  }
  return out;
}

/** Messages stored per subject under `filter`. */
async function perSubject(filter: string): Promise<Record<string, number>> {
  return (await jsm.streams.info(subjects.decisionsStream, { subjects_filter: filter })).state.subjects ?? {};
}

async function flood(count: number): Promise<number> {
  const pipeline = new DecisionPipeline(js);
  const started = performance.now();
  const acks: Array<Promise<unknown>> = [];
  for (let i = 0; i < count; i++) {
    acks.push(pipeline.publish(skip("flood", i)));
    // Bounded memory for the test itself: the pipeline queues whatever it is given.
    if (acks.length >= 2_000) await Promise.all(acks.splice(0));
  }
  await Promise.all(acks);
  return performance.now() - started;
}

describe("DECISIONS keeps tenants apart", () => {
  it("an older stream without per-tenant limits loses a quiet tenant's Decisions to another's flood (the control)", async () => {
    // DECISIONS as an earlier version declared it: no per-subject limit.
    await jsm.streams.add({
      name: subjects.decisionsStream,
      subjects: [subjects.decisionsAll],
      discard: DiscardPolicy.Old,
      max_bytes: MAX_BYTES,
    });
    const pipeline = new DecisionPipeline(js);
    const quiet = quietDecisions().map((d) => stampDecision(d, "sync-worker"));
    await Promise.all(quiet.map((d) => pipeline.publish(d)));
    expect(await stored("tenantplane.decisions.quiet.>")).toHaveLength(quiet.length);
    // Enough to fill the stream's bytes one and a half times.
    const size = Buffer.byteLength(JSON.stringify(skip("flood", 0)));
    await flood(Math.ceil((1.5 * MAX_BYTES) / size));
    expect(await stored("tenantplane.decisions.quiet.>")).toEqual([]);
  });

  it("sets the per-tenant limit on that stream and on a new one, as the server stores it", async () => {
    await ensureTopology(jsm, []);
    const updated = (await jsm.streams.info(subjects.decisionsStream)).config;
    expect(updated.max_msgs_per_subject).toBe(DECISIONS_PER_SUBJECT);
    expect(updated.discard).toBe(DiscardPolicy.Old);
    expect(updated.discard_new_per_subject ?? false).toBe(false);
    // The old flood is cut to the newest DECISIONS_PER_SUBJECT per subject at once.
    for (const n of Object.values(await perSubject("tenantplane.decisions.flood.>"))) {
      expect(n).toBeLessThanOrEqual(DECISIONS_PER_SUBJECT);
    }
    await jsm.streams.delete(subjects.decisionsStream);
    await ensureTopology(jsm, [], { decisions: { max_bytes: MAX_BYTES } });
    const created = (await jsm.streams.info(subjects.decisionsStream)).config;
    expect(created.max_msgs_per_subject).toBe(DECISIONS_PER_SUBJECT);
    expect(created.max_bytes).toBe(MAX_BYTES);
    expect(created.discard).toBe(DiscardPolicy.Old);
  });

  it(`a flood of ${FLOOD_SKIPS} Skips from one tenant leaves every other tenant's Decisions in the stream`, async () => {
    const pipeline = new DecisionPipeline(js);
    const quiet = quietDecisions().map((d) => stampDecision(d, "sync-worker"));
    await Promise.all(quiet.map((d) => pipeline.publish(d)));
    const size = Buffer.byteLength(JSON.stringify(skip("flood", 0)));
    // Each Skip carries the most tenant text a reason may: 1 KiB, cut and marked.
    expect(Buffer.byteLength(skip("flood", 0).reason)).toBe(MAX_DECISION_TEXT);
    expect(FLOOD_SKIPS * size).toBeGreaterThan(3 * MAX_BYTES);

    const ms = await flood(FLOOD_SKIPS);
    console.log(
      `decision-limits: ${FLOOD_SKIPS} Skips of ${size} bytes published in ${(ms / 1000).toFixed(1)} s ` +
        `(${Math.round(FLOOD_SKIPS / (ms / 1000))}/s, pipelined)`,
    );

    // The quiet tenant's Decisions, read back: every one, unchanged.
    const kept = await stored("tenantplane.decisions.quiet.>");
    expect(kept.map((d) => d.id).sort()).toEqual(quiet.map((d) => d.id).sort());
    expect(kept.find((d) => d.action === "Fail")?.error).toEqual({ code: 403, reason: "Forbidden", message: "quota" });
    // The flooding tenant kept its newest Skips of each kind, and only those.
    const counts = await perSubject("tenantplane.decisions.flood.>");
    expect(Object.keys(counts).sort()).toEqual(SYNC_KINDS.map((k) => `tenantplane.decisions.flood.${k}.Skip`).sort());
    for (const n of Object.values(counts)) expect(n).toBe(DECISIONS_PER_SUBJECT);
    const newest = await stored(`tenantplane.decisions.flood.${SYNC_KINDS[0]}.Skip`);
    expect(newest.at(-1)?.tenantRef.name).toBe(`obj-${FLOOD_SKIPS - 1 - ((FLOOD_SKIPS - 1) % SYNC_KINDS.length)}`);
  });
});

describe("pipelined publishing", () => {
  beforeAll(async () => {
    await jsm.streams.purge(subjects.decisionsStream);
  });

  it("is faster than one round trip per Decision", async () => {
    const count = 5_000;
    const batch = (tenant: string) => Array.from({ length: count }, (_, i) => skip(tenant, i));
    const oneByOne = batch("sequential");
    let started = performance.now();
    for (const d of oneByOne) await publishDecision(js, d);
    const sequentialMs = performance.now() - started;
    const pipeline = new DecisionPipeline(js);
    const pipelined = batch("pipelined");
    started = performance.now();
    await Promise.all(pipelined.map((d) => pipeline.publish(d)));
    const pipelinedMs = performance.now() - started;
    const rate = (ms: number) => Math.round(count / (ms / 1000));
    console.log(
      `decision-limits: ${count} Decisions one round trip each ${rate(sequentialMs)}/s, pipelined ${rate(pipelinedMs)}/s ` +
        `(${(sequentialMs / pipelinedMs).toFixed(1)}x)`,
    );
    expect(pipelinedMs).toBeLessThan(sequentialMs);
  });

  it("loses nothing and keeps each subject's order when the server stops mid-pipeline", async () => {
    await jsm.streams.purge(subjects.decisionsStream);
    const count = 40_000;
    // 40 tenants x 6 kinds: every subject stays under the per-subject limit and the whole under
    // the stream's bytes, so every Decision must be there.
    const all = Array.from({ length: count }, (_, i) => skip(`outage${i % 40}`, Math.floor(i / 40), false));
    const pipeline = new DecisionPipeline(js, { maxMs: 1_000 });
    let acked = 0;
    const done = Promise.all(all.map((d) => pipeline.publish(d).then(() => acked++)));
    await waitFor(() => acked >= 2_000, { description: "2,000 Decisions stored", intervalMs: 5 });
    await nats.stopServer();
    const atStop = acked;
    await new Promise((r) => setTimeout(r, 3_000));
    expect(acked).toBeLessThan(count);
    await nats.startAgain();
    await done;
    console.log(`decision-limits: server stopped after ${atStop} of ${count} acks; all acked after restart`);

    const read = await stored(subjects.decisionsAll);
    expect(read).toHaveLength(count);
    expect(new Set(read.map((d) => d.id))).toEqual(new Set(all.map((d) => d.id)));
    const order = (list: Decision[]) => {
      const bySubject = new Map<string, string[]>();
      for (const d of list) {
        const subject = subjects.decision(d.tenant, d.kind, d.action);
        const ids = bySubject.get(subject) ?? [];
        ids.push(d.id);
        bySubject.set(subject, ids);
      }
      return bySubject;
    };
    expect(order(read)).toEqual(order(all));
  });
});
