import { Counter, Gauge, type Registry } from "prom-client";

/** The lease metrics, registered on the registry given to PartitionLeases. */
export interface LeaseMetrics {
  /** `tenantplane_sync_partition_changes_total{change="acquired"|"lost", reason}`. */
  readonly changes: Counter<"change" | "reason">;
  /** `tenantplane_sync_lease_renew_failures_total{key="partition"|"member", reason="conflict"|"error"}`. */
  readonly renewFailures: Counter<"key" | "reason">;
}

/**
 * Registers the lease metrics. The gauges (`tenantplane_sync_partitions_held`,
 * `tenantplane_sync_partitions_wanted`, `tenantplane_sync_lease_members`) read the leases at
 * scrape time, so they are never stale.
 */
export function createLeaseMetrics(
  registry: Registry,
  source: { held(): number[]; members(): number; wanted(): number },
): LeaseMetrics {
  new Gauge({
    name: "tenantplane_sync_partitions_held",
    help: "Partitions this worker owns (a fenced lease does not count).",
    registers: [registry],
    collect() {
      this.set(source.held().length);
    },
  });
  new Gauge({
    name: "tenantplane_sync_partitions_wanted",
    help: "Partitions work maps to, as this worker last heard (all of them unless leasing on demand).",
    registers: [registry],
    collect() {
      this.set(source.wanted());
    },
  });
  new Gauge({
    name: "tenantplane_sync_lease_members",
    help: "Live workers sharing the partitions, as this worker last saw them.",
    registers: [registry],
    collect() {
      this.set(source.members());
    },
  });
  return {
    changes: new Counter({
      name: "tenantplane_sync_partition_changes_total",
      help: "Partitions acquired and lost by this worker, by reason (fenced, conflict, expired, taken, shed, released, unwanted, reset).",
      labelNames: ["change", "reason"],
      registers: [registry],
    }),
    renewFailures: new Counter({
      name: "tenantplane_sync_lease_renew_failures_total",
      help: "Failed renewals of a partition lease or of the membership key: conflict (lost) or error (retried).",
      labelNames: ["key", "reason"],
      registers: [registry],
    }),
  };
}
