import { JsonClient, RequestBudget } from "@tenantplane/kube";
import { describe } from "@tenantplane/runtime";
import { whenJetStreamAnswers } from "@tenantplane/messaging";
import { startService, tenantRegarding } from "@tenantplane/service";
import { SyncWorkerEnvSchema } from "./config.js";
import { HostWriter } from "./host-writer.js";
import { createBackSyncMetrics } from "./back-sync/metrics.js";
import { createSyncMetrics } from "./metrics.js";
import { CrashLedger } from "@tenantplane/partition";
import { startOwnership, workerIdFor, type Ownership } from "./ownership.js";
import { Supervisor } from "./supervisor.js";

const svc = await startService({ name: "sync-worker", envSchema: SyncWorkerEnvSchema, consumers: [] });
const env = svc.env;
// The supervisor starts before the leases (see below); each reaches the other through this box.
const box: { supervisor?: Supervisor; ownership?: Ownership } = {};
const metrics = createSyncMetrics(svc.metrics.registry, () => box.supervisor?.queueDepths() ?? new Map());
const hostClient = new JsonClient(svc.kc, {
  userAgent: svc.userAgent,
  timeoutMs: 30_000,
  onReceived: (bytes) => metrics.receivedBytes.inc({ side: "host" }, bytes),
});
const budget = new RequestBudget(env.HOST_QPS, env.HOST_BURST);
const writer = new HostWriter(
  hostClient,
  svc.objects.fieldManager,
  budget,
  (verb) => metrics.hostRequests.inc({ verb }),
  undefined,
  (stage, seconds) => metrics.writeStages.observe({ stage }, seconds),
);

const workerId = workerIdFor(svc.identity);
// Which tenant was busy when a worker died; opened before any tenant can start (see supervisor admit).
const ledger = new CrashLedger({
  connection: svc.nc,
  workerId,
  leaseBucket: env.LEASE_BUCKET,
  leaseTtlMs: Math.round(env.LEASE_TTL_SECONDS * 1000),
  bucket: env.CRASH_BUCKET,
  policy: { crashes: env.QUARANTINE_CRASHES, windowMs: env.QUARANTINE_WINDOW_SECONDS * 1000 },
  logger: svc.logger.child({ component: "crash-ledger" }),
});
await whenJetStreamAnswers(() => ledger.start(), {
  signal: svc.signal,
  onRetry: (err, attempt, delayMs) =>
    svc.logger.warn({ err: describe(err), attempt, delayMs }, "crash ledger bucket not declared yet; retrying"),
});

const supervisor = new Supervisor({
  settings: {
    resyncMs: env.RESYNC_INTERVAL_SECONDS * 1000,
    kubeconfigCheckMs: env.KUBECONFIG_CHECK_SECONDS * 1000,
    concurrency: env.SYNC_CONCURRENCY,
    tenantConcurrency: env.TENANT_CONCURRENCY,
    tenantWriteQps: env.TENANT_WRITE_QPS,
    tenantWriteBurst: env.TENANT_WRITE_BURST,
    tenantWriteBytesPerSecond: env.TENANT_WRITE_BYTES_PER_SECOND,
    hashKey: env.CONTENT_HASH_KEY,
    tokenRefreshMaxSeconds: env.TOKEN_REFRESH_MAX_SECONDS,
    tenantLimits: {
      objectsPerKind: env.TENANT_MAX_OBJECTS_PER_KIND,
      objectBytes: env.TENANT_MAX_OBJECT_BYTES,
      totalBytes: env.TENANT_MAX_BYTES,
    },
  },
  hostClient,
  userAgent: svc.userAgent,
  identity: svc.identity,
  writer,
  objects: svc.objects,
  logger: svc.logger,
  metrics,
  backSyncMetrics: createBackSyncMetrics(svc.metrics.registry),
  publish: (d) => svc.publish(d),
  warn: async (tenant, uid, reason, message) => {
    await svc.events.record({ regarding: tenantRegarding(tenant, uid), type: "Warning", reason, message });
  },
  notify: async (tenant, uid, reason, message) => {
    await svc.events.record({ regarding: tenantRegarding(tenant, uid), type: "Normal", reason, message });
  },
  owns: (tenant) => box.ownership?.owns(tenant) ?? false,
  validForMs: (tenant) => box.ownership?.validForMs(tenant) ?? 0,
  tenantsChanged: (tenants) => box.ownership?.want(tenants),
  ledger,
  ...(env.TENANTPLANE_FAULT_CRASH_ON_OBJECT_NAME === undefined
    ? {}
    : { crashOnObjectName: env.TENANTPLANE_FAULT_CRASH_ON_OBJECT_NAME }),
});
box.supervisor = supervisor;
supervisor.start();
await supervisor.synced;

// Join only once the tenant list is in: a member lowers its peers' shares, so a worker that joined
// before it knew which partitions to take would leave the ones they shed unowned meanwhile.
const ownership = await startOwnership({
  nc: svc.nc,
  bucket: env.LEASE_BUCKET,
  partitions: env.PARTITIONS,
  ttlMs: Math.round(env.LEASE_TTL_SECONDS * 1000),
  identity: svc.identity,
  workerId,
  logger: svc.logger,
  registry: svc.metrics.registry,
  signal: svc.signal,
  onChange: (lost) => {
    if (lost) supervisor.stopTenants((tenant) => !ownership.owns(tenant));
    supervisor.reconcileAll();
  },
});
box.ownership = ownership;
// Every tenant known now (changes from here on arrive through tenantsChanged).
ownership.want(supervisor.tenantNames());
svc.setReady(true);
svc.logger.info({ partitions: env.PARTITIONS, bucket: env.LEASE_BUCKET }, "sync worker running");

// Stop writing first, then hand the partitions over so a peer takes them at once.
svc.onShutdown({ name: "sync", run: () => supervisor.stop() });
svc.onShutdown({ name: "leases", run: () => ownership.stop() });
