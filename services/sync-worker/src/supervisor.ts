import { createHash } from "node:crypto";
import {
  API_VERSION,
  PLURAL_ISOLATION_PROFILES,
  PLURAL_SYNC_POLICIES,
  PLURAL_TENANT_CLUSTERS,
  type Condition,
  type SyncPolicySpec,
  type SyncStatus,
} from "@tenantplane/api";
import {
  JsonClient,
  RequestBudget,
  jsonEventSink,
  kubeConfigFromString,
  startListWatch,
  type ListWatch,
  type Objects,
  type RawObject,
} from "@tenantplane/kube";
import type { PlannedDecision } from "@tenantplane/messaging";
import { describe as describeError, sleep, type Logger } from "@tenantplane/runtime";
import { applyTenantStatus, type ConditionInput } from "@tenantplane/service";
import type { CrashLedger } from "@tenantplane/partition";
import { defaultStorageClass, type HostRules } from "@tenantplane/sync";
import { BackSync } from "./back-sync/back-sync.js";
import { HostNodes } from "./back-sync/host-nodes.js";
import type { BackSyncMetrics } from "./back-sync/metrics.js";
import { FairQueue } from "./fair-queue.js";
import { MigrationDriver } from "./migration-driver.js";
import type { HostWriter } from "./host-writer.js";
import type { SyncMetrics } from "./metrics.js";
import { describePacing, PACED_NOTICE_MS, syncedCondition, syncStatusField, type SyncState } from "./sync-status.js";
import { planTenant, syncerIdentity } from "./tenant-directory.js";
import { othersView, restartReason } from "./tenant-view.js";
import { SharedWatches } from "./shared-watches.js";
import { StorageClassCopies } from "./storage-class-copies.js";
import { syncFailedMessage, TenantEvents } from "./tenant-events.js";
import type { TenantLimits } from "./tenant-limits.js";
import { TenantSyncer } from "./tenant-syncer.js";
import { TimeSlicer } from "./time-slice.js";
import {
  ANNOTATION_RELEASE_QUARANTINE,
  REASON_QUARANTINE_RELEASED,
  REASON_TENANT_QUARANTINED,
  REASON_WORKER_CRASHED,
  crashedMessage,
  quarantinedCondition,
  releasedMessage,
} from "./quarantine.js";
import { decodeKey } from "./source-key.js";

/** Longest wait at start for the host's StorageClasses before tenants are synced without them. */
const STORAGE_CLASS_WAIT_MS = 10_000;

/** Settings the supervisor runs with (from the environment). */
export interface SupervisorSettings {
  resyncMs: number;
  kubeconfigCheckMs: number;
  concurrency: number;
  tenantConcurrency: number;
  tenantWriteQps: number;
  tenantWriteBurst: number;
  /** Bytes of host copies per second for one tenant (TENANT_WRITE_BYTES_PER_SECOND). */
  tenantWriteBytesPerSecond?: number;
  /** Keys the content hash on host copies; undefined leaves it unkeyed. */
  hashKey: string | undefined;
  /** Longest time a tenant token in a host Pod's token Secret goes unrefreshed. */
  tokenRefreshMaxSeconds: number;
  /** What one tenant may make the worker hold. */
  tenantLimits: TenantLimits;
}

/** What the supervisor is given by main.ts. */
export interface SupervisorDeps {
  settings: SupervisorSettings;
  hostClient: JsonClient;
  /** Sent with every tenant API request, so tenant audit logs name the sync worker. */
  userAgent?: string;
  /** This worker's identity, the reporting instance of the Events it writes in tenant APIs. */
  identity?: string;
  writer: HostWriter;
  /** Status writes under the sync worker's field manager. */
  objects: Objects;
  logger: Logger;
  metrics: SyncMetrics;
  backSyncMetrics: BackSyncMetrics;
  publish(decision: PlannedDecision): Promise<void>;
  /** A Warning Event on the TenantCluster named `tenant`. */
  warn(tenant: string, uid: string | undefined, reason: string, message: string): Promise<void>;
  /** A Normal Event on the TenantCluster named `tenant` (a milestone: the sync caught up). */
  notify?(tenant: string, uid: string | undefined, reason: string, message: string): Promise<void>;
  /** Whether this worker holds the partition of `tenant` right now. */
  owns(tenant: string): boolean;
  /** Milliseconds this worker may still act for `tenant` (its lease's fence deadline minus now). */
  validForMs(tenant: string): number;
  /** Told the whole set of tenants whenever one appears or goes (their partitions are the ones leased). */
  tenantsChanged?(tenants: string[]): void;
  /** Which tenant was busy when a worker died, and the quarantine (see {@link CrashLedger}); none in unit tests. */
  ledger?: Pick<CrashLedger, "policy" | "admit" | "busy" | "idle" | "quiet" | "clear" | "stop">;
  /**
   * Test only (TENANTPLANE_FAULT_CRASH_ON_OBJECT_NAME): the worker SIGKILLs itself, as the kernel's
   * OOM killer would, when it takes up a tenant object of this name.
   */
  crashOnObjectName?: string;
}

interface Running {
  syncer: TenantSyncer;
  /** Host → tenant: status, binding, virtual nodes and volumes. */
  backSync: BackSync;
  /** Moves the tenant's Pods when its isolation mode changes (migration-driver.ts). */
  migration: MigrationDriver;
  identity: string;
  /** `namespace/name/key` of the kubeconfig the syncer runs with, and that kubeconfig's hash. */
  secretRef: string;
  kubeconfigHash: string;
  /** The TenantCluster as last reconciled, less what this service writes itself (see {@link othersView}). */
  tenantView: string;
  secretVersion: string;
  resync: NodeJS.Timeout;
  statusTimer?: NodeJS.Timeout | undefined;
  lastStatus?: string | undefined;
  /** The Synced condition's status and reason as last written, and when. */
  lastState?: { key: string; at: number } | undefined;
}

const STATUS_DEBOUNCE_MS = 1_000;
/**
 * While only the progress changes (counts, the message), status is rewritten at most this often:
 * every write is an API server write and a watch event for every service caching TenantClusters.
 * A change of the condition's status or reason is written after the debounce alone.
 */
const PROGRESS_INTERVAL_MS = 5_000;
/** Longest a tenant counts as busy for warming up alone (listing, its first pass); its keys still mark it after. */
const WARM_UP_BUSY_MS = 60_000;
/** How long a tenant on probation waits for the other tenants' work to finish before they pause for it. */
const PROBATION_WAIT_MS = 200;
/** Resync intervals in a row a tenant with queued keys may skip its full pass. */
const MAX_DEFERRED_PASSES = 3;
/**
 * A tenant whose waiting host writes need more of its byte budget than this starts no more keys
 * until they have gone: keys asleep on one tenant's budget would hold the pool's slots, and a
 * few tenants copying megabytes would leave none for the rest.
 */
const BYTE_BACKLOG_MS = 250;

/**
 * Runs one {@link TenantSyncer} per tenant this worker should sync: learns tenants and
 * SyncPolicies from host informers, starts a syncer only for tenants whose partition it
 * holds, stops it at once when the partition is lost or the tenant goes, and restarts it
 * when the kubeconfig or the policy changes. Work from every tenant is served round-robin
 * by a fixed pool, each tenant within its own write budget.
 */
export class Supervisor {
  private readonly queue: FairQueue;
  private readonly running = new Map<string, Running>();
  private readonly chains = new Map<string, Promise<void>>();
  /** Tenants with a reconcile queued on their chain that has not started yet, and whether it re-reads the kubeconfig. */
  private readonly queued = new Map<string, boolean>();
  private readonly limits = new Map<string, RequestBudget>();
  /** Per tenant: bytes of host copies per second, kept across the tenant's restarts like its write budget. */
  private readonly byteLimits = new Map<string, RequestBudget>();
  private readonly reported = new Map<string, string>();
  private readonly retired = new Set<TenantSyncer>();
  private tenants!: ListWatch;
  private policies!: ListWatch;
  private profiles!: ListWatch;
  private storageClasses!: ListWatch;
  /** Each running tenant's own copies of the host classes its claims may use. */
  private classCopies!: StorageClassCopies;
  /** Whether the StorageClass list is in: before, the host's default class is unknown, not absent. */
  private storageClassesKnown = false;
  private stopping = false;
  private readonly waiters = new Set<() => void>();
  private loops: Promise<void>[] = [];
  private secretTimer: NodeJS.Timeout | undefined;
  private hostNodes!: HostNodes;
  private announcing = false;
  /** Tenants that run alone, and until when: a worker died while they were busy not long ago (see admit). */
  private readonly probation = new Map<string, number>();
  /** Since when a tenant on probation waits for the others' work to end. */
  private readonly probationWaiting = new Map<string, number>();
  /** Keys in flight per tenant, and in all. */
  private readonly inFlight = new Map<string, number>();
  private inFlightTotal = 0;
  /** Tenants whose caches are filling or whose first pass is queued: busy for the crash ledger. */
  private readonly warming = new Map<string, NodeJS.Timeout>();

  constructor(private readonly deps: SupervisorDeps) {
    this.queue = new FairQueue(deps.settings.tenantConcurrency);
  }

  /** Queue depth per active tenant, for metrics. */
  queueDepths(): Map<string, number> {
    return new Map([...this.running.keys()].map((t) => [t, this.queue.depth(t)]));
  }

  /** Starts the host informers and the worker pool. */
  start(): void {
    const { hostClient, logger } = this.deps;
    this.hostNodes = new HostNodes(hostClient, logger);
    this.tenants = startListWatch({
      client: hostClient,
      path: `/apis/${API_VERSION}/${PLURAL_TENANT_CLUSTERS}`,
      apiVersion: API_VERSION,
      kind: "TenantCluster",
      logger: logger.child({ watch: "tenantclusters" }),
      // The sync workers' own status writes (about once a second per syncing tenant) change
      // nothing a syncer is built from: they are not looked at again.
      onEvent: (e) => {
        if (e.type !== "update") this.announceTenants();
        if (e.type === "update" && e.previous && othersView(e.previous) === othersView(e.object)) return;
        this.reconcile(e.object.metadata.name);
      },
    });
    this.policies = startListWatch({
      client: hostClient,
      path: `/apis/${API_VERSION}/${PLURAL_SYNC_POLICIES}`,
      apiVersion: API_VERSION,
      kind: "SyncPolicy",
      logger: logger.child({ watch: "syncpolicies" }),
      onEvent: () => this.reconcileAll(),
    });
    this.profiles = startListWatch({
      client: hostClient,
      path: `/apis/${API_VERSION}/${PLURAL_ISOLATION_PROFILES}`,
      apiVersion: API_VERSION,
      kind: "IsolationProfile",
      logger: logger.child({ watch: "isolationprofiles" }),
      onEvent: () => this.reconcileAll(),
    });
    // A tenant claim naming no class gets the host's default StorageClass (IsolationProfile
    // spec.workloads.storage): a new default re-plans every tenant.
    this.storageClasses = startListWatch({
      client: hostClient,
      path: "/apis/storage.k8s.io/v1/storageclasses",
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      logger: logger.child({ watch: "storageclasses" }),
      onEvent: () => {
        if (!this.storageClassesKnown) return;
        this.reconcileAll();
        this.classCopies.hostClassesChanged();
      },
    });
    this.classCopies = new StorageClassCopies({
      hostClient,
      fieldManager: this.deps.objects.fieldManager,
      logger: logger.child({ part: "storage-class-copies" }),
      hostClasses: () => this.storageClasses.list(),
      publish: (d) => this.deps.publish(d),
      validForMs: (tenant) => (this.deps.owns(tenant) ? this.deps.validForMs(tenant) : 0),
      writeToken: (tenant) => this.limits.get(tenant)?.wait() ?? Promise.resolve(),
    });
    void this.storageClasses.synced.then(() => {
      this.storageClassesKnown = true;
      this.reconcileAll();
    });
    for (let i = 0; i < this.deps.settings.concurrency; i++) this.loops.push(this.work());
    this.secretTimer = setInterval(() => this.reconcileAll(true), this.deps.settings.kubeconfigCheckMs);
  }

  /** Every TenantCluster in the cache now. */
  tenantNames(): string[] {
    return this.tenants.list().map((t) => t.metadata.name);
  }

  /** Tells tenantsChanged the tenant set once per burst of adds and deletes (a list brings hundreds). */
  private announceTenants(): void {
    if (this.announcing || this.deps.tenantsChanged === undefined) return;
    this.announcing = true;
    setImmediate(() => {
      this.announcing = false;
      if (this.stopping) return;
      this.deps.tenantsChanged?.(this.tenantNames());
    });
  }

  /** Resolves once the tenant and policy lists are in. */
  get synced(): Promise<void> {
    // The host's default StorageClass shapes every claim's copy: wait for it so no syncer starts
    // without it and restarts once it is in, but not forever (without the right to list
    // StorageClasses the default stays unknown and claims keep whatever class they name).
    const classes = Promise.race([this.storageClasses.synced, sleep(STORAGE_CLASS_WAIT_MS)]);
    return Promise.all([this.tenants.synced, this.policies.synced, this.profiles.synced, classes]).then(
      () => undefined,
    );
  }

  /**
   * Re-evaluates every known tenant (ownership changed, a policy changed, or the periodic
   * check, which alone re-reads the kubeconfig Secrets of running tenants: `rereadSecrets`).
   */
  reconcileAll(rereadSecrets = false): void {
    if (this.stopping || this.tenants === undefined) return;
    const names = new Set([...this.tenants.list().map((t) => t.metadata.name), ...this.running.keys()]);
    for (const name of names) this.reconcile(name, rereadSecrets);
  }

  /** Stops every tenant at once (lost partitions, fencing); they restart when ownership returns. */
  stopTenants(filter: (tenant: string) => boolean = () => true): void {
    for (const tenant of [...this.running.keys()]) if (filter(tenant)) this.stopTenant(tenant, "partition not held");
  }

  /** Stops syncers and informers, then waits for in-flight work. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.secretTimer);
    this.tenants?.stop();
    this.policies?.stop();
    this.profiles?.stop();
    this.storageClasses?.stop();
    this.classCopies?.stop();
    this.hostNodes?.stop();
    const syncers = [...this.running.values()].map((r) => r.syncer);
    this.stopTenants();
    this.wake();
    await Promise.all(this.loops);
    await Promise.all([...syncers, ...this.retired].map((s) => s.drain()));
    // A clean stop leaves no busy marker behind: only a crash does.
    await this.deps.ledger?.stop();
  }

  private reconcile(tenant: string, rereadSecret = false): void {
    // A reconcile queued and not yet started reads the state when it starts: it covers this request too
    // (a worker acquiring many partitions at once asks for every tenant once per partition).
    const queued = this.queued.get(tenant);
    if (queued !== undefined) {
      if (rereadSecret && !queued) this.queued.set(tenant, true);
      return;
    }
    this.queued.set(tenant, rereadSecret);
    const previous = this.chains.get(tenant) ?? Promise.resolve();
    const next = previous
      .then(() => {
        const reread = this.queued.get(tenant) ?? false;
        this.queued.delete(tenant);
        return this.reconcileNow(tenant, reread);
      })
      .catch((err) =>
        this.deps.logger.warn(
          { tenant, err: describeError(err) },
          "tenant reconcile failed; retried on the next check",
        ),
      );
    this.chains.set(tenant, next);
    void next.then(() => {
      if (this.chains.get(tenant) === next) this.chains.delete(tenant);
    });
  }

  private async reconcileNow(tenant: string, rereadSecret: boolean): Promise<void> {
    if (this.stopping) return;
    const tc = this.tenants.get(undefined, tenant);
    const current = this.running.get(tenant);
    const plan = planTenant(
      tc,
      (name) => this.policies.get(undefined, name),
      (name) => this.profiles.get(undefined, name),
      current !== undefined,
      this.storageClassesKnown ? defaultStorageClass(this.storageClasses.list()) : undefined,
    );
    if (!plan.run || !this.deps.owns(tenant)) {
      if (current) this.stopTenant(tenant, plan.run ? "partition not held" : plan.why);
      const problem = "problem" in plan ? plan.problem : undefined;
      if (problem !== undefined && this.deps.owns(tenant) && tc) {
        await this.report(tenant, tc, { type: "Synced", status: "False", ...problem }, undefined);
        if (this.reported.get(tenant) !== problem.reason) {
          this.reported.set(tenant, problem.reason);
          await this.deps.warn(tenant, tc.metadata.uid, problem.reason, problem.message);
        }
      }
      return;
    }
    this.reported.delete(tenant);
    const secretRef = `${plan.secret.namespace}/${plan.secret.name}/${plan.secret.key}`;
    // This worker's own status writes come back as TenantCluster events: they need no Secret
    // read. Anything else on the TenantCluster (a new endpoint, rotation by the provisioner)
    // does, and the periodic check catches a Secret changed on its own.
    const tenantView = othersView(tc);
    if (
      !rereadSecret &&
      current !== undefined &&
      current.tenantView === tenantView &&
      current.secretRef === secretRef &&
      current.identity === syncerIdentity(plan, current.kubeconfigHash)
    ) {
      return;
    }
    if (current === undefined && !(await this.admit(tenant, tc!))) return;
    const secret = await this.deps.hostClient
      .request<
        RawObject & { data?: Record<string, string> }
      >("GET", `/api/v1/namespaces/${plan.secret.namespace}/secrets/${encodeURIComponent(plan.secret.name)}`)
      .catch((err: unknown) => {
        this.deps.logger.warn({ tenant, err: describeError(err) }, "cannot read the tenant's kubeconfig Secret");
        return undefined;
      });
    const encoded = secret?.data?.[plan.secret.key];
    if (encoded === undefined) {
      if (current === undefined && tc) {
        await this.report(
          tenant,
          tc,
          {
            type: "Synced",
            status: "False",
            reason: "KubeconfigUnavailable",
            message: `kubeconfig Secret ${plan.secret.namespace}/${plan.secret.name} key ${plan.secret.key} cannot be read yet`,
          },
          undefined,
        );
      }
      return;
    }
    const kubeconfig = Buffer.from(encoded, "base64").toString("utf8");
    const hash = createHash("sha256").update(kubeconfig).digest("hex").slice(0, 16);
    const identity = syncerIdentity(plan, hash);
    if (current?.identity === identity) {
      current.tenantView = tenantView;
      return;
    }
    if (current) this.stopTenant(tenant, restartReason(current, plan, hash));
    if (!this.deps.owns(tenant) || this.stopping) return;
    let tenantClient: JsonClient;
    let tenantCaPem: string;
    try {
      const kc = kubeConfigFromString(kubeconfig);
      tenantClient = new JsonClient(kc, {
        timeoutMs: 15_000,
        onReceived: (bytes) => this.deps.metrics.receivedBytes.inc({ side: "tenant" }, bytes),
        ...(this.deps.userAgent === undefined ? {} : { userAgent: this.deps.userAgent }),
      });
      tenantCaPem = Buffer.from(kc.getCurrentCluster()?.caData ?? "", "base64").toString("utf8");
    } catch (err) {
      this.deps.logger.warn({ tenant, err: describeError(err) }, "tenant kubeconfig does not load");
      return;
    }
    // Busy from the first list on: a tenant too big to list is the likeliest to kill a worker.
    await this.deps.ledger?.busy(tenant);
    if (!this.deps.owns(tenant) || this.stopping) {
      void this.deps.ledger?.clear(tenant);
      return;
    }
    this.startTenant(
      tenant,
      plan,
      { identity, secretRef, kubeconfigHash: hash, tenantView },
      secret?.metadata.resourceVersion ?? "",
      tenantClient,
      tenantCaPem,
    );
  }

  private startTenant(
    tenant: string,
    plan: { policy: SyncPolicySpec; policyName: string | undefined; rules: HostRules },
    started: { identity: string; secretRef: string; kubeconfigHash: string; tenantView: string },
    secretVersion: string,
    tenantClient: JsonClient,
    tenantCaPem: string,
  ): void {
    const logger = this.deps.logger.child({ tenant });
    let limiter = this.limits.get(tenant);
    if (limiter === undefined) {
      limiter = new RequestBudget(this.deps.settings.tenantWriteQps, this.deps.settings.tenantWriteBurst);
      this.limits.set(tenant, limiter);
    }
    const tenantLimiter = limiter;
    let bytes = this.byteLimits.get(tenant);
    const bytesPerSecond = this.deps.settings.tenantWriteBytesPerSecond;
    if (bytes === undefined && bytesPerSecond !== undefined) {
      bytes = new RequestBudget(bytesPerSecond, Math.max(1, bytesPerSecond));
      this.byteLimits.set(tenant, bytes);
    }
    const tenantBytes = bytes;
    // One watch per collection for both directions (see SharedWatches).
    const watches = new SharedWatches();
    const events = new TenantEvents(jsonEventSink(tenantClient), {
      instance: this.deps.identity ?? "sync-worker",
      logger,
      count: (outcome) => this.deps.metrics.tenantEvents.inc({ outcome }),
    });
    const syncer: TenantSyncer = new TenantSyncer({
      tenant,
      policy: plan.policy,
      policyName: plan.policyName,
      rules: plan.rules,
      hashKey: this.deps.settings.hashKey,
      tenantClient,
      watches,
      hostClient: this.deps.hostClient,
      writer: this.deps.writer,
      logger,
      enqueue: (key) => {
        if (syncer.isStopped) return;
        this.queue.add(tenant, key);
        this.wake();
      },
      publish: (d) => this.deps.publish(d),
      warn: (reason, message) =>
        this.deps.warn(tenant, this.tenants.get(undefined, tenant)?.metadata.uid, reason, message),
      events,
      onFailureChange: (key) => backSync.poke(key),
      onStatus: () => this.scheduleStatus(tenant),
      writeToken: () => tenantLimiter.wait(),
      writeBytes: async (n) => {
        if (tenantBytes === undefined) return;
        await tenantBytes.wait(n);
        // A long hold shows in the Synced condition (writeStatus looks again until it ends).
        if (tenantBytes.holdingBackMs() >= PACED_NOTICE_MS) this.scheduleStatus(tenant);
      },
      mayWrite: () => this.deps.owns(tenant),
      leaseValidMs: () => this.deps.validForMs(tenant),
      limits: this.deps.settings.tenantLimits,
      tenantCaPem,
      tokenRefreshMaxSeconds: this.deps.settings.tokenRefreshMaxSeconds,
      observe: {
        outcome: (outcome) => this.deps.metrics.objects.inc({ outcome }),
        latency: (seconds) => this.deps.metrics.latency.observe(seconds),
        stage: (stage, seconds) => this.deps.metrics.writeStages.observe({ stage }, seconds),
      },
    });
    const backSync = new BackSync({
      tenant,
      kinds: new Set(plan.policy.toHost.map((r) => r.kind)),
      tenantClient,
      hostClient: this.deps.hostClient,
      watches,
      hostNodes: this.hostNodes,
      logger: logger.child({ direction: "back" }),
      metrics: this.deps.backSyncMetrics,
      mayWrite: () => this.deps.owns(tenant),
      onStatus: () => this.scheduleStatus(tenant),
      events,
      syncFailure: (key) => {
        const failure = syncer.publishedFailure(key);
        return failure && syncFailedMessage(failure.kind, failure.hostRef, failure.error);
      },
    });
    let deferred = 0;
    const resync = setInterval(() => {
      // A tenant still working through queued keys (a bulk create, the first pass of a large
      // tenant) would only plan again what is queued, and on a resync shorter than the backlog,
      // over and over. Deferred a few times at most: a tenant that never stops changing still
      // gets its safety net.
      if (this.queue.depth(tenant) > 0 && deferred < MAX_DEFERRED_PASSES) {
        deferred++;
        return;
      }
      deferred = 0;
      syncer.fullPass();
      backSync.fullPass();
      this.ensureClassCopies(tenant, plan.rules);
    }, this.deps.settings.resyncMs);
    const migration = new MigrationDriver({
      tenant,
      tenantClient,
      hostClient: this.deps.hostClient,
      watches,
      tenantCluster: () => this.tenants.get(undefined, tenant),
      publish: (d) => this.deps.publish(d),
      mayWrite: () => this.deps.owns(tenant) && this.deps.validForMs(tenant) > 0,
      logger: logger.child({ part: "migration" }),
    });
    this.running.set(tenant, { syncer, backSync, migration, ...started, secretVersion, resync });
    this.deps.metrics.tenantActive.set({ tenant }, 1);
    this.deps.metrics.tenantsActive.set(this.running.size);
    logger.info({ policy: plan.policyName ?? "(default)", server: tenantClient.serverUrl }, "tenant sync started");
    syncer.start();
    backSync.start();
    migration.start();
    this.ensureClassCopies(tenant, plan.rules);
    this.watchWarmUp(tenant, syncer);
    this.scheduleStatus(tenant);
  }

  private stopTenant(tenant: string, why: string): void {
    const current = this.running.get(tenant);
    if (current === undefined) return;
    current.syncer.stop();
    current.backSync.stop();
    current.migration.stop();
    this.classCopies.forget(tenant);
    // Its last Decisions may still be publishing; shutdown waits for them.
    this.retired.add(current.syncer);
    void current.syncer.drain().then(() => this.retired.delete(current.syncer));
    clearInterval(current.resync);
    clearTimeout(current.statusTimer);
    this.running.delete(tenant);
    this.queue.drop(tenant);
    clearInterval(this.warming.get(tenant));
    this.warming.delete(tenant);
    this.probationWaiting.delete(tenant);
    void this.deps.ledger?.clear(tenant);
    this.deps.metrics.tenantActive.remove({ tenant });
    this.deps.metrics.tenantsActive.set(this.running.size);
    this.deps.logger.info({ tenant, why }, "tenant sync stopped");
  }

  // Tenant claims ask for the tenant's own copy of their host class (README: Claims and storage).
  private ensureClassCopies(tenant: string, rules: HostRules): void {
    this.classCopies.ensure(tenant, this.tenants.get(undefined, tenant)?.metadata.uid, rules.storage);
  }

  private scheduleStatus(tenant: string, delayMs = STATUS_DEBOUNCE_MS): void {
    const current = this.running.get(tenant);
    if (current === undefined || current.statusTimer !== undefined) return;
    current.statusTimer = setTimeout(() => {
      current.statusTimer = undefined;
      void this.writeStatus(tenant, current);
    }, delayMs);
  }

  private async writeStatus(tenant: string, current: Running): Promise<void> {
    if (current.syncer.isStopped || !this.deps.owns(tenant)) return;
    const tc = this.tenants.get(undefined, tenant);
    if (tc === undefined) return;
    const bytes = this.byteLimits.get(tenant);
    const heldBackMs = bytes?.holdingBackMs() ?? 0;
    try {
      await this.writeStatusOf(tenant, current, tc, {
        ...current.syncer.counts(),
        backSyncFailed: current.backSync.failed(),
        paced: bytes && describePacing(heldBackMs, bytes.perSecond, this.queue.depth(tenant)),
      });
    } finally {
      // Nothing else tells when the byte budget stops holding writes back: look again.
      if (heldBackMs > 0) this.scheduleStatus(tenant, PROGRESS_INTERVAL_MS);
    }
  }

  private async writeStatusOf(tenant: string, current: Running, tc: RawObject, state: SyncState): Promise<void> {
    const condition = syncedCondition(state);
    const sync = syncStatusField(state);
    const text = JSON.stringify({ condition, sync });
    if (text === current.lastStatus) return;
    const key = `${condition.status}/${condition.reason}`;
    const sinceLast = Date.now() - (current.lastState?.at ?? 0);
    if (current.lastState?.key === key && sinceLast < PROGRESS_INTERVAL_MS) {
      this.scheduleStatus(tenant, PROGRESS_INTERVAL_MS - sinceLast);
      return;
    }
    try {
      await this.report(tenant, tc, condition, sync);
      current.lastStatus = text;
      current.lastState = { key, at: Date.now() };
      await this.announceCaughtUp(tenant, tc, condition);
    } catch (err) {
      this.deps.logger.warn({ tenant, err: describeError(err) }, "writing Synced status failed; retrying");
      await sleep(2_000);
      this.scheduleStatus(tenant);
    }
  }

  // Once per transition to Synced=True as the TenantCluster last showed it; best effort.
  private async announceCaughtUp(tenant: string, tc: RawObject, condition: ConditionInput): Promise<void> {
    if (condition.status !== "True" || !this.deps.notify) return;
    const previous = (tc["status"] as { conditions?: Condition[] } | undefined)?.conditions;
    if (previous?.find((c) => c.type === condition.type)?.status === "True") return;
    await this.deps
      .notify(tenant, tc.metadata.uid, "SyncCaughtUp", `every tenant object is synced: ${condition.message}`)
      .catch((err: unknown) => this.deps.logger.info({ tenant, err: describeError(err) }, "SyncCaughtUp not recorded"));
  }

  private async report(tenant: string, tc: RawObject, condition: ConditionInput, sync: SyncStatus | undefined) {
    const previous = (tc["status"] as { conditions?: Condition[] } | undefined)?.conditions;
    const generation = tc.metadata["generation"];
    await applyTenantStatus(
      this.deps.objects,
      tenant,
      previous,
      { ...condition, ...(typeof generation === "number" ? { observedGeneration: generation } : {}) },
      sync === undefined ? {} : { sync },
    );
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Shared by the work loops: the keys they plan in one turn of the event loop take a slice at most. */
  private readonly slicer = new TimeSlicer();

  private async work(): Promise<void> {
    while (!this.stopping) {
      const item = this.queue.take(
        (tenant) =>
          (this.limits.get(tenant)?.waitMs() ?? 0) === 0 &&
          (this.byteLimits.get(tenant)?.backlogMs() ?? 0) <= BYTE_BACKLOG_MS &&
          this.mayStartNow(tenant),
      );
      if (item === undefined) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.waiters.delete(done);
            resolve();
          };
          // Busy tenants out of write budget are looked at again soon; an idle pool sleeps until woken.
          const timer = setTimeout(done, this.queue.hasPending() ? 20 : 1_000);
          this.waiters.add(done);
        });
        continue;
      }
      this.deps.metrics.queueWait.observe((Date.now() - item.since) / 1000);
      const current = this.running.get(item.tenant);
      this.started(item.tenant);
      try {
        if (current) {
          await this.markBusy(item.tenant);
          if (this.deps.crashOnObjectName !== undefined && decodeKey(item.key).name === this.deps.crashOnObjectName) {
            process.kill(process.pid, "SIGKILL");
          }
          await current.syncer.process(item.key, item.since);
        }
      } finally {
        this.finished(item.tenant);
        this.queue.done(item.tenant, item.key);
        // A tenant below its in-flight limit again may have work for a sleeping worker.
        this.wake();
      }
      // A key planned without a write (in sync, or held back) ends without I/O, and the next
      // starts in the same turn: a run of megabyte objects would hold the loop for all of them.
      await this.slicer.yieldIfDue();
    }
  }

  /**
   * Whether a key of `tenant` may start now. A tenant on probation runs alone: it starts only
   * when no other tenant has a key in flight or is warming up, and while its keys run nothing
   * else starts; so should it kill the worker again, it is the only tenant marked busy. Once it
   * has waited {@link PROBATION_WAIT_MS}, the others pause until it has had its turn.
   */
  private mayStartNow(tenant: string): boolean {
    if (this.probation.size === 0) return true;
    const now = Date.now();
    for (const [p, until] of this.probation) {
      if (until <= now) this.probation.delete(p);
      else if (p !== tenant && (this.inFlight.get(p) ?? 0) > 0) return false;
    }
    if (this.probation.has(tenant)) {
      const others = this.inFlightTotal - (this.inFlight.get(tenant) ?? 0);
      const warming = [...this.warming.keys()].some((t) => t !== tenant);
      if (others === 0 && !warming) {
        this.probationWaiting.delete(tenant);
        return true;
      }
      if (!this.probationWaiting.has(tenant)) this.probationWaiting.set(tenant, Date.now());
      return false;
    }
    // A tenant still warming up finishes first: the one on probation waits for exactly that.
    if (this.warming.has(tenant)) return true;
    for (const since of this.probationWaiting.values()) if (now - since >= PROBATION_WAIT_MS) return false;
    return true;
  }

  /** Stores the tenant's busy marker before its work runs (a tenant on probation: every other idle marker first goes). */
  private async markBusy(tenant: string): Promise<void> {
    const ledger = this.deps.ledger;
    if (ledger === undefined) return;
    if (this.probation.has(tenant)) await ledger.quiet(tenant);
    await ledger.busy(tenant);
  }

  private started(tenant: string): void {
    this.inFlight.set(tenant, (this.inFlight.get(tenant) ?? 0) + 1);
    this.inFlightTotal++;
  }

  private finished(tenant: string): void {
    const left = (this.inFlight.get(tenant) ?? 1) - 1;
    this.inFlightTotal--;
    if (left > 0) {
      this.inFlight.set(tenant, left);
      return;
    }
    this.inFlight.delete(tenant);
    if (!this.warming.has(tenant)) this.deps.ledger?.idle(tenant);
  }

  /**
   * Keeps the tenant marked busy until its caches have listed and its first pass has been worked
   * through, or for {@link WARM_UP_BUSY_MS} at most (the marker was written before its syncer started).
   */
  private watchWarmUp(tenant: string, syncer: TenantSyncer): void {
    if (this.deps.ledger === undefined) return;
    const since = Date.now();
    const timer = setInterval(() => {
      // A tenant API that does not answer keeps the first list waiting: idle, not busy, after a while.
      const tooLong = Date.now() - since > WARM_UP_BUSY_MS;
      if (!tooLong && (syncer.isStopped || !syncer.counts().started)) return;
      if (!tooLong && (this.queue.depth(tenant) > 0 || (this.inFlight.get(tenant) ?? 0) > 0)) return;
      clearInterval(timer);
      this.warming.delete(tenant);
      this.deps.ledger?.idle(tenant);
      this.wake();
    }, 500);
    timer.unref();
    this.warming.set(tenant, timer);
  }

  /**
   * Asks the crash ledger whether `tenant` may start here: counts the crash a dead worker left
   * behind (a Warning), keeps a quarantined tenant stopped (Synced=False Quarantined, and the
   * Warning once, from the worker that quarantined it), releases it on a new value of the
   * release annotation (a Normal Event), and puts a tenant with recent crashes on probation.
   * A ledger that cannot be reached lets the tenant run: it must never stop syncing by itself.
   */
  private async admit(tenant: string, tc: RawObject): Promise<boolean> {
    const ledger = this.deps.ledger;
    if (ledger === undefined) return true;
    const uid = tc.metadata.uid;
    const token = tc.metadata.annotations?.[ANNOTATION_RELEASE_QUARANTINE];
    let admission: Awaited<ReturnType<typeof ledger.admit>>;
    try {
      admission = await ledger.admit(tenant, token);
    } catch (err) {
      this.deps.logger.warn({ tenant, err: describeError(err) }, "crash ledger not reachable; syncing without it");
      return true;
    }
    if (admission.verdict === "wait") {
      // The worker named in the marker is alive, handing the tenant over; its marker goes when it has.
      setTimeout(() => this.reconcile(tenant), 250).unref();
      return false;
    }
    const counted = admission.counted;
    if (counted !== undefined) {
      const reason = counted.quarantinedNow ? REASON_TENANT_QUARANTINED : REASON_WORKER_CRASHED;
      await this.deps
        .warn(tenant, uid, reason, crashedMessage(tenant, counted, ledger.policy))
        .catch((err: unknown) => this.deps.logger.warn({ tenant, err: describeError(err) }, "crash Event not written"));
    }
    if (admission.verdict === "quarantined") {
      this.probation.delete(tenant);
      const condition = quarantinedCondition(tenant, admission.record, ledger.policy);
      const shown = (tc["status"] as { conditions?: Condition[] } | undefined)?.conditions?.find(
        (c) => c.type === "Synced",
      );
      // Checked again on every resync: written only when the TenantCluster does not say it yet.
      if (this.deps.owns(tenant) && (shown?.reason !== condition.reason || shown.message !== condition.message)) {
        await this.report(tenant, tc, condition, undefined);
      }
      return false;
    }
    if (admission.released && token !== undefined) {
      await this.deps
        .notify?.(tenant, uid, REASON_QUARANTINE_RELEASED, releasedMessage(token))
        .catch((err: unknown) =>
          this.deps.logger.info({ tenant, err: describeError(err) }, "release Event not written"),
        );
    }
    if (admission.probationUntil !== undefined) this.probation.set(tenant, admission.probationUntil);
    else this.probation.delete(tenant);
    return true;
  }
}
