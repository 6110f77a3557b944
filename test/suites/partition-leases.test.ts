import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, nanos, type NatsConnection } from "@nats-io/transport-node";
import { PartitionLeases, partitionOf, type LossReason } from "@tenantplane/partition";
import { createServer, connect as tcpConnect, type AddressInfo, type Socket } from "node:net";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startNats, trackFailures, waitFor, type NatsServer } from "../harness/index.js";

// Short timings so the suite runs in well under a minute: renew every 1 s, fence 0.5 s before expiry.
const P = 16;
const TTL_MS = 3_000;
const RENEW_MS = 1_000;
const BUCKET = "partition-leases-suite";
const clock = () => performance.now();

interface Change {
  at: number;
  worker: string;
  partition: number;
  change: "acquired" | "lost";
  reason?: LossReason;
}

interface Worker {
  name: string;
  nc: NatsConnection;
  leases: PartitionLeases;
  registry: Registry;
}

const failures = trackFailures();
const changes: Change[] = [];
const workers: Worker[] = [];
/** Instants at which two workers' owns() were both true for one partition. */
const doubleOwnership: string[] = [];
let nats: NatsServer;
let nc: NatsConnection;
let jsm: JetStreamManager;
let kv: KV;
let sampler: NodeJS.Timeout;

/** A loopback TCP relay to nats-server whose link can be cut (every socket reset, new ones refused) and healed. */
async function startLink(targetPort: number) {
  const sockets = new Set<Socket>();
  let cut = false;
  const server = createServer((client) => {
    if (cut) return client.destroy();
    const upstream = tcpConnect(targetPort, "127.0.0.1");
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.pipe(to);
      from.on("error", () => to.destroy());
      from.on("close", () => {
        sockets.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `nats://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    heal() {
      cut = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// LEASE_DEBUG=1 prints every lease log line, for diagnosing a failure.
function debugLogger(name: string) {
  const print = (level: string) => (obj: object, msg?: string) => {
    if (process.env.LEASE_DEBUG)
      console.error(`${clock().toFixed(0)} ${name} ${level} ${msg ?? ""} ${JSON.stringify(obj)}`);
  };
  return { debug: print("debug"), info: print("info"), warn: print("warn") };
}

let link: Awaited<ReturnType<typeof startLink>> | undefined;

async function startWorker(name: string, url = nats.url): Promise<Worker> {
  const workerNc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  const registry = new Registry();
  const leases = new PartitionLeases({
    connection: workerNc,
    workerId: name,
    partitions: P,
    bucket: BUCKET,
    ttlMs: TTL_MS,
    registry,
    clock,
    logger: debugLogger(name),
    onAcquired: (partition) => changes.push({ at: clock(), worker: name, partition, change: "acquired" }),
    onLost: (partition, reason) => changes.push({ at: clock(), worker: name, partition, change: "lost", reason }),
  });
  const worker = { name, nc: workerNc, leases, registry };
  workers.push(worker);
  await leases.start();
  return worker;
}

/** Every partition owned by exactly one of `members`, none above `share`, and the bucket agreeing. */
async function settled(members: Worker[], share: number): Promise<Map<number, string> | false> {
  const owners = new Map<number, string>();
  for (let p = 0; p < P; p++) {
    const holding = members.filter((w) => w.leases.owns(p));
    if (holding.length !== 1) return false;
    owners.set(p, holding[0]!.name);
  }
  if (members.some((w) => w.leases.held().length > share)) return false;
  // Trust the server: the stored lease must name the same owner.
  for (const [p, owner] of owners) {
    const entry = await kv.get(`p.${p}`);
    if (entry?.operation !== "PUT" || entry.json<{ worker: string }>().worker !== owner) return false;
  }
  return owners;
}

function lastChange(worker: string, partition: number, change: Change["change"]): Change | undefined {
  return changes.findLast((c) => c.worker === worker && c.partition === partition && c.change === change);
}

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url, name: "partition-suite", maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  jsm = await jetstreamManager(nc);
  // Sample owns() of every worker ever started (stopped and killed ones too) every 10 ms.
  sampler = setInterval(() => {
    for (let p = 0; p < P; p++) {
      const owners = workers.filter((w) => w.leases.owns(p)).map((w) => w.name);
      if (owners.length > 1) doubleOwnership.push(`t=${clock().toFixed(0)} p${p}: ${owners.join(", ")}`);
    }
  }, 10);
});

afterEach(() => {
  expect(doubleOwnership.slice(0, 5)).toEqual([]);
});

afterAll(async () => {
  clearInterval(sampler);
  const keepLogs = failures.failed();
  for (const w of workers) {
    await w.leases.stop().catch(() => undefined);
    await w.nc.close().catch(() => undefined);
  }
  await nc?.close();
  await link?.close();
  await nats?.stop({ keepLogs });
});

describe("partitionOf", () => {
  it.each([16, 128, 7])("agrees with nats-server's partition(%i, 1) subject mapping", async (partitions) => {
    const js = jetstream(nc);
    const stream = "PARTITION_CHECK";
    await jsm.streams.add({
      name: stream,
      subjects: ["tenantplane.tenants.*.changed"],
      subject_transform: {
        src: "tenantplane.tenants.*.changed",
        dest: `tenantplane.partitioned.{{partition(${partitions},1)}}.{{wildcard(1)}}`,
      },
      retention: RetentionPolicy.Limits,
      storage: StorageType.Memory,
    });
    try {
      // DNS labels as tenants are named, plus non-ASCII tokens to pin hashing to UTF-8 bytes.
      const tenants = [
        "a",
        "dev",
        "tenant-0",
        "0",
        "x".repeat(63),
        "ünïcödé",
        "租户",
        ...Array.from({ length: 300 }, (_, i) => `team-${(i * 2_654_435_761) % 1_000_003}-${i.toString(36)}`),
      ];
      const seqs = new Map<number, string>();
      for (const tenant of tenants) {
        const ack = await js.publish(`tenantplane.tenants.${tenant}.changed`, "{}");
        seqs.set(ack.seq, tenant);
      }
      const seen = new Set<number>();
      for (const [seq, tenant] of seqs) {
        const stored = await jsm.streams.getMessage(stream, { seq });
        expect(stored, `message ${seq}`).not.toBeNull();
        const [, , partition, token] = stored!.subject.split(".");
        expect(token).toBe(tenant);
        expect(Number(partition), `partition of ${tenant}`).toBe(partitionOf(tenant, partitions));
        seen.add(Number(partition));
      }
      // Enough tenants that most partitions are hit: the comparison is not vacuous.
      expect(seen.size).toBeGreaterThan(Math.min(partitions, 100) * 0.9);
    } finally {
      await jsm.streams.delete(stream);
    }
  });
});

describe("PartitionLeases on nats-server", () => {
  let a: Worker;
  let b: Worker;
  let c: Worker;
  let d: Worker;

  it("splits 16 partitions among three workers, each within ceil(16/3), on a bucket declared as asked", async () => {
    [a, b, c] = await Promise.all([startWorker("worker-a"), startWorker("worker-b"), startWorker("worker-c")]);
    kv = await new Kvm(nc).open(BUCKET);
    await waitFor(() => settled([a, b, c], Math.ceil(P / 3)), {
      description: "16 partitions owned once each by a, b and c",
      timeoutMs: 15_000,
      intervalMs: 50,
    });
    const config = (await jsm.streams.info(`KV_${BUCKET}`)).config;
    expect(config).toMatchObject({
      max_msgs_per_subject: 1,
      max_age: nanos(TTL_MS),
      allow_msg_ttl: true,
      subject_delete_marker_ttl: nanos(TTL_MS),
      num_replicas: 1,
    });
    expect(config.metadata?.["tenantplane.io/partitions"]).toBe(String(P));
    const metric = await a.registry.getSingleMetric("tenantplane_sync_partitions_held")!.get();
    expect(metric.values[0]?.value).toBe(a.leases.held().length);
  });

  it("refuses a worker configured with another partition count for the same bucket", async () => {
    const other = await connect({ servers: nats.url, name: "mismatch" });
    try {
      const leases = new PartitionLeases({ connection: other, workerId: "mismatch", partitions: 32, bucket: BUCKET });
      await expect(leases.start()).rejects.toThrow(/declared for 16 partitions/);
    } finally {
      await other.close();
    }
  });

  it("converges an existing bucket declared differently, without lowering what it keeps", async () => {
    const name = "partition-leases-legacy";
    // As an older release might have left it: more history, a long max age, no delete markers.
    await new Kvm(nc).create(name, { history: 5, ttl: 60_000, description: "legacy" });
    const other = await connect({ servers: nats.url, name: "legacy" });
    const leases = new PartitionLeases({
      connection: other,
      workerId: "legacy",
      partitions: 4,
      bucket: name,
      ttlMs: TTL_MS,
    });
    try {
      await leases.start();
      const config = (await jsm.streams.info(`KV_${name}`)).config;
      expect(config).toMatchObject({
        max_msgs_per_subject: 1,
        max_age: nanos(TTL_MS),
        allow_msg_ttl: true,
        subject_delete_marker_ttl: nanos(TTL_MS),
        description: "legacy",
      });
      await waitFor(() => leases.held().length === 4, { description: "the lone worker owns all 4 partitions" });
    } finally {
      await leases.stop();
      await other.close();
      await jsm.streams.delete(`KV_${name}`);
    }
  });

  it("refuses a worker id that cannot be a KV key token", () => {
    expect(() => new PartitionLeases({ connection: nc, workerId: "pod.with.dots", bucket: BUCKET })).toThrow(
      /workerId "pod.with.dots" is not usable/,
    );
  });

  it("hands a gracefully stopped worker's partitions over at once, without waiting for the TTL", async () => {
    const released = b.leases.held();
    expect(released.length).toBeGreaterThan(0);
    const stoppedAt = clock();
    await b.leases.stop();
    await waitFor(() => settled([a, c], Math.ceil(P / 2)), {
      description: "a and c own all 16 partitions",
      timeoutMs: TTL_MS,
      intervalMs: 10,
    });
    const handOver = clock() - stoppedAt;
    console.error(`[partition-leases] graceful hand-over of ${released.length} partitions: ${handOver.toFixed(0)} ms`);
    expect(handOver).toBeLessThan(TTL_MS / 3);
    for (const p of released) {
      const lost = lastChange("worker-b", p, "lost")!;
      expect(lost.reason).toBe("released");
      const next = changes.find((x) => x.partition === p && x.change === "acquired" && x.at > stoppedAt)!;
      expect(next.at).toBeGreaterThanOrEqual(lost.at);
    }
    const members = await kv.get("m.worker-b");
    expect(members === null || members.operation !== "PUT").toBe(true);
  });

  it("rebalances when a worker joins: the newcomer gets a share and no partition has two owners", async () => {
    d = await startWorker("worker-d");
    const owners = await waitFor(() => settled([a, c, d], Math.ceil(P / 3)), {
      description: "a, c and d own all 16 partitions within ceil(16/3) each",
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect([...owners.values()].filter((o) => o === "worker-d").length).toBeGreaterThanOrEqual(
      P - 2 * Math.ceil(P / 3),
    );
    const shed = changes.filter((x) => x.change === "lost" && x.reason === "shed");
    expect(shed.length).toBeGreaterThan(0);
  });

  it("takes over a killed worker's partitions within TTL plus a renew interval, after it fenced itself", async () => {
    const victim = c;
    const orphaned = victim.leases.held();
    const gaps: number[] = [];
    expect(orphaned.length).toBeGreaterThan(0);
    const killedAt = clock();
    // No release, no goodbye: the worker keeps running but can no longer reach NATS.
    await victim.nc.close();
    await waitFor(() => settled([a, d], Math.ceil(P / 2)), {
      description: "a and d own all 16 partitions after c was cut off",
      timeoutMs: TTL_MS * 3,
      intervalMs: 10,
    });
    const takeover = clock() - killedAt;
    console.error(`[partition-leases] takeover after a kill: ${takeover.toFixed(0)} ms (TTL ${TTL_MS} ms)`);
    expect(takeover).toBeLessThan(TTL_MS + RENEW_MS + 500);
    for (const p of orphaned) {
      const fenced = lastChange(victim.name, p, "lost")!;
      expect(fenced.reason).toBe("fenced");
      const next = changes.find((x) => x.partition === p && x.change === "acquired" && x.at > killedAt)!;
      expect(next.worker).not.toBe(victim.name);
      // The victim stopped trusting its lease before the server could expire it for anyone else.
      expect(fenced.at).toBeLessThan(next.at);
      gaps.push(next.at - fenced.at);
    }
    console.error(
      `[partition-leases] fence-to-takeover gap per partition: min ${Math.min(...gaps).toFixed(0)} ms, max ${Math.max(...gaps).toFixed(0)} ms`,
    );
    expect(victim.leases.held()).toEqual([]);
    const failuresMetric = await victim.registry.getSingleMetric("tenantplane_sync_lease_renew_failures_total")!.get();
    expect(failuresMetric.values.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThan(0);
    // Stopping a cut-off worker must not hang on deletes that cannot reach the server.
    const stopStarted = clock();
    await victim.leases.stop();
    expect(clock() - stopStarted).toBeLessThan(TTL_MS);
  });

  it("recovers every lease after a nats-server restart", async () => {
    const restartStarted = clock();
    await nats.restart();
    const restartedAt = clock();
    await waitFor(() => settled([a, d], Math.ceil(P / 2)), {
      description: "a and d own all 16 partitions after the restart",
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    // Past a full TTL after the restart, ownership can only stand on renewals made against the new server.
    const settleFrom = Math.max(0, restartedAt + TTL_MS + 200 - clock());
    await new Promise((resolve) => setTimeout(resolve, settleFrom));
    expect(await settled([a, d], Math.ceil(P / 2))).not.toBe(false);
    console.error(`[partition-leases] nats-server restart took ${(restartedAt - restartStarted).toFixed(0)} ms`);
    // The watch must be live again too: a graceful stop after the restart still hands over at once.
    const stoppedAt = clock();
    await d.leases.stop();
    await waitFor(() => settled([a], P), {
      description: "a owns all 16 partitions once d stopped",
      timeoutMs: TTL_MS,
      intervalMs: 10,
    });
    expect(clock() - stoppedAt).toBeLessThan(TTL_MS / 3);
    const during = changes.filter((x) => x.at >= restartStarted && x.at < stoppedAt && x.change === "lost");
    console.error(
      `[partition-leases] losses around the restart: ${during.map((x) => `${x.worker}/p${x.partition}/${x.reason}`).join(" ") || "none"}`,
    );
  });

  it("fences a worker cut off from NATS past the TTL, and lets it rejoin without double ownership", async () => {
    link = await startLink(nats.port);
    const e = await startWorker("worker-e", link.url);
    await waitFor(() => settled([a, e], Math.ceil(P / 2)), {
      description: "a and e share the 16 partitions",
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const cutOff = e.leases.held();
    const cutAt = clock();
    link.cut();
    await waitFor(() => settled([a], P), {
      description: "a owns all 16 partitions while e is cut off",
      timeoutMs: TTL_MS * 3,
      intervalMs: 10,
    });
    const takeover = clock() - cutAt;
    console.error(`[partition-leases] takeover from a cut-off worker: ${takeover.toFixed(0)} ms`);
    expect(takeover).toBeLessThan(TTL_MS + RENEW_MS + 500);
    for (const p of cutOff) {
      const fenced = lastChange(e.name, p, "lost")!;
      expect(fenced.reason).toBe("fenced");
      expect(fenced.at).toBeLessThan(lastChange("worker-a", p, "acquired")!.at);
    }
    // Stay cut off well past the TTL, so whatever e still believes about its old leases is stale.
    await new Promise((resolve) => setTimeout(resolve, TTL_MS));
    expect(e.leases.held()).toEqual([]);
    link.heal();
    await waitFor(() => settled([a, e], Math.ceil(P / 2)), {
      description: "e rejoins and the 16 partitions are shared again",
      timeoutMs: 15_000,
      intervalMs: 20,
    });
  });

  it("re-declares the bucket and recovers the leases when an operator deletes it", async () => {
    const workersNow = workers.filter((w) => w.name === "worker-a" || w.name === "worker-e");
    const deletedAt = clock();
    await jsm.streams.delete(`KV_${BUCKET}`);
    await waitFor(() => settled(workersNow, Math.ceil(P / 2)), {
      description: "a and e share the 16 partitions again in a re-created bucket",
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    console.error(`[partition-leases] recovery after the bucket was deleted: ${(clock() - deletedAt).toFixed(0)} ms`);
    const config = (await jsm.streams.info(`KV_${BUCKET}`)).config;
    expect(config).toMatchObject({ max_msgs_per_subject: 1, max_age: nanos(TTL_MS), allow_msg_ttl: true });
  });

  it("never had two workers acting for one partition at the same instant", () => {
    const believers = new Map<number, Set<string>>();
    const overlaps: string[] = [];
    for (const x of [...changes].sort((l, r) => l.at - r.at)) {
      const set = believers.get(x.partition) ?? new Set<string>();
      believers.set(x.partition, set);
      if (x.change === "lost") set.delete(x.worker);
      else {
        if (set.size > 0) overlaps.push(`p${x.partition} acquired by ${x.worker} while ${[...set].join(",")} held it`);
        set.add(x.worker);
      }
    }
    expect(overlaps).toEqual([]);
    expect(changes.length).toBeGreaterThan(P);
  });
});

describe("PartitionLeases on demand, on nats-server", () => {
  const bucket = "partition-leases-on-demand";
  const demandWorkers: PartitionLeases[] = [];
  const conns: NatsConnection[] = [];

  afterAll(async () => {
    for (const leases of demandWorkers) await leases.stop().catch(() => undefined);
    for (const c of conns) await c.close().catch(() => undefined);
  });

  async function startOnDemand(name: string, wanted: number[]): Promise<PartitionLeases> {
    const workerNc = await connect({ servers: nats.url, name, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
    conns.push(workerNc);
    const leases = new PartitionLeases({
      connection: workerNc,
      workerId: name,
      partitions: P,
      bucket,
      ttlMs: TTL_MS,
      onDemand: true,
      clock,
      logger: debugLogger(name),
    });
    demandWorkers.push(leases);
    leases.want(wanted);
    await leases.start();
    return leases;
  }

  /** The partitions with a live lease in the bucket, and who holds each, as the server says. */
  async function storedLeases(): Promise<Map<number, string>> {
    const demandKv = await new Kvm(nc).open(bucket);
    const out = new Map<number, string>();
    for await (const key of await demandKv.keys("p.*")) {
      const entry = await demandKv.get(key);
      if (entry?.operation === "PUT") out.set(Number(key.slice(2)), entry.json<{ worker: string }>().worker);
    }
    return out;
  }

  /** Every wanted partition owned by exactly one worker, as the bucket says, nothing else leased. */
  async function settledOn(members: PartitionLeases[], wanted: number[]): Promise<boolean> {
    const share = Math.ceil(wanted.length / members.length);
    if (members.some((w) => w.held().length > share)) return false;
    for (let p = 0; p < P; p++) {
      const owners = members.filter((w) => w.owns(p)).length;
      if (owners !== (wanted.includes(p) ? 1 : 0)) return false;
    }
    const stored = await storedLeases();
    return (
      [...stored.keys()].sort((x, y) => x - y).join() === [...wanted].sort((x, y) => x - y).join() &&
      [...stored].every(([p, worker]) => members.find((w) => w.owns(p))?.workerId === worker)
    );
  }

  it("may start again after a failed start, once the cause is gone", async () => {
    const retryBucket = "partition-leases-retry";
    const first = await connect({ servers: nats.url, name: "retry-first" });
    conns.push(first);
    const declared = new PartitionLeases({
      connection: first,
      workerId: "retry-first",
      partitions: 8,
      bucket: retryBucket,
    });
    await declared.start();
    await declared.stop();
    const second = await connect({ servers: nats.url, name: "retry-second" });
    conns.push(second);
    const leases = new PartitionLeases({
      connection: second,
      workerId: "retry-second",
      partitions: P,
      bucket: retryBucket,
      ttlMs: TTL_MS,
    });
    await expect(leases.start()).rejects.toThrow(/declared for 8 partitions/);
    await jsm.streams.delete(`KV_${retryBucket}`);
    await leases.start();
    demandWorkers.push(leases);
    await waitFor(() => (leases.held().length === P ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: "the restarted worker leases every partition",
    });
    await expect(leases.start()).rejects.toThrow(/may succeed once/);
  });

  it("stops promptly when stop() follows start() at once, while the first watch is still being set up", async () => {
    // start() resolves before its watch exists; a stop() whose leave write is answered first used to
    // stop no watcher and then wait for ever on the one created after it.
    const quick = await connect({ servers: nats.url, name: "start-stop" });
    conns.push(quick);
    const slow: string[] = [];
    for (let i = 0; i < 60; i++) {
      const leases = new PartitionLeases({
        connection: quick,
        workerId: `start-stop-${i}`,
        partitions: P,
        bucket: "partition-leases-start-stop",
        ttlMs: TTL_MS,
      });
      await leases.start();
      const stopStarted = clock();
      const stopped = await Promise.race([
        leases.stop().then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 2 * TTL_MS)),
      ]);
      if (!stopped) slow.push(`start-stop-${i} still stopping after ${(clock() - stopStarted).toFixed(0)} ms`);
    }
    expect(slow).toEqual([]);
  });

  it("leases only the wanted partitions, shares them, and frees the unwanted ones at once", async () => {
    const wanted = [1, 4, 9, 12];
    const x = await startOnDemand("demand-x", wanted);
    const y = await startOnDemand("demand-y", wanted);
    await waitFor(async () => (await settledOn([x, y], wanted)) || undefined, {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: "four wanted partitions shared by two workers, nothing else leased",
    });
    expect(x.held()).toHaveLength(2);
    expect(y.held()).toHaveLength(2);
    expect(x.wanted()).toBe(4);

    // Two of them lose their tenants: their keys go at once, well before a TTL could expire them.
    const dropped = [...x.held()];
    const narrowed = wanted.filter((p) => !dropped.includes(p));
    const droppedAt = clock();
    x.want(narrowed);
    y.want(narrowed);
    await waitFor(async () => (await settledOn([x, y], narrowed)) || undefined, {
      timeoutMs: 10_000,
      intervalMs: 20,
      description: "unwanted partitions released",
    });
    expect(clock() - droppedAt).toBeLessThan(TTL_MS);
    for (const p of dropped) expect(x.owns(p)).toBe(false);

    // A partition that gains a tenant is taken up by whoever has room.
    const widened = [...narrowed, 15];
    x.want(widened);
    y.want(widened);
    await waitFor(async () => (await settledOn([x, y], widened)) || undefined, {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: "a newly wanted partition leased",
    });
  });
});
