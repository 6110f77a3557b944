import { fnv1a32 } from "../partition-of.js";
import type { LeaseTimings } from "../timings.js";
import { parseKey } from "./keys.js";

/** Why a worker stopped owning a partition. */
export type LossReason =
  /** The last successful renewal is older than TTL minus the fence margin: the holder may no longer be the owner. */
  | "fenced"
  /** A renewal's compare-and-set failed: the key changed under us. */
  | "conflict"
  /** The watch saw the key deleted or expired by the server. */
  | "expired"
  /** The watch saw another worker's write to the key. */
  | "taken"
  /** Given up because a new member lowered this worker's share. */
  | "shed"
  /** Given up because this worker is stopping. */
  | "released"
  /** Given up because no work maps to it any more (see {@link LeaseMachineOptions.onDemand}). */
  | "unwanted"
  /** The bucket was deleted or re-created: every lease in it is void. */
  | "reset";

/** What the machine asks its driver to do or announce, in the order given. */
export type LeaseEffect =
  | { type: "acquired"; partition: number }
  | { type: "lost"; partition: number; reason: LossReason }
  /** Write this worker's membership key. */
  | { type: "heartbeat" }
  /** Delete this worker's membership key. */
  | { type: "leave" }
  /** `kv.create` the partition key. */
  | { type: "acquire"; partition: number }
  /** `kv.update` the partition key at `revision`. */
  | { type: "renew"; partition: number; revision: number }
  /** Delete the partition key, only if it is still at `revision`. */
  | { type: "release"; partition: number; revision: number };

/** One entry seen by the bucket watcher. `worker` is the parsed owner of a PUT. */
export interface KeyObservation {
  key: string;
  operation: "PUT" | "DEL" | "PURGE";
  revision: number;
  worker?: string | undefined;
}

/**
 * How a write ended. `sentAt` is when the request left, never when the reply came: the server
 * stored the message (and started its max age) no earlier than that.
 */
export type WriteOutcome = { ok: true; revision: number; sentAt: number } | { ok: false; conflict: boolean };

type Mine =
  | { state: "acquiring"; releaseOnSuccess: boolean }
  | { state: "held"; revision: number; validUntil: number; renewing: boolean }
  /** Possibly ours at the server (fenced, or a write whose reply was lost), but not trusted until a CAS succeeds. */
  | { state: "unconfirmed"; revision: number; renewing: boolean }
  | { state: "releasing"; revision: number; renewing: boolean; deleting: boolean };

/** Construction parameters of {@link LeaseMachine}. */
export interface LeaseMachineOptions {
  self: string;
  partitions: number;
  timings: LeaseTimings;
  /**
   * Lease only the partitions named by {@link LeaseMachine.want} (none until it is called), and
   * share them out: ceil(W / live members) each, for W wanted partitions. Without it every
   * partition is leased, ceil(P / live members) each, whether or not any work maps to it.
   */
  onDemand?: boolean;
}

/**
 * The lease protocol as a pure state machine: it never reads a clock or touches NATS. Inputs are
 * ticks, watch observations and write outcomes, each with the current time; outputs are
 * {@link LeaseEffect}s. Ownership is granted only by a successful create or CAS update (with its
 * returned revision) and ends at `sentAt + ttl - fenceMargin`, before the server could expire the key.
 */
export class LeaseMachine {
  readonly self: string;
  readonly partitions: number;
  readonly timings: LeaseTimings;
  private readonly mine = new Map<number, Mine>();
  /** Current owner per partition as the watch reports it (PUT entries only). */
  private readonly view = new Map<number, { worker: string | undefined; revision: number }>();
  /** Highest revision seen per key, so a replayed or stale entry never overrides a newer one. */
  private readonly seen = new Map<string, number>();
  private readonly members = new Set<string>();
  private readonly cooldownUntil = new Map<number, number>();
  /** Acquisition order: a per-worker ranking so concurrent workers reach for different free partitions. */
  private readonly preference: readonly number[];
  /** The partitions to lease; undefined means all of them. */
  private wanted: ReadonlySet<number> | undefined;
  private ready = false;
  private stopping = false;
  private holdOffUntil = Number.NEGATIVE_INFINITY;
  private nextRoundAt = Number.NEGATIVE_INFINITY;
  /**
   * No held lease reaches its fence deadline before this. It may be earlier than the earliest
   * deadline (a renewal moved that one on): the next fence() then finds nothing due and corrects it.
   */
  private fenceCheckAt = Number.POSITIVE_INFINITY;

  constructor(options: LeaseMachineOptions) {
    this.self = options.self;
    this.partitions = options.partitions;
    this.timings = options.timings;
    const score = (p: number) => fnv1a32(`${this.self}#${p}`);
    this.preference = Array.from({ length: this.partitions }, (_, p) => p).sort((a, b) => score(b) - score(a) || a - b);
    this.wanted = options.onDemand ? new Set() : undefined;
  }

  /**
   * The partitions work maps to now (the whole set, not a change). Partitions this worker holds
   * and no longer wants are released at once; the share is recomputed over the wanted ones.
   */
  want(partitions: Iterable<number>, now: number): LeaseEffect[] {
    const wanted = new Set<number>();
    for (const p of partitions) if (Number.isInteger(p) && p >= 0 && p < this.partitions) wanted.add(p);
    this.wanted = wanted;
    const out: LeaseEffect[] = [];
    this.fence(now, out);
    for (const [partition, m] of this.mine) {
      if (wanted.has(partition)) continue;
      if (m.state === "acquiring") m.releaseOnSuccess = true;
      else if (m.state !== "releasing") {
        this.release(partition, m.revision, m.state === "held" && now < m.validUntil, out, "unwanted");
      }
    }
    this.balance(now, out);
    return out;
  }

  /** True while this worker may act for `partition`: a CAS-confirmed lease that has not reached its fence deadline. */
  owns(partition: number, now: number): boolean {
    const m = this.mine.get(partition);
    return m?.state === "held" && now < m.validUntil;
  }

  /** Milliseconds `partition` stays owned from `now` (its fence deadline minus now); 0 when not owned. */
  validFor(partition: number, now: number): number {
    const m = this.mine.get(partition);
    return m?.state === "held" ? Math.max(0, m.validUntil - now) : 0;
  }

  /** The partitions {@link owns} is true for, ascending. */
  held(now: number): number[] {
    return [...this.mine.keys()].filter((p) => this.owns(p, now)).sort((a, b) => a - b);
  }

  /** Live members as the watch reports them, always including this worker. */
  memberCount(): number {
    return this.members.has(this.self) ? this.members.size : this.members.size + 1;
  }

  /** Partitions to lease among all workers: P, or the wanted ones on demand. */
  wantedCount(): number {
    return this.wanted?.size ?? this.partitions;
  }

  /** The most partitions this worker may hold: ceil(P / live members), or ceil(W / live members) on demand. */
  share(): number {
    return Math.ceil(this.wantedCount() / this.memberCount());
  }

  /** When the driver must call {@link tick} next at the latest. */
  nextWakeAt(now: number): number {
    let wake = this.stopping ? Number.POSITIVE_INFINITY : this.nextRoundAt;
    wake = Math.min(wake, this.fenceCheckAt);
    for (const until of this.cooldownUntil.values()) if (until > now) wake = Math.min(wake, until);
    if (this.holdOffUntil > now) wake = Math.min(wake, this.holdOffUntil);
    return wake;
  }

  /** Fences overdue leases, runs a renewal round when one is due, and rebalances. */
  tick(now: number): LeaseEffect[] {
    const out: LeaseEffect[] = [];
    this.fence(now, out);
    this.balance(now, out);
    if (!this.stopping && now >= this.nextRoundAt) {
      this.nextRoundAt = now + this.timings.renewIntervalMs;
      // Membership first: a dead worker's membership then expires just before its leases, so the
      // survivors' share has already grown when the partitions come free.
      out.push({ type: "heartbeat" });
      for (const [partition, m] of this.mine) {
        if ((m.state === "held" || m.state === "unconfirmed") && !m.renewing) {
          m.renewing = true;
          out.push({ type: "renew", partition, revision: m.revision });
        }
      }
    }
    return out;
  }

  /** The watcher's initial snapshot is complete: acquisitions may start. */
  markReady(now: number): LeaseEffect[] {
    this.ready = true;
    return this.step(now);
  }

  /**
   * The bucket was re-created (or is younger than one TTL): every lease this worker knew is void,
   * and no partition is acquired before `until`, by when every holder from the old bucket has fenced.
   */
  resetLeases(now: number, until: number): LeaseEffect[] {
    const out: LeaseEffect[] = [];
    this.fence(now, out);
    for (const [partition, m] of this.mine) {
      if (m.state === "held") out.push({ type: "lost", partition, reason: "reset" });
    }
    this.mine.clear();
    this.holdOff(until);
    return out;
  }

  /** Acquires nothing before `until` (keeps the later of this and any earlier hold-off). */
  holdOff(until: number): void {
    this.holdOffUntil = Math.max(this.holdOffUntil, until);
  }

  /** The watcher restarted: forget what it said, and acquire nothing until its new snapshot is complete. */
  resetView(): void {
    this.view.clear();
    this.seen.clear();
    this.members.clear();
    this.cooldownUntil.clear();
    this.ready = false;
  }

  /** Applies one watched entry. Entries not newer than one already seen for the key are ignored. */
  observe(o: KeyObservation, now: number): LeaseEffect[] {
    const last = this.seen.get(o.key);
    if (last !== undefined && o.revision <= last) return [];
    this.seen.set(o.key, o.revision);
    const key = parseKey(o.key, this.partitions);
    const out: LeaseEffect[] = [];
    if (key.kind === "member") {
      if (o.operation === "PUT") this.members.add(key.worker);
      else this.members.delete(key.worker);
    } else if (key.kind === "partition") {
      this.observePartition(key.partition, o, out);
    }
    this.fence(now, out);
    this.balance(now, out);
    return out;
  }

  /** The outcome of an `acquire` effect. */
  acquireResult(partition: number, outcome: WriteOutcome, now: number): LeaseEffect[] {
    const out: LeaseEffect[] = [];
    const m = this.mine.get(partition);
    if (m?.state !== "acquiring") return out;
    if (!outcome.ok) {
      this.mine.delete(partition);
      this.cooldown(partition, now, outcome.conflict);
    } else if (m.releaseOnSuccess || this.stopping || !this.isWanted(partition)) {
      this.release(partition, outcome.revision, false, out);
    } else {
      this.confirm(partition, outcome, now, out);
    }
    this.fence(now, out);
    this.balance(now, out);
    return out;
  }

  /** The outcome of a `renew` effect. */
  renewResult(partition: number, outcome: WriteOutcome, now: number): LeaseEffect[] {
    const out: LeaseEffect[] = [];
    const m = this.mine.get(partition);
    if (m === undefined || m.state === "acquiring") {
      // A renewal we no longer track still wrote the key: keep its revision so it is released or confirmed.
      if (outcome.ok && m === undefined) {
        this.mine.set(partition, { state: "unconfirmed", revision: outcome.revision, renewing: false });
        if (!this.isWanted(partition)) this.release(partition, outcome.revision, false, out);
      }
      return out;
    }
    m.renewing = false;
    if (m.state === "releasing") {
      if (outcome.ok) m.revision = outcome.revision;
      if (!m.deleting) {
        if (!outcome.ok && outcome.conflict) this.mine.delete(partition);
        else this.release(partition, m.revision, false, out);
      }
    } else if (outcome.ok) {
      if (this.stopping) this.release(partition, outcome.revision, false, out);
      else this.confirm(partition, outcome, now, out);
    } else if (outcome.conflict) {
      this.mine.delete(partition);
      this.forgetOwnEntry(partition, m.revision);
      this.cooldown(partition, now, true);
      if (m.state === "held") out.push({ type: "lost", partition, reason: "conflict" });
    } else {
      this.nextRoundAt = Math.min(this.nextRoundAt, now + this.timings.retryIntervalMs);
    }
    this.fence(now, out);
    this.balance(now, out);
    return out;
  }

  /** The outcome of a `release` effect for `revision`. */
  releaseResult(partition: number, revision: number, outcome: WriteOutcome, now: number): LeaseEffect[] {
    const out: LeaseEffect[] = [];
    const m = this.mine.get(partition);
    if (m?.state !== "releasing") return out;
    m.deleting = false;
    if (!outcome.ok && outcome.conflict && m.revision > revision) {
      // A renewal landed after the delete was sent; delete that newer revision instead.
      this.release(partition, m.revision, false, out);
    } else if (!m.renewing) {
      this.mine.delete(partition);
      if (outcome.ok) this.forgetOwnEntry(partition, revision);
    }
    this.balance(now, out);
    return out;
  }

  /** Stops acquiring and renewing; announces every owned partition lost and releases every key this worker may hold. */
  stop(now: number): LeaseEffect[] {
    const out: LeaseEffect[] = [];
    if (this.stopping) return out;
    this.fence(now, out);
    this.stopping = true;
    out.push({ type: "leave" });
    for (const [partition, m] of this.mine) {
      if (m.state === "acquiring") m.releaseOnSuccess = true;
      else if (m.state !== "releasing") this.release(partition, m.revision, m.state === "held", out, "released");
    }
    return out;
  }

  /** True once {@link stop} was called and no write for a partition is outstanding. */
  drained(): boolean {
    return this.stopping && this.mine.size === 0;
  }

  private step(now: number): LeaseEffect[] {
    const out: LeaseEffect[] = [];
    this.fence(now, out);
    this.balance(now, out);
    return out;
  }

  private observePartition(partition: number, o: KeyObservation, out: LeaseEffect[]): void {
    const m = this.mine.get(partition);
    if (o.operation === "PUT") {
      this.view.set(partition, { worker: o.worker, revision: o.revision });
      if (o.worker === this.self) {
        // Our own write, possibly one whose reply has not arrived (or never will): use its revision
        // for the next CAS, but only a CAS reply extends ownership.
        if (m !== undefined && m.state !== "acquiring" && o.revision > m.revision) m.revision = o.revision;
        return;
      }
      if ((m?.state === "held" || m?.state === "unconfirmed") && m.revision < o.revision) {
        this.mine.delete(partition);
        if (m.state === "held") out.push({ type: "lost", partition, reason: "taken" });
      }
      return;
    }
    this.view.delete(partition);
    // A free partition is worth trying at once, whatever an earlier failed create said.
    this.cooldownUntil.delete(partition);
    if ((m?.state === "held" || m?.state === "unconfirmed") && m.revision < o.revision) {
      this.mine.delete(partition);
      if (m.state === "held") out.push({ type: "lost", partition, reason: "expired" });
    }
  }

  private confirm(partition: number, outcome: { revision: number; sentAt: number }, now: number, out: LeaseEffect[]) {
    const validUntil = outcome.sentAt + this.timings.ttlMs - this.timings.fenceMarginMs;
    const m = this.mine.get(partition);
    const wasHeld = m?.state === "held" && now < m.validUntil;
    if (validUntil <= now) {
      // Confirmed too late to trust; keep the revision so the next round can confirm it afresh.
      if (wasHeld) out.push({ type: "lost", partition, reason: "fenced" });
      this.mine.set(partition, { state: "unconfirmed", revision: outcome.revision, renewing: false });
      return;
    }
    const until = m?.state === "held" ? Math.max(m.validUntil, validUntil) : validUntil;
    this.mine.set(partition, { state: "held", revision: outcome.revision, validUntil: until, renewing: false });
    this.fenceCheckAt = Math.min(this.fenceCheckAt, until);
    if (!wasHeld) out.push({ type: "acquired", partition });
  }

  // fence() and balance() run on every input, a few hundred times a round with 128 partitions,
  // so they avoid walking every lease each time: that garbage alone kept V8's young generation large.
  private fence(now: number, out: LeaseEffect[]): void {
    if (now < this.fenceCheckAt) return;
    let next = Number.POSITIVE_INFINITY;
    for (const partition of this.mine.keys()) {
      const m = this.mine.get(partition)!;
      if (m.state !== "held") continue;
      if (now >= m.validUntil) {
        this.mine.set(partition, { state: "unconfirmed", revision: m.revision, renewing: m.renewing });
        out.push({ type: "lost", partition, reason: "fenced" });
      } else {
        next = Math.min(next, m.validUntil);
      }
    }
    this.fenceCheckAt = next;
  }

  private release(
    partition: number,
    revision: number,
    announce: boolean,
    out: LeaseEffect[],
    reason: LossReason = "shed",
  ): void {
    const m = this.mine.get(partition);
    const renewing = (m?.state === "held" || m?.state === "unconfirmed" || m?.state === "releasing") && m.renewing;
    // Announce before the delete is sent: whoever takes the partition next must never overlap with us.
    if (announce) out.push({ type: "lost", partition, reason });
    // With a renewal in flight the delete would race it; wait for its revision instead.
    this.mine.set(partition, { state: "releasing", revision, renewing, deleting: !renewing });
    if (!renewing) out.push({ type: "release", partition, revision });
  }

  /**
   * Drops our own PUT at or below `revision` from the view once it is known to be gone (deleted,
   * or overwritten by a CAS we lost), so the watch lagging behind does not make us adopt it again.
   */
  private forgetOwnEntry(partition: number, revision: number): void {
    const v = this.view.get(partition);
    if (v?.worker === this.self && v.revision <= revision) this.view.delete(partition);
  }

  private cooldown(partition: number, now: number, conflict: boolean): void {
    const delay = conflict ? this.timings.renewIntervalMs : this.timings.retryIntervalMs;
    this.cooldownUntil.set(partition, now + delay);
  }

  private isWanted(partition: number): boolean {
    return this.wanted === undefined || this.wanted.has(partition);
  }

  private balance(now: number, out: LeaseEffect[]): void {
    if (!this.ready || this.stopping) return;
    if (now >= this.holdOffUntil) {
      for (const partition of this.view.keys()) {
        const v = this.view.get(partition)!;
        if (v.worker === this.self && !this.mine.has(partition)) {
          // Our own key from before a restart of the watch: renew it if wanted, or free it for others.
          this.mine.set(partition, { state: "unconfirmed", revision: v.revision, renewing: false });
          if (!this.isWanted(partition)) this.release(partition, v.revision, false, out);
        }
      }
    }
    const share = this.share();
    let claimed = 0;
    for (const m of this.mine.values()) if (m.state !== "releasing") claimed++;
    if (claimed > share) {
      // Shed the least preferred first, and unconfirmed leases before owned ones.
      const candidates = [...this.preference]
        .reverse()
        .filter((p) => this.mine.get(p)?.state === "unconfirmed")
        .concat([...this.preference].reverse().filter((p) => this.mine.get(p)?.state === "held"));
      for (const partition of candidates.slice(0, claimed - share)) {
        const m = this.mine.get(partition);
        if (m?.state === "held" || m?.state === "unconfirmed") {
          this.release(partition, m.revision, m.state === "held" && now < m.validUntil, out);
        }
      }
      return;
    }
    if (now < this.holdOffUntil) return;
    let wanted = share - claimed;
    for (const partition of this.preference) {
      if (wanted <= 0) break;
      if (this.mine.has(partition) || this.view.has(partition) || !this.isWanted(partition)) continue;
      if ((this.cooldownUntil.get(partition) ?? Number.NEGATIVE_INFINITY) > now) continue;
      this.cooldownUntil.delete(partition);
      this.mine.set(partition, { state: "acquiring", releaseOnSuccess: false });
      out.push({ type: "acquire", partition });
      wanted--;
    }
  }
}
