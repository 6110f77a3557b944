import { randomBytes } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { PartitionLeases } from "@tenantplane/partition";
import { whenJetStreamAnswers } from "@tenantplane/messaging";
import { describe, type Logger } from "@tenantplane/runtime";
import type { Registry } from "prom-client";

/** Which tenants this worker may sync right now. */
export interface Ownership {
  owns(tenant: string): boolean;
  /** Milliseconds this worker may still act for the tenant (its lease's fence deadline minus now); 0 when not owned. */
  validForMs(tenant: string): number;
  /** Partitions held now. */
  held(): number[];
  /** Every tenant that exists now (the whole set): only their partitions are leased. */
  want(tenants: Iterable<string>): void;
  /** Releases every lease (instant hand-over) and stops renewing. */
  stop(): Promise<void>;
}

/** A process-unique lease id for this replica: its name plus a random suffix. */
export function workerIdFor(identity: string): string {
  return `${identity.replace(/[^A-Za-z0-9_=-]/g, "-").slice(0, 100)}-${randomBytes(3).toString("hex")}`;
}

/** How ownership is set up. */
export interface OwnershipOptions {
  nc: NatsConnection;
  bucket: string;
  partitions: number;
  ttlMs: number;
  /** This replica's name (the pod name); a random suffix makes it unique per process. */
  identity: string;
  /** The id to join with, made by {@link workerIdFor}: the crash ledger's busy markers name it too. */
  workerId?: string;
  logger: Logger;
  registry: Registry;
  /** Stops waiting for JetStream at start (the service is shutting down). */
  signal?: AbortSignal;
  /** Called after a partition was acquired (`lost` false) or lost, fenced or released (`lost` true). */
  onChange(lost: boolean): void;
}

/**
 * Joins the partition leases: tenants map to partitions by `fnv1a32(tenant) % P` and this
 * worker syncs only tenants whose partition it holds. Only partitions with tenants are leased
 * (the caller names them with want(), which it may call as soon as this resolves: nothing is
 * acquired before the lease watch's first snapshot), shared out evenly among the live workers.
 * A lost or fenced partition is reported at once so its tenants stop before any peer can take them.
 */
export async function startOwnership(opts: OwnershipOptions): Promise<Ownership> {
  const workerId = opts.workerId ?? workerIdFor(opts.identity);
  const leases = new PartitionLeases({
    connection: opts.nc,
    workerId,
    partitions: opts.partitions,
    bucket: opts.bucket,
    ttlMs: opts.ttlMs,
    // A partition without tenants costs a lease write every renew interval and syncs nothing.
    onDemand: true,
    registry: opts.registry,
    logger: opts.logger.child({ component: "leases" }),
    onAcquired: (partition) => {
      opts.logger.debug({ partition }, "partition acquired");
      opts.onChange(false);
    },
    onLost: (partition, reason) => {
      opts.logger.info({ partition, reason }, "partition lost");
      opts.onChange(true);
    },
  });
  // A JetStream still electing its leaders (a cluster coming up with the workers) is waited for.
  await whenJetStreamAnswers(() => leases.start(), {
    signal: opts.signal,
    onRetry: (err, attempt, delayMs) =>
      opts.logger.warn({ err: describe(err), attempt, delayMs }, "lease bucket not declared yet; retrying"),
  });
  return {
    owns: (tenant) => leases.ownsTenant(tenant),
    validForMs: (tenant) => leases.tenantValidForMs(tenant),
    held: () => leases.held(),
    want: (tenants) => leases.wantTenants(tenants),
    stop: () => leases.stop(),
  };
}
