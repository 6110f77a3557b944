import { Counter, Histogram, type Registry } from "prom-client";

/** Back-sync's metrics (`tenantplane_sync_backsync_*`): its writes publish no Decisions, so these count them. */
export interface BackSyncMetrics {
  /** Writes to tenant APIs, by kind written and action (bind, status, delete, create, …). */
  writes: Counter<"kind" | "action">;
  /** Failed attempts, by kind of the key being back-synced; each is retried with backoff. */
  failures: Counter<"kind">;
  /** Time from a host change being seen to the tenant write that shows it. */
  latency: Histogram<"kind">;
}

/** Registers the back-sync metrics on the service's registry. */
export function createBackSyncMetrics(registry: Registry): BackSyncMetrics {
  const registers = [registry];
  return {
    writes: new Counter({
      name: "tenantplane_sync_backsync_writes_total",
      help: "Back-sync writes to tenant APIs (host state shown to the tenant), by kind and action.",
      labelNames: ["kind", "action"],
      registers,
    }),
    failures: new Counter({
      name: "tenantplane_sync_backsync_failures_total",
      help: "Back-sync attempts that failed and were queued for a retry, by kind.",
      labelNames: ["kind"],
      registers,
    }),
    latency: new Histogram({
      name: "tenantplane_sync_backsync_latency_seconds",
      help: "Time from a host change being seen to the tenant write that shows it, by kind.",
      labelNames: ["kind"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}
