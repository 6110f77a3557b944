import { monitorEventLoopDelay } from "node:perf_hooks";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** Sampling resolution of the event-loop delay monitor: fine enough to see a 50 ms stall. */
const LOOP_RESOLUTION_MS = 10;

/**
 * The sync worker's own metrics, all `tenantplane_sync_*`, on the service's private registry.
 * Partitions held and lease renew failures are registered by the partition leases.
 */
export interface SyncMetrics {
  tenantsActive: Gauge;
  /** 1 while this worker syncs the tenant; the series disappears when it stops. */
  tenantActive: Gauge<"tenant">;
  queueDepth: Gauge<"tenant">;
  objects: Counter<"outcome">;
  latency: Histogram;
  queueWait: Histogram;
  writeStages: Histogram<"stage">;
  hostRequests: Counter<"verb">;
  tenantEvents: Counter<"outcome">;
  /** Bytes read from the host API (watches of host copies, answers to writes) and from tenant APIs. */
  receivedBytes: Counter<"side">;
  /** Event-loop delay since the previous scrape, by quantile (0.5, 0.99, 1 = max). */
  eventLoopDelay: Gauge<"quantile">;
}

/** Registers the sync metrics; `queueDepths` is read at scrape time. */
export function createSyncMetrics(registry: Registry, queueDepths: () => Map<string, number>): SyncMetrics {
  const registers = [registry];
  // How late timers and I/O callbacks ran: the stall a tenant's big pass would cause to lease
  // renewals and every other tenant. Reset at each scrape, so each figure covers one interval.
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  return {
    eventLoopDelay: new Gauge({
      name: "tenantplane_sync_event_loop_delay_seconds",
      help: "Event-loop delay since the previous scrape, by quantile (1 is the longest), sampled every 10 ms.",
      labelNames: ["quantile"],
      registers,
      collect() {
        // Each sample includes the resolution itself: only the delay beyond it is a stall.
        const beyond = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS) / 1000;
        if (loop.count > 0) {
          this.set({ quantile: "0.5" }, beyond(loop.percentile(50)));
          this.set({ quantile: "0.99" }, beyond(loop.percentile(99)));
          this.set({ quantile: "1" }, beyond(loop.max));
        }
        loop.reset();
      },
    }),
    tenantsActive: new Gauge({
      name: "tenantplane_sync_tenants_active",
      help: "Tenants this worker is syncing.",
      registers,
    }),
    tenantActive: new Gauge({
      name: "tenantplane_sync_tenant_active",
      help: "1 for each tenant this worker is syncing right now.",
      labelNames: ["tenant"],
      registers,
    }),
    queueDepth: new Gauge({
      name: "tenantplane_sync_queue_depth",
      help: "Keys waiting in each tenant's work queue.",
      labelNames: ["tenant"],
      registers,
      collect() {
        this.reset();
        for (const [tenant, depth] of queueDepths()) this.set({ tenant }, depth);
      },
    }),
    objects: new Counter({
      name: "tenantplane_sync_objects_total",
      help: "Objects handled, by outcome (create, update, delete, skip, in_sync, failed).",
      labelNames: ["outcome"],
      registers,
    }),
    latency: new Histogram({
      name: "tenantplane_sync_latency_seconds",
      help: "Time from a tenant or host change being queued to its host write.",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    queueWait: new Histogram({
      name: "tenantplane_sync_queue_wait_seconds",
      help: "Time a key waited in its tenant's queue before a worker slot took it (a busy tenant's keys wait for its in-flight limit).",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    writeStages: new Histogram({
      name: "tenantplane_sync_write_stage_seconds",
      help: "Where a host write's time goes, by stage: plan (planning its key), tenant_budget and host_budget (waiting for a write token), request (the host's answer).",
      labelNames: ["stage"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    tenantEvents: new Counter({
      name: "tenantplane_sync_tenant_events_total",
      help: "Warning Events written on tenant objects in tenant APIs, by outcome (created, aggregated, dropped: over the tenant's budget, failed).",
      labelNames: ["outcome"],
      registers,
    }),
    receivedBytes: new Counter({
      name: "tenantplane_sync_received_bytes_total",
      help: "Bytes the sync worker read from API servers (answers and watch streams), by side: host (its host client) or tenant (every tenant API).",
      labelNames: ["side"],
      registers,
    }),
    hostRequests: new Counter({
      name: "tenantplane_sync_host_requests_total",
      help: "Requests to the host API for synced objects, by verb (get, create, update, delete).",
      labelNames: ["verb"],
      registers,
    }),
  };
}
