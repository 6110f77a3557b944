import type { JetStreamClient } from "@nats-io/jetstream";
import {
  GROUP,
  PLURAL_ISOLATION_PROFILES,
  PLURAL_SYNC_POLICIES,
  PLURAL_TENANT_CLUSTERS,
  VERSION,
} from "@tenantplane/api";
import { startListWatch, type JsonClient, type ListWatch, type RawWatchEvent } from "@tenantplane/kube";
import { publishTenantChange, type TenantChange } from "@tenantplane/messaging";
import { backoffDelay, onAbort, sleep, type Logger } from "@tenantplane/runtime";
import { Counter, type Registry } from "prom-client";
import { isMeaningfulUpdate, tenantKeyOf, type TenantKey } from "@tenantplane/service";
import { InitialListGate, referencingChanges } from "./fan-out.js";

const PUBLISHED_METRIC = "tenantplane_watcher_published_total";

/** Watcher dependencies; the watcher only ever reads the API and publishes keys. */
export interface WatcherOptions {
  client: JsonClient;
  js: JetStreamClient;
  logger: Logger;
  registry: Registry;
  resyncIntervalMs: number;
}

/**
 * Watches TenantClusters, IsolationProfiles and SyncPolicies and publishes
 * tenant-change keys until `signal` aborts: on every meaningful TenantCluster
 * change, once per referencing tenant when a profile or policy changes, and
 * for every tenant on each periodic resync (the safety net for anything lost).
 */
export async function runWatcher(opts: WatcherOptions, signal: AbortSignal): Promise<void> {
  // Leadership can be won more than once per process: register the counter once.
  const published =
    (opts.registry.getSingleMetric(PUBLISHED_METRIC) as Counter<"reason"> | undefined) ??
    new Counter({
      name: PUBLISHED_METRIC,
      help: "Tenant-change messages published, by reason.",
      labelNames: ["reason"],
      registers: [opts.registry],
    });
  const tenants = new Map<string, TenantKey>();
  // A handler may wait on NATS; the list-watch delivers synchronously, so each event runs on its own.
  const watch = (plural: string, kind: string, handle: (event: RawWatchEvent) => Promise<void>) =>
    startListWatch({
      client: opts.client,
      path: `/apis/${GROUP}/${VERSION}/${plural}`,
      apiVersion: `${GROUP}/${VERSION}`,
      kind,
      logger: opts.logger,
      onEvent: (event) => {
        handle(event).catch((err: unknown) =>
          opts.logger.error({ err, kind, type: event.type }, "watch handler failed"),
        );
      },
    });

  const publish = async (change: TenantChange) => {
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        await publishTenantChange(opts.js, change);
        published.inc({ reason: change.reason });
        return;
      } catch (err) {
        // Give up after a few tries: the next resync publishes this tenant again.
        if (attempt >= 5) {
          opts.logger.error({ err, tenant: change.tenant }, "publishing failed; leaving it to the next resync");
          return;
        }
        await sleep(backoffDelay(attempt, 200, 5_000), signal);
      }
    }
  };

  const onTenant = async ({ type, object }: RawWatchEvent) => {
    const key = tenantKeyOf(object);
    if (!key) return;
    if (type === "delete") {
      tenants.delete(key.name);
      await publish({ tenant: key.name, generation: key.generation, reason: "TenantDeleted" });
      return;
    }
    const before = tenants.get(key.name);
    tenants.set(key.name, key);
    if (type === "update" && !isMeaningfulUpdate(before, key)) return;
    await publish({ tenant: key.name, generation: key.generation, reason: "TenantChanged" });
  };
  const onReferenced = (kind: "IsolationProfile" | "SyncPolicy", gate: InitialListGate) => {
    return async ({ type, object }: RawWatchEvent) => {
      const name = object.metadata.name;
      if (!gate.accepts(type)) return;
      for (const change of referencingChanges(kind, name, tenants.values())) await publish(change);
    };
  };

  const watches: ListWatch[] = [];
  const tenantWatch = watch(PLURAL_TENANT_CLUSTERS, "TenantCluster", onTenant);
  watches.push(tenantWatch);
  await Promise.race([tenantWatch.synced, new Promise<void>((r) => onAbort(signal, r))]);
  for (const kind of ["IsolationProfile", "SyncPolicy"] as const) {
    const gate = new InitialListGate();
    const referenced = watch(
      kind === "IsolationProfile" ? PLURAL_ISOLATION_PROFILES : PLURAL_SYNC_POLICIES,
      kind,
      onReferenced(kind, gate),
    );
    void referenced.synced.then(() => gate.open());
    watches.push(referenced);
  }
  opts.logger.info({ tenants: tenants.size }, "watching");

  while (!signal.aborted) {
    await sleep(opts.resyncIntervalMs, signal);
    if (signal.aborted) break;
    for (const object of tenantWatch.list()) {
      const key = tenantKeyOf(object);
      if (key) await publish({ tenant: key.name, generation: key.generation, reason: "Resync" });
    }
  }
  for (const w of watches) w.stop();
}
