import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { connect, nanos, type NatsConnection } from "@nats-io/transport-node";
import {
  ACK_WAIT_MS,
  consumers,
  decisionsStreamConfig,
  ensureTopology,
  runConsumer,
  subjects,
  tenantsStreamConfig,
} from "@tenantplane/messaging";
import { createLogger, createMetrics } from "@tenantplane/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { startNats, trackFailures, waitFor, type NatsServer } from "../harness/index.js";

const failures = trackFailures();
let nats: NatsServer;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

const SECOND_NS = 1_000_000_000;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop({ keepLogs: failures.failed() });
});

describe("topology on a real nats-server", () => {
  it("stores ack_wait as configured, with no backoff, unlimited deliveries and a description", async () => {
    await ensureTopology(jsm, ["provisioner", "isolation", "recorder"]);
    for (const name of ["provisioner", "isolation", "recorder"] as const) {
      const { config } = await jsm.consumers.info(consumers[name].stream, consumers[name].durable);
      expect(config.ack_wait).toBe(nanos(ACK_WAIT_MS));
      expect(config.backoff ?? []).toEqual([]);
      expect(config.max_deliver).toBe(-1);
      expect(config.description).toMatch(/^tenantplane /);
    }
    for (const stream of [subjects.tenantsStream, subjects.decisionsStream]) {
      expect((await jsm.streams.info(stream)).config.description).toMatch(/^tenantplane: /);
    }
  });

  it("repairs a consumer left with a backoff schedule, whose ack_wait the server had cut to backoff[0]", async () => {
    const c = consumers.syncWorker;
    await jsm.consumers.add(c.stream, {
      durable_name: c.durable,
      filter_subject: c.filter,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(30_000),
      max_deliver: -1,
      backoff: [nanos(2_000), nanos(5_000)],
    });
    expect((await jsm.consumers.info(c.stream, c.durable)).config.ack_wait).toBe(nanos(2_000));
    await ensureTopology(jsm, ["syncWorker"]);
    const { config } = await jsm.consumers.info(c.stream, c.durable);
    expect(config.ack_wait).toBe(nanos(ACK_WAIT_MS));
    expect(config.backoff ?? []).toEqual([]);
  });

  it("never lowers an operator's stream limits, and raises only what it is configured to", async () => {
    // The operator's own settings, as `nats stream edit` would leave them.
    await jsm.streams.update(subjects.decisionsStream, {
      description: "audit trail, kept for a month",
      max_age: nanos(30 * 24 * 3600 * 1000),
      max_bytes: 1024 * 1024 * 1024,
    });
    await jsm.streams.update(subjects.tenantsStream, { max_msgs_per_subject: 100, max_age: nanos(48 * 3600 * 1000) });
    const before = {
      tenants: (await jsm.streams.info(subjects.tenantsStream)).config,
      decisions: (await jsm.streams.info(subjects.decisionsStream)).config,
    };

    // A service restart with nothing configured, and one configured lower than the operator's values.
    await ensureTopology(jsm, ["recorder"]);
    await ensureTopology(jsm, ["recorder"], {
      replicas: 1,
      tenants: { max_age: nanos(3600 * 1000) },
      decisions: { max_bytes: 1024, max_age: nanos(1000) },
    });
    const after = {
      tenants: (await jsm.streams.info(subjects.tenantsStream)).config,
      decisions: (await jsm.streams.info(subjects.decisionsStream)).config,
    };
    expect(after).toEqual(before);
    expect(after.decisions.description).toBe("audit trail, kept for a month");
    expect(after.tenants.max_msgs_per_subject).toBe(100);
    expect(after.decisions.num_replicas).toBe(1);

    await ensureTopology(jsm, [], { decisions: { max_bytes: 2 * 1024 * 1024 * 1024 } });
    const raised = (await jsm.streams.info(subjects.decisionsStream)).config;
    expect(raised.max_bytes).toBe(2 * 1024 * 1024 * 1024);
    expect(raised.max_age).toBe(before.decisions.max_age);
  });

  it("creates a missing stream with the configured limits", async () => {
    await jsm.streams.delete(subjects.tenantsStream);
    await ensureTopology(jsm, [], { replicas: 1, tenants: { max_age: nanos(7200 * 1000) } });
    const { config } = await jsm.streams.info(subjects.tenantsStream);
    expect(config.max_age).toBe(nanos(7200 * 1000));
    expect(config.max_msgs_per_subject).toBe(tenantsStreamConfig.max_msgs_per_subject);
    expect((await jsm.streams.info(subjects.decisionsStream)).config.duplicate_window).toBe(
      decisionsStreamConfig.duplicate_window,
    );
  });
});

describe("runConsumer on a real nats-server", () => {
  it("runs a handler slower than ack_wait exactly once, and the message queued behind it once", async () => {
    // A consumer with a short ack_wait, so the test is quick: the heartbeat interval
    // follows the ack_wait the server stored, whatever it is.
    await jsm.streams.add({ name: "SLOW", subjects: ["slow.>"] });
    await jsm.consumers.add("SLOW", {
      durable_name: "slow",
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: 2 * SECOND_NS,
      max_deliver: -1,
    });
    const runs: string[] = [];
    const controller = new AbortController();
    const running = runConsumer({
      js,
      consumer: { stream: "SLOW", durable: "slow" },
      schema: z.object({ id: z.string(), key: z.string() }),
      key: (m) => m.key,
      handle: async (m) => {
        runs.push(m.id);
        // 3.5 times ack_wait; the second message waits this long in its key's queue.
        await new Promise((r) => setTimeout(r, 7_000));
      },
      logger: createLogger("messaging-faults", "silent"),
      metrics: createMetrics("messaging-faults"),
      signal: controller.signal,
    });
    await js.publish("slow.a", JSON.stringify({ id: "first", key: "k" }));
    await js.publish("slow.a", JSON.stringify({ id: "second", key: "k" }));
    await waitFor(
      async () => {
        const info = await jsm.consumers.info("SLOW", "slow");
        return info.num_ack_pending === 0 && info.num_pending === 0 && runs.length >= 2;
      },
      { description: "both messages acked", timeoutMs: 40_000, intervalMs: 500 },
    );
    // Longer than ack_wait again: a redelivery would show up now.
    await new Promise((r) => setTimeout(r, 3_000));
    controller.abort();
    await running;
    expect(runs).toEqual(["first", "second"]);
    expect((await jsm.consumers.info("SLOW", "slow")).num_redelivered).toBe(0);
  });
});
