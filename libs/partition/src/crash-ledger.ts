import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { Kvm, type KV, type KvEntry } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { describe, sleep } from "@tenantplane/runtime";
import { isCasConflict } from "./internal/bucket.js";
import { encodeRecord, memberKey, workerOf } from "./internal/keys.js";
import {
  countCrash,
  parseRecord,
  probationUntil,
  recentCrashes,
  release,
  type Crash,
  type CrashPolicy,
  type CrashRecord,
} from "./crash-policy.js";
import type { LeaseLogger } from "./partition-leases.js";

/** The crash ledger's KV bucket when none is configured. */
export const DEFAULT_CRASH_BUCKET = "tenantplane-crashes";

/** Options of {@link CrashLedger}. */
export interface CrashLedgerOptions {
  /** A connection the caller owns; never closed here. */
  connection: NatsConnection;
  /** This worker's id in the lease bucket (its membership key is `m.<workerId>`). */
  workerId: string;
  /** The partition lease bucket: a marker's worker is alive while its membership key is. */
  leaseBucket: string;
  /** The lease TTL: how long a live worker's marker is waited for before it is taken over uncounted. */
  leaseTtlMs: number;
  bucket?: string;
  policy: CrashPolicy;
  replicas?: number;
  /** A busy marker stays this long after the tenant's last work, so short gaps cost no writes. */
  idleMs?: number;
  logger?: LeaseLogger;
  /** Epoch milliseconds (records are read by other workers, so wall clock). */
  now?: () => number;
}

/** What the ledger says about starting a tenant on this worker. */
export type Admission =
  /** Sync it; until `probationUntil` (epoch ms), the caller runs its work alone. */
  | { verdict: "run"; probationUntil: number | undefined; counted?: Counted; released?: boolean }
  /** A live worker's marker is still there (it is handing the tenant over): ask again shortly. */
  | { verdict: "wait"; worker: string }
  /** Quarantined: no worker syncs it until an operator releases it. */
  | { verdict: "quarantined"; record: CrashRecord; counted?: Counted };

/** A crash this worker just counted against a tenant. */
export interface Counted {
  crash: Crash;
  /** Crashes within the window, this one included. */
  recent: Crash[];
  quarantinedNow: boolean;
}

interface Marker {
  /** The revision of our marker once written. */
  revision?: number;
  writing?: Promise<void>;
  /** Pending delete after the idle delay. */
  idleTimer?: NodeJS.Timeout;
}

const CAS_ATTEMPTS = 8;
const silent: LeaseLogger = { debug() {}, info() {}, warn() {} };

/**
 * Which tenant crashed a worker, kept in a JetStream KV bucket shared by the workers:
 * - `b.<tenant>` (busy marker): `{worker}` while that worker is doing work for the tenant
 *   (warming its caches, planning or writing one of its objects), deleted when it has been
 *   idle for a moment or the worker lets it go;
 * - `c.<tenant>` (crash record, see crash-policy.ts): the crashes counted, and the quarantine.
 *
 * A worker that dies leaves its markers behind. The next worker to start a tenant reads its
 * marker: if the worker named there is no longer a member of the lease bucket (its membership
 * expired, which a SIGTERM hand-over never lets happen), that is a crash, counted once (the
 * marker is deleted with a compare-and-set, so only one counter wins). Counting is per tenant,
 * so a tenant that was idle when its worker died is never blamed.
 */
export class CrashLedger {
  private readonly js: JetStreamClient;
  private readonly logger: LeaseLogger;
  private readonly now: () => number;
  private readonly bucket: string;
  private readonly idleMs: number;
  private readonly markers = new Map<string, Marker>();
  private readonly waitingSince = new Map<string, number>();
  private readonly clearing = new Set<Promise<void>>();
  private readonly record: Uint8Array;
  private kv: KV | undefined;
  private leases: KV | undefined;

  constructor(private readonly options: CrashLedgerOptions) {
    this.js = jetstream(options.connection, { timeout: 5_000 });
    this.logger = options.logger ?? silent;
    this.now = options.now ?? Date.now;
    this.bucket = options.bucket ?? DEFAULT_CRASH_BUCKET;
    this.idleMs = options.idleMs ?? 1_000;
    this.record = new TextEncoder().encode(encodeRecord(options.workerId));
  }

  /** The policy crashes are counted with. */
  get policy(): CrashPolicy {
    return this.options.policy;
  }

  /** Declares the bucket (history 1, no expiry: a quarantine lasts until released) and opens the lease bucket. */
  async start(): Promise<void> {
    const kvm = new Kvm(this.js);
    // An existing bucket is used as it is (an operator may have raised its replicas).
    this.kv = await kvm.create(this.bucket, {
      history: 1,
      replicas: this.options.replicas ?? 1,
      description: "tenantplane sync: which tenant was busy on which worker, crashes counted and quarantines",
    });
    this.leases = await kvm.open(this.options.leaseBucket);
  }

  /**
   * Counts a crash a dead worker's marker shows, then says whether the tenant may run here.
   * `releaseToken` is the TenantCluster's release annotation (undefined when absent).
   */
  async admit(tenant: string, releaseToken: string | undefined): Promise<Admission> {
    const kv = this.open();
    let counted: Counted | undefined;
    const marker = await kv.get(busyKey(tenant));
    const worker = marker?.operation === "PUT" ? workerOf(marker.value) : undefined;
    if (marker && worker !== undefined && worker !== this.options.workerId) {
      if (await this.alive(worker)) {
        // A worker handing over deletes its marker when it stops the tenant; one that is alive but
        // keeps it longer than a lease lifetime lost it some other way, and is not a crash.
        const since = this.waitingSince.get(tenant) ?? this.now();
        this.waitingSince.set(tenant, since);
        if (this.now() - since < 2 * this.options.leaseTtlMs) return { verdict: "wait", worker };
      } else {
        counted = await this.countCrash(tenant, marker, worker, releaseToken);
      }
    }
    this.waitingSince.delete(tenant);
    let record = await this.read(tenant);
    if (record.value.quarantined !== undefined) {
      const released = release(record.value, releaseToken, this.now());
      if (released === undefined) {
        return { verdict: "quarantined", record: record.value, ...(counted ? { counted } : {}) };
      }
      record = await this.write(tenant, () => released);
      if (record.value.quarantined !== undefined) return { verdict: "quarantined", record: record.value };
      return {
        verdict: "run",
        probationUntil: probationUntil(record.value, this.options.policy, this.now()),
        released: true,
      };
    }
    return {
      verdict: "run",
      probationUntil: probationUntil(record.value, this.options.policy, this.now()),
      ...(counted ? { counted } : {}),
    };
  }

  /** The crashes of `tenant` within the window, as stored now. */
  async recent(tenant: string): Promise<Crash[]> {
    return recentCrashes((await this.read(tenant)).value, this.options.policy, this.now());
  }

  /** Marks `tenant` busy on this worker; resolves once the marker is stored, so a crash after it is seen. */
  busy(tenant: string): Promise<void> {
    let marker = this.markers.get(tenant);
    if (marker === undefined) this.markers.set(tenant, (marker = {}));
    clearTimeout(marker.idleTimer);
    marker.idleTimer = undefined;
    if (marker.revision !== undefined) return Promise.resolve();
    const m = marker;
    m.writing ??= this.open()
      .put(busyKey(tenant), this.record)
      .then(
        (revision) => {
          m.revision = revision;
        },
        (err: unknown) => {
          // Fail open: a ledger outage must not stop syncing; the crash would go uncounted.
          this.logger.warn({ tenant, err: describe(err) }, "busy marker not written");
        },
      )
      .finally(() => (m.writing = undefined));
    return m.writing;
  }

  /** The tenant has no work on this worker now: its marker goes after the idle delay unless work returns. */
  idle(tenant: string): void {
    const marker = this.markers.get(tenant);
    if (marker === undefined || marker.idleTimer !== undefined) return;
    marker.idleTimer = setTimeout(() => void this.clear(tenant), this.idleMs);
    marker.idleTimer.unref();
  }

  /**
   * Deletes at once the markers of every tenant but `except` that has no work (idle, waiting for
   * its delay): a tenant on probation then runs with no other tenant marked busy.
   */
  async quiet(except: string): Promise<void> {
    const idle = [...this.markers].filter(([t, m]) => t !== except && m.idleTimer !== undefined).map(([t]) => t);
    await Promise.all(idle.map((t) => this.clear(t)));
  }

  /** Deletes the tenant's marker now (the worker stopped it, or it went idle). */
  clear(tenant: string): Promise<void> {
    const marker = this.markers.get(tenant);
    if (marker === undefined) return Promise.resolve();
    this.markers.delete(tenant);
    clearTimeout(marker.idleTimer);
    const clearing = this.deleteMarker(tenant, marker).finally(() => this.clearing.delete(clearing));
    this.clearing.add(clearing);
    return clearing;
  }

  private async deleteMarker(tenant: string, marker: Marker): Promise<void> {
    await marker.writing;
    if (marker.revision === undefined) return;
    // Only our own marker: a new owner may have written its own since.
    await this.open()
      .delete(busyKey(tenant), { previousSeq: marker.revision })
      .catch((err: unknown) => {
        if (!isCasConflict(err)) this.logger.warn({ tenant, err: describe(err) }, "busy marker not deleted");
      });
  }

  /** Deletes every marker of this worker, those being deleted already included (a clean shutdown is no crash). */
  async stop(): Promise<void> {
    for (const tenant of [...this.markers.keys()]) void this.clear(tenant);
    await Promise.all([...this.clearing]);
  }

  private async countCrash(
    tenant: string,
    marker: KvEntry,
    worker: string,
    releaseToken: string | undefined,
  ): Promise<Counted | undefined> {
    // Whoever deletes the marker counts the crash: two workers finding it never count it twice.
    try {
      await this.open().delete(busyKey(tenant), { previousSeq: marker.revision });
    } catch (err) {
      if (isCasConflict(err)) return undefined;
      throw err;
    }
    const crash: Crash = { worker, at: this.now(), marker: marker.revision };
    let outcome: ReturnType<typeof countCrash> | undefined;
    await this.write(tenant, (record) => {
      outcome = countCrash(record, crash, this.options.policy, this.now(), releaseToken);
      return outcome.counted ? outcome.record : undefined;
    });
    if (outcome === undefined || !outcome.counted) return undefined;
    this.logger.warn(
      { tenant, worker, crashes: outcome.recent.length, quarantined: outcome.quarantinedNow },
      "a sync worker died while busy with this tenant",
    );
    return { crash, recent: outcome.recent, quarantinedNow: outcome.quarantinedNow };
  }

  private async alive(worker: string): Promise<boolean> {
    const entry = await this.leases!.get(memberKey(worker));
    return entry?.operation === "PUT";
  }

  private async read(tenant: string): Promise<{ value: CrashRecord; revision: number }> {
    const entry = await this.open().get(crashKey(tenant));
    if (entry === null || entry.operation !== "PUT") return { value: parseRecord(undefined), revision: 0 };
    return { value: parseRecord(entry.string()), revision: entry.revision };
  }

  /** Read-modify-write with compare-and-set; `change` returning undefined writes nothing. */
  private async write(
    tenant: string,
    change: (record: CrashRecord) => CrashRecord | undefined,
  ): Promise<{ value: CrashRecord; revision: number }> {
    const kv = this.open();
    for (let attempt = 0; ; attempt++) {
      const current = await this.read(tenant);
      const next = change(current.value);
      if (next === undefined) return current;
      const text = JSON.stringify(next);
      try {
        const revision =
          current.revision === 0
            ? await kv.create(crashKey(tenant), text)
            : await kv.update(crashKey(tenant), text, current.revision);
        return { value: next, revision };
      } catch (err) {
        if (attempt >= CAS_ATTEMPTS || !isCasConflict(err)) throw err;
        await sleep(10 * (attempt + 1));
      }
    }
  }

  private open(): KV {
    if (this.kv === undefined) throw new Error("CrashLedger.start() must resolve first");
    return this.kv;
  }
}

function busyKey(tenant: string): string {
  return `b.${tenant}`;
}

function crashKey(tenant: string): string {
  return `c.${tenant}`;
}
