import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@tenantplane/runtime";
import type { SyncMetrics } from "./metrics.js";

/** Which tenants this worker may sync right now. */
export interface Ownership {
  owns(tenant: string): boolean;
  /** Releases every lease (instant hand-over) and stops renewing. */
  stop(): Promise<void>;
}

/** How ownership is set up. */
export interface OwnershipOptions {
  nc: NatsConnection;
  bucket: string;
  partitions: number;
  ttlMs: number;
  worker: string;
  logger: Logger;
  metrics: SyncMetrics;
  /** Called after partitions were acquired (`lost` false) or lost/fenced (`lost` true). */
  onChange(lost: boolean): void;
}

/** Placeholder until partition leases are wired: this worker owns every tenant. */
export async function startOwnership(opts: OwnershipOptions): Promise<Ownership> {
  opts.metrics.partitionsHeld.set(opts.partitions);
  return { owns: () => true, stop: async () => undefined };
}
