import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { jetstream, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { KvWatchInclude, type KV, type KvWatchEntry } from "@nats-io/kv";
import type { NatsConnection, QueuedIterator } from "@nats-io/transport-node";
import { TerminalError, backoffDelay, describe, sleep } from "@tenantplane/runtime";
import type { Registry } from "prom-client";
import { ensureLeaseBucket, isCasConflict, type LeaseBucketSpec } from "./internal/bucket.js";
import { encodeRecord, memberKey, partitionKey, workerIdSchema, workerOf } from "./internal/keys.js";
import { LeaseMachine, type LeaseEffect, type LossReason, type WriteOutcome } from "./internal/lease-machine.js";
import { WriteQueue } from "./internal/write-queue.js";
import { createLeaseMetrics, type LeaseMetrics } from "./metrics.js";
import { assertPartitionCount, partitionOf } from "./partition-of.js";
import { resolveTimings, type LeaseTimings } from "./timings.js";

export type { LossReason } from "./internal/lease-machine.js";

/** The partition count when none is configured. */
export const DEFAULT_PARTITIONS = 128;

/** The KV bucket name when none is configured. */
export const DEFAULT_LEASE_BUCKET = "tenantplane-partitions";

/** The log methods the leases use; a pino logger fits. */
export interface LeaseLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Options of {@link PartitionLeases}. */
export interface PartitionLeasesOptions {
  /** A connection the caller owns (open it with unlimited reconnects); it is never closed here. */
  connection: NatsConnection;
  /** Unique per process, e.g. {@link defaultWorkerId}: two processes with one id would share leases. */
  workerId: string;
  /** P; every worker of one bucket must use the same. Default {@link DEFAULT_PARTITIONS}. */
  partitions?: number;
  /** KV bucket name. Default {@link DEFAULT_LEASE_BUCKET}. */
  bucket?: string;
  /** Lease lifetime (the bucket's max age); default 6000 ms. Renewal and fence timings derive from it unless given. */
  ttlMs?: number;
  renewIntervalMs?: number;
  fenceMarginMs?: number;
  /**
   * Lease only the partitions named by {@link PartitionLeases.want} (none before the first call),
   * ceil(W / N) each, instead of all P. Idle partitions then cost no writes: with tens of tenants
   * a worker renews tens of leases, not 128 every few seconds, each a replicated stream write.
   */
  onDemand?: boolean;
  /** Replicas when the bucket is created or has fewer; an existing bucket's higher count is kept. Default 1. */
  replicas?: number;
  /** Where the lease metrics are registered; one PartitionLeases per registry. */
  registry?: Registry;
  logger?: LeaseLogger;
  /** Called once this worker owns `partition` (after the create or CAS reply). Must not throw; errors are logged. */
  onAcquired?: (partition: number) => void;
  /** Called the moment this worker stops owning `partition`, before any key is deleted. Must not throw. */
  onLost?: (partition: number, reason: LossReason) => void;
  /** Monotonic milliseconds; default `performance.now`. */
  clock?: () => number;
}

/** A process-unique worker id: the sanitised host name (the pod name in Kubernetes) plus a random suffix. */
export function defaultWorkerId(): string {
  const host = hostname()
    .replace(/[^A-Za-z0-9_-]/g, "-")
    .slice(0, 100);
  return `${host || "worker"}-${randomBytes(4).toString("hex")}`;
}

/** Transient write failures in a row (no success between) after which the watch is rebuilt. */
const WATCH_RESET_AFTER_FAILURES = 4;

/**
 * Lease writes in flight at once. A round renews every held partition (128 of them when one worker
 * holds them all); sent at once, those requests, their replies and the watch entries they cause are
 * all alive when the young generation fills up, so V8 promotes them and the idle heap grows by
 * megabytes a minute until a full collection. A few at a time die young, and a round still takes
 * only P / limit round trips, far below the renew interval.
 */
const WRITES_IN_FLIGHT = 8;

/** The effects that write to the bucket. */
type WriteEffect = Exclude<LeaseEffect, { type: "acquired" } | { type: "lost" }>;

const silent: LeaseLogger = { debug() {}, info() {}, warn() {} };

/**
 * This worker's share of P partitions, leased from a JetStream KV bucket shared with its peers.
 *
 * `start()` joins (membership key `m.<worker>`), watches the bucket and acquires up to ceil(P/N)
 * partitions, or ceil(W/N) of the W wanted ones with `onDemand` (`p.<n>`, created with
 * `kv.create`, renewed with a compare-and-set `kv.update`). A partition is owned from its
 * create/CAS reply until `TTL - fenceMargin` after that request was sent; a failed renewal past
 * that point fences it (owns() turns false and onLost fires), a CAS conflict or a watched expiry
 * loses it at once. `stop()` reports every partition lost and deletes
 * the keys so peers take over without waiting for the TTL.
 */
export class PartitionLeases {
  readonly workerId: string;
  readonly partitions: number;
  readonly bucket: string;
  readonly timings: LeaseTimings;
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly machine: LeaseMachine;
  private readonly clock: () => number;
  private readonly logger: LeaseLogger;
  private readonly metrics: LeaseMetrics | undefined;
  private readonly options: PartitionLeasesOptions;
  /** The value of every key this worker writes, encoded once. */
  private readonly record: Uint8Array;
  private readonly memberKey: string;
  private kv: KV | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** When {@link timer} fires, on {@link clock}'s scale. */
  private timerDue = Number.POSITIVE_INFINITY;
  private watcher: QueuedIterator<KvWatchEntry> | undefined;
  private statusIterator: AsyncIterable<unknown> | undefined;
  private watchLoop: Promise<void> | undefined;
  private readonly halt = new AbortController();
  private readonly pending = new Set<Promise<void>>();
  private readonly writes = new WriteQueue<WriteEffect>(WRITES_IN_FLIGHT, (effect) => this.startWrite(effect));
  private jsm: JetStreamManager | undefined;
  /** A bucket check not sent yet, which creates answered since may still join. */
  private nextBucketCheck: Promise<void> | undefined;
  private state: "new" | "starting" | "running" | "stopping" | "stopped" = "new";
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private failuresInARow = 0;
  private incarnation: string | undefined;
  /** Lease writes wait while true: from a disconnect until the bucket's identity is re-checked. */
  private suspended = false;
  private disconnects = 0;
  /** A heartbeat written but not yet seen on the watch. */
  private echo: { revision: number; due: number } | undefined;
  /** Revisions of this worker's membership key the current watch delivered (recent ones only). */
  private readonly ownEntriesSeen = new Set<number>();

  constructor(options: PartitionLeasesOptions) {
    this.options = options;
    const id = workerIdSchema.safeParse(options.workerId);
    if (!id.success) {
      throw new TerminalError(
        `workerId ${JSON.stringify(options.workerId)} is not usable as a KV key token: ${id.error.issues[0]?.message ?? "invalid"}`,
        { code: "InvalidWorkerId" },
      );
    }
    this.workerId = id.data;
    this.record = new TextEncoder().encode(encodeRecord(this.workerId));
    this.memberKey = memberKey(this.workerId);
    this.partitions = options.partitions ?? DEFAULT_PARTITIONS;
    assertPartitionCount(this.partitions);
    this.bucket = options.bucket ?? DEFAULT_LEASE_BUCKET;
    this.timings = resolveTimings({
      ttlMs: options.ttlMs,
      renewIntervalMs: options.renewIntervalMs,
      fenceMarginMs: options.fenceMarginMs,
    });
    this.nc = options.connection;
    // A request outliving the renew interval is worth less than the next round's fresh attempt.
    this.js = jetstream(this.nc, { timeout: Math.min(5_000, this.timings.renewIntervalMs) });
    this.machine = new LeaseMachine({
      self: this.workerId,
      partitions: this.partitions,
      timings: this.timings,
      onDemand: options.onDemand ?? false,
    });
    this.clock = options.clock ?? (() => performance.now());
    this.logger = options.logger ?? silent;
    this.metrics = options.registry ? createLeaseMetrics(options.registry, this) : undefined;
  }

  /**
   * Declares the bucket, joins and starts leasing. Rejects if NATS cannot be reached or the bucket
   * is declared for another partition count, and may then be called again; once it resolved, NATS
   * trouble only fences partitions.
   */
  start(): Promise<void> {
    if (this.state !== "new") return Promise.reject(new Error("PartitionLeases.start() may succeed once"));
    this.starting = this.join();
    return this.starting;
  }

  private async join(): Promise<void> {
    this.state = "starting";
    try {
      const bucket = await ensureLeaseBucket(this.js, this.bucketSpec());
      // Join before watching, so the watch's snapshot already counts this worker.
      await bucket.kv.put(this.memberKey, this.record);
      this.kv = bucket.kv;
      this.incarnation = bucket.incarnation;
      this.machine.holdOff(this.clock() + this.youngBucketWait(bucket.createdAt));
    } catch (err) {
      // Nothing was leased yet: a caller may try again (a NATS cluster still electing its leader).
      this.state = "new";
      throw err;
    }
    this.state = "running";
    this.watchLoop = this.watch();
    void this.followConnection();
    this.apply((now) => this.machine.tick(now));
    this.logger.info(
      { worker: this.workerId, bucket: this.bucket, partitions: this.partitions, ...this.timings },
      "partition leases started",
    );
  }

  /**
   * Reports every owned partition lost, deletes this worker's keys (peers take over at once) and
   * stops watching. Waits at most one TTL for the deletes; keys it could not delete expire by themselves.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  /** True while this worker may act for `partition`; false once fenced, lost or released. */
  owns(partition: number): boolean {
    return this.machine.owns(partition, this.clock());
  }

  /** True while this worker may act for the tenant's partition. */
  ownsTenant(tenant: string): boolean {
    return this.owns(partitionOf(tenant, this.partitions));
  }

  /**
   * Milliseconds this worker may still act for the tenant's partition: until the fence deadline
   * (`TTL - fenceMargin` after the last confirmed renewal was sent), 0 once fenced, lost or
   * released. A request sent now should be done by then.
   */
  tenantValidForMs(tenant: string): number {
    return this.machine.validFor(partitionOf(tenant, this.partitions), this.clock());
  }

  /**
   * With `onDemand`, the partitions work maps to now (the whole set): the wanted ones are shared
   * out, held ones no longer wanted are released at once. Callable before start().
   */
  want(partitions: Iterable<number>): void {
    const wanted = [...partitions];
    if (this.state === "new" || this.state === "starting") {
      // Nothing is held yet: the set only steers what start() reaches for.
      this.machine.want(wanted, this.clock());
      return;
    }
    this.apply((now) => this.machine.want(wanted, now));
  }

  /** {@link want} for the partitions of these tenants. */
  wantTenants(tenants: Iterable<string>): void {
    const partitions = new Set<number>();
    for (const tenant of tenants) partitions.add(partitionOf(tenant, this.partitions));
    this.want(partitions);
  }

  /** The partitions this worker owns now, ascending. */
  held(): number[] {
    return this.machine.held(this.clock());
  }

  /** How many partitions are to be leased among all workers: P, or the wanted ones on demand. */
  wanted(): number {
    return this.machine.wantedCount();
  }

  /** Live members as last seen on the watch, this worker included. */
  members(): number {
    return this.machine.memberCount();
  }

  private async shutdown(): Promise<void> {
    // A stop() racing start() lets the start finish, then undoes it like any other.
    await this.starting?.catch(() => undefined);
    if (this.state !== "running") {
      this.state = "stopped";
      return;
    }
    this.state = "stopping";
    this.apply((now) => this.machine.stop(now));
    const deadline = sleep(this.timings.ttlMs, this.halt.signal);
    while (this.pending.size > 0 || !this.machine.drained()) {
      const settled = await Promise.race([
        Promise.race([...this.pending]).then(() => false),
        deadline.then(() => true),
      ]);
      if (settled) {
        this.logger.warn({ worker: this.workerId }, "leases not all released in time; they expire by themselves");
        break;
      }
    }
    this.state = "stopped";
    this.halt.abort();
    clearTimeout(this.timer);
    this.watcher?.stop();
    (this.statusIterator as { stop?: () => void } | undefined)?.stop?.();
    await this.watchLoop;
    this.logger.info({ worker: this.workerId }, "partition leases stopped");
  }

  /** Runs one machine input at the current time, carries out its effects and re-arms the timer. */
  private apply(input: (now: number) => LeaseEffect[]): void {
    if (this.state === "stopped" || this.state === "new") return;
    const effects = input(this.clock());
    for (const effect of effects) this.perform(effect);
    this.schedule();
  }

  private schedule(): void {
    if (this.state !== "running") {
      clearTimeout(this.timer);
      this.timer = undefined;
      return;
    }
    const now = this.clock();
    const due = now + Math.min(this.timings.renewIntervalMs, Math.max(0, this.machine.nextWakeAt(now) - now));
    // A timer already due no later is kept: waking early only runs a tick with nothing to do, while
    // re-arming on every watch entry and reply would cost a timer a time, hundreds a round.
    if (this.timer !== undefined && this.timerDue <= due) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(this.wake, due - now);
  }

  private readonly wake = () => {
    this.timer = undefined;
    this.checkEcho();
    this.apply((now) => this.machine.tick(now));
  };

  private perform(effect: LeaseEffect): void {
    switch (effect.type) {
      case "acquired":
        this.metrics?.changes.inc({ change: "acquired", reason: "" });
        this.logger.info({ worker: this.workerId, partition: effect.partition }, "partition acquired");
        this.notify(() => this.options.onAcquired?.(effect.partition));
        return;
      case "lost": {
        this.metrics?.changes.inc({ change: "lost", reason: effect.reason });
        const quiet = effect.reason === "shed" || effect.reason === "released" || effect.reason === "unwanted";
        const line = { worker: this.workerId, partition: effect.partition, reason: effect.reason };
        if (quiet) this.logger.info(line, "partition handed over");
        else this.logger.warn(line, "partition lost");
        this.notify(() => this.options.onLost?.(effect.partition, effect.reason));
        return;
      }
      default:
        this.writes.push(effect);
    }
  }

  /** Sends one queued write in its turn (see {@link WRITES_IN_FLIGHT}) and feeds its outcome back. */
  private startWrite(effect: WriteEffect): Promise<void> {
    const kv = this.kv!;
    switch (effect.type) {
      case "heartbeat":
        return this.track(
          this.guarded(() => kv.put(this.memberKey, this.record)).then(
            (revision) => {
              this.failuresInARow = 0;
              // The watch may deliver the write before its reply arrives. Keep the oldest unechoed
              // heartbeat: replacing it each round would push the deadline forever.
              if (!this.ownEntriesSeen.has(revision)) {
                this.echo ??= { revision, due: this.clock() + this.timings.renewIntervalMs };
              }
            },
            (err: unknown) => this.failed("heartbeat", err),
          ),
        );
      case "leave":
        return this.track(
          this.guarded(() => kv.delete(this.memberKey)).catch((err: unknown) => this.failed("leave", err)),
        );
      case "acquire":
        return this.write(
          async () => {
            const revision = await kv.create(partitionKey(effect.partition), this.record);
            await this.assertSameBucket();
            return revision;
          },
          (outcome, now) => this.machine.acquireResult(effect.partition, outcome, now),
          "acquire",
        );
      case "renew":
        return this.write(
          () => kv.update(partitionKey(effect.partition), this.record, effect.revision),
          (outcome, now) => this.machine.renewResult(effect.partition, outcome, now),
          "renew",
        );
      case "release":
        return this.write(
          async () => {
            await kv.delete(partitionKey(effect.partition), { previousSeq: effect.revision });
            return 0;
          },
          (outcome, now) => this.machine.releaseResult(effect.partition, effect.revision, outcome, now),
          "release",
        );
    }
  }

  /** Runs `send` unless the leases stopped while the write waited for its turn. */
  private guarded<T>(send: () => Promise<T>): Promise<T> {
    if (this.state === "stopped") return Promise.reject(new Error("partition leases stopped"));
    try {
      return send();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private write(
    send: () => Promise<number>,
    done: (outcome: WriteOutcome, now: number) => LeaseEffect[],
    what: "acquire" | "renew" | "release",
  ): Promise<void> {
    // The lease's life starts no later than the request leaves: the server stores it after that.
    const sentAt = this.clock();
    // After a reconnect the bucket may be a re-created one whose sequence numbers restarted: a
    // CAS on a revision from before could match a stranger's entry. Write once it is re-checked.
    const request = this.suspended
      ? Promise.reject(new Error("waiting to re-check the lease bucket after a reconnect"))
      : this.guarded(send);
    return this.track(
      request.then(
        (revision) => {
          this.failuresInARow = 0;
          this.apply((now) => done({ ok: true, revision, sentAt }, now));
        },
        (err: unknown) => {
          const conflict = isCasConflict(err);
          // A conflicting create is the normal race for a free partition, not a failure.
          if (what !== "acquire" || !conflict) this.failed(what, err, conflict);
          this.apply((now) => done({ ok: false, conflict }, now));
        },
      ),
    );
  }

  /**
   * The watch must echo this worker's own heartbeat within a renew interval. A watch whose
   * consumer vanished (its stream was deleted and re-created) delivers nothing and reports no
   * error, so silence about our own write is the signal to rebuild it.
   */
  private checkEcho(): void {
    if (this.state !== "running" || this.echo === undefined || this.clock() < this.echo.due) return;
    this.logger.warn({ worker: this.workerId }, "lease watch did not echo this worker's heartbeat; restarting it");
    this.echo = undefined;
    this.watcher?.stop();
  }

  /**
   * Declares the bucket again. A bucket re-created since we last looked restarted its sequence
   * numbers, so no revision from before can be trusted and holders of the old bucket may still
   * believe in their leases: void every lease and acquire nothing for one TTL.
   */
  private async redeclare(): Promise<void> {
    const disconnects = this.disconnects;
    const bucket = await ensureLeaseBucket(this.js, this.bucketSpec());
    this.kv = bucket.kv;
    if (bucket.incarnation !== this.incarnation) {
      this.logger.warn(
        { worker: this.workerId, bucket: this.bucket },
        "lease bucket was re-created; every lease is void",
      );
      this.incarnation = bucket.incarnation;
      this.apply((now) => this.machine.resetLeases(now, now + this.timings.ttlMs));
    }
    this.machine.holdOff(this.clock() + this.youngBucketWait(bucket.createdAt));
    if (this.disconnects === disconnects) this.suspended = false;
  }

  /**
   * How long to wait before acquiring in a bucket created less than a TTL ago: it may replace a
   * deleted one whose holders have not fenced yet. Compares the server's creation time with this
   * host's wall clock, so it is as good as their synchronisation.
   */
  private youngBucketWait(createdAt: number): number {
    return Number.isFinite(createdAt)
      ? Math.max(0, Math.min(this.timings.ttlMs, createdAt + this.timings.ttlMs - Date.now()))
      : 0;
  }

  /**
   * A create succeeds on any empty key, including one in a bucket re-created behind this worker's
   * back while the old one's holders still trust their leases. Reading the bucket's creation time
   * after the create proves the create landed in the incarnation this worker knows; otherwise the
   * create is not trusted and the watch is rebuilt (which voids every lease and holds off).
   */
  private assertSameBucket(): Promise<void> {
    // One read sent after several creates were answered vouches for all of them, so the creates of
    // a round (up to P at start or after a failover) share one read that waits for the next turn.
    this.nextBucketCheck ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      this.nextBucketCheck = undefined;
      // Without the account check jetstreamManager() makes by default: the stream read is the check.
      this.jsm ??= await this.js.jetstreamManager(false);
      const info = await this.jsm.streams.info(`KV_${this.bucket}`);
      if (info.created !== this.incarnation) {
        this.watcher?.stop();
        throw new Error(`KV bucket ${this.bucket} was re-created; the create is not trusted`);
      }
    });
    return this.nextBucketCheck;
  }

  /** The worker a stored record names; this worker's own records (most of what it sees) are not parsed. */
  private ownerOf(value: Uint8Array): string | undefined {
    const own = this.record;
    if (value.length === own.length && value.every((byte, i) => byte === own[i])) return this.workerId;
    return workerOf(value);
  }

  private echoed(revision: number): void {
    if (this.ownEntriesSeen.size >= 64) this.ownEntriesSeen.clear();
    this.ownEntriesSeen.add(revision);
    if (this.echo !== undefined && revision >= this.echo.revision) this.echo = undefined;
  }

  private bucketSpec(): LeaseBucketSpec {
    return {
      name: this.bucket,
      ttlMs: this.timings.ttlMs,
      markerTtlMs: this.timings.ttlMs,
      replicas: this.options.replicas ?? 1,
      partitions: this.partitions,
    };
  }

  private failed(what: string, err: unknown, conflict = false): void {
    if (!conflict && this.state === "running" && ++this.failuresInARow >= WATCH_RESET_AFTER_FAILURES) {
      // Writes keep failing while the watch is quiet: the bucket may be gone or the watch stuck.
      // Restarting the watch re-declares the bucket and rebuilds the view from the server.
      this.failuresInARow = 0;
      this.watcher?.stop();
    }
    if (what === "renew" || what === "heartbeat") {
      this.metrics?.renewFailures.inc({
        key: what === "renew" ? "partition" : "member",
        reason: conflict ? "conflict" : "error",
      });
    }
    // While disconnected every write fails the same way; the disconnect was logged once.
    if ((this.state === "running" || this.state === "stopping") && !this.suspended) {
      this.logger.warn({ worker: this.workerId, err: describe(err), conflict }, `lease ${what} failed`);
    }
  }

  private track(work: Promise<void>): Promise<void> {
    const tracked = work.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    return tracked;
  }

  private notify(callback: () => void): void {
    try {
      callback();
    } catch (err) {
      this.logger.warn({ worker: this.workerId, err: describe(err) }, "partition lease listener threw");
    }
  }

  /**
   * Feeds the bucket's entries to the machine. The first pass delivers the current value of every
   * key; acquisitions wait until it is complete. Whenever the watch ends (or the connection
   * reconnects) the view is dropped and rebuilt from a fresh watch.
   */
  private async watch(): Promise<void> {
    for (let attempt = 0; this.state === "running" || this.state === "stopping"; attempt++) {
      let fallback: NodeJS.Timeout | undefined;
      try {
        // Every watch after the first re-declares the bucket: an operator may have deleted it.
        if (this.watcher !== undefined) await this.redeclare();
        const iterator = await this.kv!.watch({ include: KvWatchInclude.LastValue });
        if (this.halt.signal.aborted) {
          // stop() finished while the watch was being created and stopped whatever watcher it saw:
          // this one is nobody's to stop, and iterating it would keep stop() waiting for ever.
          iterator.stop();
          return;
        }
        this.watcher = iterator;
        let ready = false;
        const markReady = () => {
          if (ready || this.watcher !== iterator) return;
          ready = true;
          this.apply((now) => this.machine.markReady(now));
        };
        // A watch that starts on an empty bucket never flags its snapshot as complete.
        fallback = setTimeout(markReady, this.timings.renewIntervalMs);
        this.echo = undefined;
        this.ownEntriesSeen.clear();
        for await (const entry of iterator) {
          attempt = 0;
          // Each getter of a watch entry decodes afresh, and this runs for every renewal of every worker.
          const key = entry.key;
          const operation = entry.operation;
          const observation = {
            key,
            operation,
            revision: entry.revision,
            worker: operation === "PUT" ? this.ownerOf(entry.value) : undefined,
          };
          if (key === this.memberKey) this.echoed(observation.revision);
          this.apply((now) => this.machine.observe(observation, now));
          if (entry.isUpdate) markReady();
        }
      } catch (err) {
        if (this.state === "running")
          this.logger.warn({ worker: this.workerId, err: describe(err) }, "lease watch failed");
      } finally {
        clearTimeout(fallback);
      }
      if (this.state !== "running") return;
      this.machine.resetView();
      if (this.nc.isClosed()) {
        // The owner closed the connection: nothing will come back; leases fence and stop() cleans up.
        this.logger.warn({ worker: this.workerId }, "NATS connection closed; lease watch stopped");
        return;
      }
      await sleep(backoffDelay(attempt, 100, 2_000), this.halt.signal);
    }
  }

  /** A reconnect may have missed entries (or met a restarted server): rebuild the view from a fresh watch. */
  private async followConnection(): Promise<void> {
    const statuses = this.nc.status();
    this.statusIterator = statuses;
    for await (const status of statuses) {
      if (this.state === "stopped") return;
      if (status.type === "reconnect") {
        this.logger.info({ worker: this.workerId }, "NATS reconnected; restarting the lease watch");
        // Re-check the bucket at once rather than after the watch loop's backoff: writes wait for it.
        this.redeclare().catch((err: unknown) =>
          this.logger.warn({ worker: this.workerId, err: describe(err) }, "lease bucket re-check failed"),
        );
        this.watcher?.stop();
      } else if (status.type === "disconnect") {
        this.disconnects++;
        this.suspended = true;
        this.logger.warn({ worker: this.workerId }, "NATS disconnected; leases fence if it lasts");
      }
    }
  }
}
