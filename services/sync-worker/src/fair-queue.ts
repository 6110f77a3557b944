/** One unit of work: a key of one tenant. */
export interface QueueItem {
  tenant: string;
  key: string;
  /** When the key was first queued since it was last taken (ms epoch): the latency clock's start. */
  since: number;
}

interface TenantLane {
  pending: Map<string, number>;
  active: Set<string>;
  /** Keys queued again while being worked on; they return to `pending` when done. */
  again: Map<string, number>;
}

/**
 * Per-tenant work queues served round-robin. A key is queued at most once per tenant
 * and is never handed out twice at the same time (a key added while in flight runs
 * again after `done`). A tenant already running `maxActivePerTenant` keys is passed
 * over, so a tenant with ten thousand keys cannot hold every worker.
 */
export class FairQueue {
  private readonly lanes = new Map<string, TenantLane>();
  /** Tenants in service order; the head is served next. */
  private ring: string[] = [];

  constructor(
    private readonly maxActivePerTenant = 2,
    private readonly now: () => number = Date.now,
  ) {}

  /** Queues `key` for `tenant` (a no-op if already queued). */
  add(tenant: string, key: string): void {
    let lane = this.lanes.get(tenant);
    if (lane === undefined) {
      lane = { pending: new Map(), active: new Set(), again: new Map() };
      this.lanes.set(tenant, lane);
      this.ring.push(tenant);
    }
    if (lane.active.has(key)) {
      if (!lane.again.has(key)) lane.again.set(key, this.now());
      return;
    }
    if (!lane.pending.has(key)) lane.pending.set(key, this.now());
  }

  /**
   * The next key to work on, taking tenants in turn and skipping those for which
   * `eligible` says no (e.g. out of write budget) or that are at their active limit.
   */
  take(eligible: (tenant: string) => boolean = () => true): QueueItem | undefined {
    for (let i = 0; i < this.ring.length; i++) {
      const tenant = this.ring.shift()!;
      this.ring.push(tenant);
      const lane = this.lanes.get(tenant)!;
      if (lane.pending.size === 0 || lane.active.size >= this.maxActivePerTenant || !eligible(tenant)) continue;
      const [key, since] = lane.pending.entries().next().value as [string, number];
      lane.pending.delete(key);
      lane.active.add(key);
      return { tenant, key, since };
    }
    return undefined;
  }

  /** Marks a taken key finished; a key re-added meanwhile becomes pending again. */
  done(tenant: string, key: string): void {
    const lane = this.lanes.get(tenant);
    if (lane === undefined) return;
    lane.active.delete(key);
    const since = lane.again.get(key);
    if (since !== undefined) {
      lane.again.delete(key);
      if (!lane.pending.has(key)) lane.pending.set(key, since);
    }
  }

  /** Forgets a tenant's queued keys (its syncer stopped); keys in flight finish but are not requeued. */
  drop(tenant: string): void {
    this.lanes.delete(tenant);
    this.ring = this.ring.filter((t) => t !== tenant);
  }

  /** Keys queued (not in flight) for `tenant`. */
  depth(tenant: string): number {
    const lane = this.lanes.get(tenant);
    return lane === undefined ? 0 : lane.pending.size + lane.again.size;
  }

  /** Tenants that have a lane. */
  tenants(): string[] {
    return [...this.ring];
  }

  /** Whether any key could be handed out now, ignoring eligibility. */
  hasPending(): boolean {
    for (const lane of this.lanes.values()) {
      if (lane.pending.size > 0 && lane.active.size < this.maxActivePerTenant) return true;
    }
    return false;
  }
}
