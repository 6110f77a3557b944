import { SYNC_KINDS, type SyncPolicySpec } from "@tenantplane/api";
import { resourcePath, type JsonClient, type ListWatch, type RawObject } from "@tenantplane/kube";
import {
  hostName,
  hostNamespaceFor,
  LABEL_KIND,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  labelValue,
  MANAGED_BY,
} from "@tenantplane/mapping";
import { decisionId, type PlannedDecision } from "@tenantplane/messaging";
import {
  backoffDelay,
  describe,
  normalizeError,
  TransientError,
  type Logger,
  type TenantplaneError,
} from "@tenantplane/runtime";
import { decisionRecords, faults } from "@tenantplane/service";
import {
  applyServiceQuota,
  nativeObjectReason,
  PlanMemo,
  podEnvironmentFrom,
  type HostObject,
  type HostRules,
  type KubeObject,
  type PlannedDecisionWithObject,
  type PodEnvironment,
} from "@tenantplane/sync";
import { TENANT_API_SERVICE, TENANT_DNS_SERVICE } from "@tenantplane/mapping";
import { pluralOf, type HostWriter, type TenantWriter } from "./host-writer.js";
import {
  heldBackStub,
  isPayloadKind,
  leanHostCopy,
  sizeFromWire,
  sizeOf,
  TenantBudget,
  withoutManagedFields,
  type TenantLimits,
} from "./tenant-limits.js";
import { TimeSlicer } from "./time-slice.js";
import { prepareSliced } from "./prepare-source.js";
import { planKey, planPassSteps, sourceOfCopy, type KeyPlan, type TenantPlanContext } from "./key-plan.js";
import type { SharedWatches } from "./shared-watches.js";
import { openHostWatch } from "./host-copy-watch.js";
import { SkipMemory } from "./skip-memory.js";
import { admitSkip } from "./paced-skip.js";
import { deleteId, newRecord, recordOf, republishable, withRecord } from "./decision-record.js";
import { PodNetworkRecords } from "./pod-network-records.js";
import { podOfTokenSecret, PodTokenKeeper, type MintFailure } from "./pod-tokens.js";
import { judgesPodsAgain, openTenantNodes, privateNodeNames } from "./tenant-nodes.js";
import { Readmission } from "./readmission.js";
import { boundNodeOnlyChange, statusOnlyChange } from "./status-only.js";
import { decodeKey, encodeKey, type SourceKey } from "./source-key.js";
import type { SyncCounts } from "./sync-status.js";
import { FailureMemory, type FailedObject } from "./failure-memory.js";
import {
  REASON_SYNC_FAILED,
  REASON_SYNC_SKIPPED,
  syncFailedMessage,
  syncSkippedMessage,
  type TenantEvents,
} from "./tenant-events.js";
import { hostAnswerOf, WriteFailure, type AttemptedWrite } from "./write-failure.js";

/** The service name Decisions carry; a Delete's id is derived with it. */
const SERVICE = "sync-worker";
/** How long a Delete waits for its Decision to be stored before it is retried later. */
const DELETE_ANNOUNCE_TIMEOUT_MS = 5_000;

/**
 * Page size of the ConfigMap and Secret lists (tenant objects and host copies): a page is read
 * and parsed whole before its objects are judged against the limits (or lose their payload), so
 * a page of objects near the 1.5 MiB the API stores stays about 6 MiB, held and parsed (one
 * synchronous piece of work) in well under 50 ms.
 */
const PAYLOAD_PAGE_SIZE = 4;
/**
 * Watch events of ConfigMaps and Secrets at least this long are judged by their metadata before
 * their payload is decoded: one beyond the tenant's limits is held back unread. Below it, reading
 * the whole event costs less than looking first.
 */
const LARGE_EVENT_BYTES = 64 * 1024;
/**
 * What a size read off the wire may differ by from the object's size once parsed (escapes written
 * differently): an event that fits with this much to spare is read whole and judged exactly.
 */
const WIRE_SIZE_SLACK = 4 * 1024;
/** What a write of an object the budget does not count (a system namespace's) is charged, in bytes. */
const MIN_WRITE_BYTES = 1024;

/** Per-object outcomes the status counts. */
type Outcome = "inSync" | "skipped" | "failed";

/** What one tenant's syncer is given; everything it touches outside its tenant goes through these. */
export interface SyncerDeps {
  tenant: string;
  policy: SyncPolicySpec;
  policyName: string | undefined;
  /** What the tenant's objects may do to the host, from its IsolationProfile. */
  rules: HostRules;
  /** Keys the content hash on host copies; undefined leaves it unkeyed. */
  hashKey: string | undefined;
  tenantClient: JsonClient;
  hostClient: JsonClient;
  /** The tenant's watches, shared with its back-sync. */
  watches: SharedWatches;
  writer: HostWriter;
  logger: Logger;
  /** Queues a key of this tenant for {@link TenantSyncer.process}. */
  enqueue(key: string): void;
  publish(decision: PlannedDecision): Promise<void>;
  /** A Warning Event on the TenantCluster. */
  warn(reason: string, message: string): Promise<void>;
  /** Warning Events on the tenant's own objects, in its API. */
  events: TenantEvents;
  /** A published failure of this source key began, changed or ended (back-sync shows it on the tenant Pod). */
  onFailureChange?(key: string): void;
  /** Called when counts or connectivity change; the caller writes status (throttled). */
  onStatus(): void;
  /** False once this worker's lease on the tenant's partition is lost or fenced: no write may start. */
  mayWrite(): boolean;
  /** Per-tenant write budget: resolves when this tenant may write again. */
  writeToken(): Promise<void>;
  /** Waits until the tenant's byte budget has room for a host write of `bytes` (resolves at once without one). */
  writeBytes?(bytes: number): Promise<void>;
  /** What this tenant may make the worker hold (objects, bytes). */
  limits: TenantLimits;
  /**
   * Milliseconds this worker's lease on the tenant's partition stays valid (already short of
   * the fence margin); 0 or less once lost. Every host write checks it right before it is sent.
   */
  leaseValidMs(): number;
  observe: {
    outcome(outcome: "create" | "update" | "delete" | "skip" | "in_sync" | "failed"): void;
    latency(seconds: number): void;
    /** Seconds one write spent planning its key and waiting for the tenant's write budget. */
    stage?(stage: "plan" | "tenant_budget", seconds: number): void;
  };
  /** The tenant API's CA (PEM), given to Pods with their tenant tokens. */
  tenantCaPem: string;
  /** Longest time a tenant token goes unrefreshed, whatever its lifetime. */
  tokenRefreshMaxSeconds: number;
}

/**
 * Keeps one tenant's host copies in step with its tenant API: informers on the tenant
 * (the policy's kinds and namespaces) and on the host namespace (sync copies of every
 * kind), each change planning and applying only its own object, and a full pass at
 * start and on every resync as the safety net for garbage collection. Deletes happen
 * only while the listings they rely on are complete and current.
 */
export class TenantSyncer {
  private readonly tenantWatches = new Map<string, ListWatch>();
  private readonly hostWatches = new Map<string, ListWatch>();
  private namespaces!: ListWatch;
  /** The tenant's Nodes (Pods only): a Pod bound to one of its own (not virtual) is never copied. */
  private nodes: ListWatch | undefined;
  /** Names of those Nodes, worked out again after a Node event (undefined until then). */
  private privateNodes: ReadonlySet<string> | undefined;
  private readonly outcomes = new Map<string, Outcome>();
  private readonly skips = new SkipMemory();
  private readonly failures = new FailureMemory();
  /** Decisions of completed writes still being published, per host object. */
  private readonly publishing = new Map<string, Promise<void>>();
  /** Consecutive failures per key, for the retry backoff. */
  private readonly attempts = new Map<string, number>();
  private readonly kinds: Set<string>;
  /** Source key → host copies (`kind/name`) whose reverse mapping names it. */
  private readonly copies = new Map<string, Set<string>>();
  /**
   * Translations of the cached tenant objects: the caches replace an object on change, never
   * mutate it. A translation shares its source's strings, so a megabyte ConfigMap's copy here
   * costs its metadata, not a second megabyte.
   */
  private readonly memo = new PlanMemo();
  /** What the tenant's cached objects weigh against its limits. */
  private readonly budget: TenantBudget;
  private readonly readmission: Readmission;
  /** Host writes of this tenant: each checks the lease right before it is sent. */
  private readonly writer: TenantWriter;
  /** A full pass is running; another asked for meanwhile runs after it. */
  private passing = false;
  private passAgain = false;
  private stopped = false;
  private lastPass: Date | undefined;
  private downSince: number | undefined;
  private downReason = "";
  private started = false;
  private readonly podNetwork: PodNetworkRecords;
  private readonly podTokens: PodTokenKeeper;

  constructor(private readonly deps: SyncerDeps) {
    this.kinds = new Set(deps.policy.toHost.map((r) => r.kind));
    this.budget = new TenantBudget(deps.limits);
    this.readmission = new Readmission({
      budget: this.budget,
      fetch: (kind, namespace, name) =>
        deps.tenantClient.request<RawObject>("GET", resourcePath("v1", pluralOf(kind), namespace, name)),
      reconsider: (kind, obj) => this.tenantWatches.get(kind)?.reconsider(obj) ?? false,
      logger: deps.logger.child({ part: "readmission" }),
    });
    this.writer = deps.writer.forTenant(() => (this.stopped ? 0 : deps.leaseValidMs()));
    const hostNs = hostNamespaceFor(deps.tenant);
    const common = {
      tenant: deps.tenant,
      writer: this.writer,
      mayWrite: () => !this.stopped && deps.mayWrite(),
      writeToken: () => deps.writeToken(),
      publish: (d: PlannedDecision) => deps.publish(d),
    };
    this.podNetwork = new PodNetworkRecords({
      ...common,
      environment: () => this.podEnvironment(),
      tenantServices: () => this.tenantWatches.get("Service")?.list() ?? [],
      tenantPods: () => this.tenantWatches.get("Pod")?.list() ?? [],
      hostServices: () => this.hostWatches.get("Service")?.list() ?? [],
      hostPods: () => this.hostWatches.get("Pod")?.list() ?? [],
      hostConfigMaps: () => this.hostWatches.get("ConfigMap")?.list() ?? [],
      complete: () =>
        this.deleteAllowed("Service") &&
        (this.hostWatches.get("ConfigMap")?.current() ?? false) &&
        (this.hostWatches.get("Pod")?.current() ?? false),
      privateMode: deps.rules.placement?.mode === "Private",
      logger: deps.logger.child({ part: "pod-network" }),
    });
    this.podTokens = new PodTokenKeeper({
      ...common,
      tenantClient: deps.tenantClient,
      tenantCaPem: deps.tenantCaPem,
      hostPods: () => this.hostWatches.get("Pod")?.list() ?? [],
      hostPod: (name) => this.hostWatches.get("Pod")?.get(hostNs, name),
      hostSecret: (name) => this.hostWatches.get("Secret")?.get(hostNs, name),
      maxRefreshSeconds: deps.tokenRefreshMaxSeconds,
      onFailure: (failure) => this.noteMintFailure(failure),
      logger: deps.logger.child({ part: "pod-tokens" }),
    });
  }

  /**
   * A host Pod whose tokens cannot be minted or stored runs none of its containers (they wait
   * for the token Secret): a Fail Decision about the Secret and a Warning on the tenant Pod say
   * why, once per answer (the keeper retries with backoff meanwhile).
   */
  private noteMintFailure(failure: MintFailure): void {
    if (this.stopped || !this.deps.mayWrite()) return;
    const planned: PlannedDecision = {
      tenant: this.deps.tenant,
      action: "Fail",
      kind: "Secret",
      tenantRef: failure.tenantRef,
      hostRef: failure.hostRef,
      reason: `${failure.error.reason}: ${failure.message} (still retrying)`,
      error: failure.error,
    };
    const id = decisionId(planned, SERVICE, `token-fail:${failure.hostPod}:${failure.instance}`);
    this.publishAfterWrite({ ...planned, id });
    const source = this.tenantWatches.get("Pod")?.get(failure.tenantRef.namespace, failure.tenantRef.name);
    if (source !== undefined) void this.deps.events.warn(tenantObject(source), REASON_SYNC_FAILED, failure.message);
  }

  /** Where host Pods reach the tenant API and DNS, from the tenant's own Services in the host cache. */
  private podEnvironment(): PodEnvironment | "unknown" {
    const services = this.hostWatches.get("Service");
    const hostNs = hostNamespaceFor(this.deps.tenant);
    const own = [services?.get(hostNs, TENANT_API_SERVICE), services?.get(hostNs, TENANT_DNS_SERVICE)];
    return podEnvironmentFrom(
      own.filter((s) => s !== undefined),
      this.deps.tenant,
    );
  }

  get tenant(): string {
    return this.deps.tenant;
  }

  /** Starts the informers; the first full pass runs once all have listed. */
  start(): void {
    const { tenant, logger } = this.deps;
    const hostNs = hostNamespaceFor(tenant);
    const selector = `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${labelValue(tenant)}`;
    const onTenantCurrent = (current: boolean, err?: unknown) => this.tenantReachability(current, err);
    for (const kind of this.kinds) {
      this.tenantWatches.set(
        kind,
        this.deps.watches.open({
          client: this.deps.tenantClient,
          path: resourcePath("v1", pluralOf(kind)),
          apiVersion: "v1",
          kind,
          logger: logger.child({ side: "tenant", kind }),
          // Judged as each version arrives: one held back beyond the limits is cached as a stub.
          transform: (obj) => this.admit(obj),
          ...(kind === "ConfigMap" || kind === "Secret"
            ? {
                pageSize: PAYLOAD_PAGE_SIZE,
                largeEvents: { minBytes: LARGE_EVENT_BYTES, peek: (obj, sizes) => this.peekLarge(obj, sizes) },
              }
            : {}),
          onEvent: (e) => {
            if (e.type === "delete") {
              this.budget.release(kind, e.object.metadata.namespace ?? "default", e.object.metadata.name);
              this.readmission.schedule();
            }
            // A Pod's status and its binding to a virtual node (what back-sync writes) are not
            // what its copy is made of.
            if (!(e.type === "update" && e.previous && this.backSyncOnly(e.previous, e.object)))
              this.deps.enqueue(encodeKey(keyOf(e.object)));
            // Pods are the endpoints of headless Services and carry hostnames.
            if ((kind === "Service" || kind === "Pod") && this.started) this.podNetwork.schedule();
          },
          onCurrent: onTenantCurrent,
        }),
      );
    }
    this.namespaces = this.deps.watches.open({
      client: this.deps.tenantClient,
      path: "/api/v1/namespaces",
      apiVersion: "v1",
      kind: "Namespace",
      logger: logger.child({ side: "tenant", kind: "Namespace" }),
      // Objects and their namespace arrive on separate watches: whichever comes second
      // replans the namespace's objects, so a new namespace's objects are never missed.
      onEvent: (e) => {
        if (this.started) this.enqueueNamespace(e.object.metadata.name);
      },
      onCurrent: onTenantCurrent,
    });
    if (this.kinds.has("Pod")) {
      this.nodes = openTenantNodes(this.deps.watches, this.deps.tenantClient, logger, (e) => {
        // A node joined or left the tenant's API (or lost its virtual-node label): its Pods are judged again.
        if (!judgesPodsAgain(e)) return;
        this.privateNodes = undefined;
        if (!this.started) return;
        for (const pod of this.tenantWatches.get("Pod")?.list() ?? []) {
          if ((pod["spec"] as { nodeName?: string } | undefined)?.nodeName === e.object.metadata.name)
            this.deps.enqueue(encodeKey(keyOf(pod)));
        }
      });
    }
    for (const kind of SYNC_KINDS) {
      this.hostWatches.set(
        kind,
        openHostWatch(this.deps.watches, {
          client: this.deps.hostClient,
          path: resourcePath("v1", pluralOf(kind), hostNs),
          apiVersion: "v1",
          kind,
          labelSelector: selector,
          logger: logger.child({ side: "host", kind }),
          transform: (obj) => leanHostCopy(obj, LABEL_KIND),
          ...(kind === "ConfigMap" || kind === "Secret" ? { pageSize: PAYLOAD_PAGE_SIZE } : {}),
          onEvent: (e) => {
            if (this.started) this.onPodEnvironmentEvent(kind, e.object.metadata.name);
            const key = sourceOfCopy(e.object, tenant);
            if (key === undefined) return;
            const text = encodeKey(key);
            const ref = `${kind}/${e.object.metadata.name}`;
            let set = this.copies.get(text);
            if (e.type === "delete") {
              set?.delete(ref);
              if (set?.size === 0) this.copies.delete(text);
            } else {
              if (set === undefined) this.copies.set(text, (set = new Set()));
              set.add(ref);
            }
            // The host's status of a copy (phase, conditions, addresses) and the host scheduler's
            // binding of a Pod copy are back-sync's, not the planner's: a copy is made without a node.
            if (
              e.type === "update" &&
              e.previous &&
              (statusOnlyChange(e.previous, e.object) || boundNodeOnlyChange(e.previous, e.object) !== undefined)
            )
              return;
            this.deps.enqueue(text);
          },
        }),
      );
    }
    void this.firstPass();
  }

  /** True for a tenant update that changed only what back-sync writes: the status, or a binding to a virtual node. */
  private backSyncOnly(previous: RawObject, object: RawObject): boolean {
    if (statusOnlyChange(previous, object)) return true;
    const node = boundNodeOnlyChange(previous, object);
    return node !== undefined && !this.ownNodes().has(node);
  }

  /** The tenant's own (not virtual) Nodes, computed once per change of its Nodes. */
  private ownNodes(): ReadonlySet<string> {
    return (this.privateNodes ??= privateNodeNames(this.nodes?.list() ?? []));
  }

  /** One arriving version of a tenant object, kept whole or, beyond the tenant's limits, as a stub. */
  private admit(obj: RawObject): RawObject {
    withoutManagedFields(obj);
    // What Kubernetes keeps in every namespace (kube-root-ca.crt, ServiceAccount default) is never
    // synced and takes no room; token Secrets are the tenant's to make, as many and as big as it likes.
    if (obj.kind !== "Secret" && nativeObjectReason(obj as unknown as KubeObject) !== undefined) return obj;
    const before = this.budget.bytes;
    const excess = this.budget.judge(
      obj.kind ?? "",
      obj.metadata.namespace ?? "default",
      obj.metadata.name,
      sizeOf(obj),
    );
    // Shrunk, or held back now and its room freed: another held-back object may fit.
    if (this.budget.bytes < before) this.readmission.schedule();
    return excess === undefined ? obj : heldBackStub(obj);
  }

  /**
   * A large ConfigMap or Secret judged by its metadata before its payload is read: beyond the
   * tenant's limits it is held back as a stub, never decoded or parsed (a tenant writing a
   * gigabyte the worker will not sync costs it the metadata of each object, not the gigabyte);
   * undefined, and it is read whole and judged by {@link admit}, when it may fit.
   */
  private peekLarge(obj: RawObject, sizes: { objectBytes: number; metadataBytes: number }): RawObject | undefined {
    withoutManagedFields(obj);
    if (obj.kind !== "Secret" && nativeObjectReason(obj as unknown as KubeObject) !== undefined) return undefined;
    const kind = obj.kind ?? "";
    const namespace = obj.metadata.namespace ?? "default";
    const bytes = sizeFromWire(obj.metadata, sizes.objectBytes, sizes.metadataBytes);
    if (this.budget.fits(kind, namespace, obj.metadata.name, bytes - WIRE_SIZE_SLACK)) return undefined;
    const before = this.budget.bytes;
    this.budget.judge(kind, namespace, obj.metadata.name, bytes);
    if (this.budget.bytes < before) this.readmission.schedule();
    return heldBackStub(obj);
  }

  /** The Skip reason of a source held back beyond the limits, or undefined. */
  private heldBack(key: SourceKey): string | undefined {
    const excess = this.budget.excess(encodeKey(key));
    return excess && this.budget.reason(key.kind, key.namespace, key.name, excess);
  }

  // Services and Pods (addresses, readiness) feed the DNS zone and service links; host Pods and their token Secrets, the tokens.
  private onPodEnvironmentEvent(kind: string, name: string): void {
    if (kind === "Service" || kind === "ConfigMap" || kind === "Pod") this.podNetwork.schedule();
    const pod = kind === "Pod" ? name : kind === "Secret" ? podOfTokenSecret(name) : undefined;
    if (pod !== undefined) this.podTokens.pokePod(pod);
  }

  /** Stops at once: no write starts after this, informers close. */
  stop(): void {
    this.stopped = true;
    this.readmission.stop();
    this.podNetwork.stop();
    this.podTokens.stop();
    for (const w of [...this.tenantWatches.values(), ...this.hostWatches.values(), this.namespaces]) w?.stop();
    this.nodes?.stop();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Counts for status.sync and the Synced condition. */
  counts(): SyncCounts & {
    lastFullPass: Date | undefined;
    down: string | undefined;
    started: boolean;
    failures: FailedObject[];
    limited: string | undefined;
  } {
    let inSync = 0;
    let skipped = 0;
    let failed = 0;
    for (const outcome of this.outcomes.values()) {
      if (outcome === "inSync") inSync++;
      else if (outcome === "skipped") skipped++;
      else failed++;
    }
    return {
      inSync,
      skipped,
      failed,
      lastFullPass: this.lastPass,
      down: this.downSince === undefined ? undefined : this.downReason,
      started: this.started,
      failures: this.failures.list(),
      limited: this.budget.summary(),
    };
  }

  /**
   * The full pass: plans every source and copy from the caches and queues each key that
   * needs work, so fairness and one-key-at-a-time hold for the pass too. Deletes are
   * planned only for kinds whose listings are current on both sides. Runs in the
   * background, one at a time (a pass asked for meanwhile follows it).
   */
  fullPass(): void {
    if (this.stopped || !this.started) return;
    if (this.passing) {
      this.passAgain = true;
      return;
    }
    this.passing = true;
    void this.runPass()
      .catch((err: unknown) => this.deps.logger.error({ err: describe(err) }, "full pass failed"))
      .finally(() => {
        this.passing = false;
        if (this.passAgain) {
          this.passAgain = false;
          this.fullPass();
        }
      });
  }

  /**
   * The pass plans the caches as they hold when it begins (they replace objects, never change
   * them) in slices with the event loop served between them: each object read, checked and
   * translated (a large one hashed in slices too), each copy judged. A tenant with gigabytes or
   * tens of thousands of objects thus never holds the loop for long, and the lease renewals
   * and other tenants go on meanwhile. A change during the pass is queued by its own event, and
   * every key the pass queues is planned again from the caches when it is processed.
   */
  private async runPass(): Promise<void> {
    const slicer = new TimeSlicer();
    const sources = [...this.tenantWatches.values()].flatMap((w) => w.list());
    const steps = planPassSteps({
      ...this.context(),
      sources,
      hosts: [...this.hostWatches.values()].flatMap((w) => w.list()),
      deletedNamespaces: this.deletedNamespaces(),
    });
    let step = steps.next();
    for (; step.done !== true; step = steps.next()) {
      await slicer.yieldIfDue();
      if (this.stopped) return;
    }
    const result = step.value;
    // In sync as of the pass's start: a source changed since has its own outcome coming.
    const planned = new Set<object>(sources);
    for (const t of result.inSync) {
      const now = this.tenantWatches.get(t.kind)?.get(t.tenantRef.namespace, t.tenantRef.name);
      if (now !== undefined && planned.has(now)) this.outcomes.set(encodeKey(targetKey(t)), "inSync");
    }
    for (const d of result.decisions) this.deps.enqueue(encodeKey(targetKey(d)));
    this.lastPass = new Date();
    this.deps.onStatus();
  }

  /** Plans and applies one source key; errors are counted and logged, never thrown. */
  async process(text: string, since: number): Promise<void> {
    if (this.stopped) return;
    const key = decodeKey(text);
    // Until the caches have listed, an absent source proves nothing; the first pass queues everything.
    if (!this.started) return;
    try {
      await this.converge(key, since);
      this.attempts.delete(text);
      if (this.failures.forget(text)?.published) this.deps.onFailureChange?.(text);
    } catch (err) {
      const failure = err instanceof WriteFailure ? err : undefined;
      const e = normalizeError(failure?.cause ?? err);
      this.noteFailure(key, failure, e);
      this.outcomes.set(text, "failed");
      this.deps.observe.outcome("failed");
      const attempt = this.attempts.get(text) ?? 0;
      this.attempts.set(text, attempt + 1);
      // Conflicts, throttling and outages heal: look again soon. A refused object waits for
      // its next change or the next full pass.
      const retryMs = e.transient ? (e.retryAfterMs ?? backoffDelay(attempt, 500, 60_000)) : undefined;
      this.deps.logger.warn({ key: text, err: e.message, code: e.code, retryMs }, "sync of one object failed");
      if (retryMs !== undefined) {
        setTimeout(() => {
          if (!this.stopped) this.deps.enqueue(text);
        }, retryMs).unref();
      }
      this.deps.onStatus();
    }
  }

  private async converge(key: SourceKey, since: number, found?: RawObject, retried = false): Promise<void> {
    const text = encodeKey(key);
    const planning = performance.now();
    const slicer = new TimeSlicer();
    // A changed large object is translated and hashed in slices first; the plan then takes it from the memo.
    const source = this.tenantWatches.get(key.kind)?.get(key.namespace, key.name);
    if (source !== undefined && this.heldBack(key) === undefined) {
      await prepareSliced(this.context(), source, slicer, () => this.stopped);
      if (this.stopped) return;
    }
    const plan = this.planOf(key, found);
    const planSeconds = (performance.now() - planning) / 1000;
    const writes = plan.decisions.some((d) => d.action === "Create" || d.action === "Update");
    if (writes) {
      this.deps.observe.stage?.("plan", planSeconds);
      // Planning that used its slice hands the loop back before the write's own work (its body's JSON).
      await slicer.yieldIfDue();
      if (this.stopped) return;
    }
    if (plan.decisions.length === 0) {
      if (plan.inSync.length > 0) {
        this.outcomes.set(text, "inSync");
        this.deps.observe.outcome("in_sync");
      } else this.outcomes.delete(text);
      this.skips.forget(text);
      this.deps.onStatus();
      return;
    }
    let outcome: Outcome | undefined;
    for (const decision of plan.decisions) {
      const result = await this.apply(key, decision, since, !retried);
      if (result === "retry-with-found") return;
      if (result !== undefined) outcome = outcome === "skipped" ? outcome : result;
    }
    if (outcome === undefined) this.outcomes.delete(text);
    else this.outcomes.set(text, outcome);
    if (outcome !== "skipped") this.skips.forget(text);
    this.deps.onStatus();
  }

  private planOf(key: SourceKey, found?: RawObject): KeyPlan {
    const source = this.tenantWatches.get(key.kind)?.get(key.namespace, key.name);
    const target = hostName({ tenant: this.deps.tenant, namespace: key.namespace, name: key.name }).name;
    const hostNs = hostNamespaceFor(this.deps.tenant);
    const hosts: RawObject[] = [];
    for (const w of this.hostWatches.values()) {
      const atTarget = w.get(hostNs, target);
      if (atTarget !== undefined) hosts.push(atTarget);
    }
    for (const ref of this.copies.get(encodeKey(key)) ?? []) {
      const slash = ref.indexOf("/");
      const copy = this.hostWatches.get(ref.slice(0, slash))?.get(hostNs, ref.slice(slash + 1));
      if (copy !== undefined && copy.metadata.name !== target) hosts.push(copy);
    }
    if (found !== undefined && !hosts.some((h) => h.kind === found.kind && h.metadata.name === found.metadata.name)) {
      hosts.push(found);
    }
    const input = { ...this.context(), key, source, namespaceDeleted: this.namespaceGone(key.namespace), hosts };
    const plan = planKey(input);
    // Load balancers and node ports are counted across Services: against the host
    // namespace's Services as the cache holds them, this key claiming what is left.
    const growsServices = plan.decisions.some(
      (d) => d.kind === "Service" && (d.action === "Create" || d.action === "Update"),
    );
    if (!growsServices) return plan;
    const services = this.hostWatches.get("Service")?.list() ?? [];
    return applyServiceQuota(plan, this.deps.rules, this.deps.tenant, services);
  }

  private async apply(
    key: SourceKey,
    d: PlannedDecisionWithObject,
    since: number,
    firstTry: boolean,
  ): Promise<Outcome | undefined | "retry-with-found"> {
    const text = encodeKey(key);
    const { writer } = this;
    const hostWatch = this.hostWatches.get(d.kind);
    const current = hostWatch?.get(d.hostRef.namespace, d.hostRef.name);
    if (d.action === "Skip") {
      if (this.stopped || !this.deps.mayWrite()) return undefined;
      const source = this.tenantWatches.get(key.kind)?.get(key.namespace, key.name);
      // A Skip costs the tenant's write budget like a write (paced-skip.ts).
      const gate = { writeToken: () => this.deps.writeToken(), mayWrite: () => !this.stopped && this.deps.mayWrite() };
      // A Skip that says how the tenant runs (its own scheduler places the Pod) is news once per
      // object, under an id its uid fixes (a successor's repeat is a duplicate), without warnings.
      const version = d.once ? `uid:${source?.metadata.uid ?? ""}` : (source?.metadata.resourceVersion ?? "");
      if (d.once) {
        if (await admitSkip(this.skips, text, version, d.reason, gate)) {
          await this.publish({ ...d, id: decisionId(d, SERVICE, version) });
        }
        this.deps.observe.outcome("skip");
        return "skipped";
      }
      if (await admitSkip(this.skips, text, version, d.reason, gate)) {
        await this.publish(d);
        await this.deps.warn(
          "SyncSkipped",
          `${d.kind} ${d.tenantRef.namespace}/${d.tenantRef.name} not synced to ${d.hostRef.namespace}/${d.hostRef.name}: ${d.reason}`,
        );
        if (source !== undefined) {
          void this.deps.events.warn(
            tenantObject(source),
            REASON_SYNC_SKIPPED,
            syncSkippedMessage(d.kind, d.hostRef, d.reason),
          );
        }
      }
      this.deps.observe.outcome("skip");
      return "skipped";
    }
    if (d.action === "Delete") {
      if (!this.deleteAllowed(d.kind)) {
        this.deps.logger.info({ key: text }, "delete deferred: listings not complete and current");
        return undefined;
      }
      // Gone, or already on its way out (a Pod's grace period): nothing to write or announce again.
      if (current === undefined || current.metadata.deletionTimestamp !== undefined) return undefined;
      await this.deps.writeToken();
      if (this.stopped || !this.deps.mayWrite()) return undefined;
      // Announced first, under an id the host object's uid fixes: a worker killed between
      // the two leaves a Delete that its successor plans again and announces under the same
      // id (dropped as a duplicate), so no delete is ever made without its Decision stored.
      await this.announceDelete(d, current.metadata.uid);
      if (this.stopped || !this.deps.mayWrite()) return undefined;
      const grace = gracePeriodOf(this.tenantWatches.get(key.kind)?.get(key.namespace, key.name));
      if (await attempt(d, "Delete", () => writer.delete(current, grace))) {
        this.deps.observe.latency((Date.now() - since) / 1000);
        this.deps.observe.outcome("delete");
      }
      return undefined;
    }
    // A write that succeeds after a published Fail says so: the Fail's Warnings stay behind it.
    const refused = this.failures.get(text);
    if (refused?.published && refused.kind === d.kind && refused.hostRef.name === d.hostRef.name) {
      d = { ...d, reason: `${d.reason} (the host had refused it: ${refused.error.reason})` };
    }
    // The write carries its own Decision, so a crash before the publish loses nothing (decision-record.ts).
    const record = newRecord(d);
    const desired = withRecord(d.object as HostObject, record);
    const waiting = performance.now();
    await this.deps.writeToken();
    // Paced by bytes too: megabyte copies of one tenant must not fill the host's write path.
    await this.deps.writeBytes?.(this.budget.bytesOf(key) ?? MIN_WRITE_BYTES);
    this.deps.observe.stage?.("tenant_budget", (performance.now() - waiting) / 1000);
    if (this.stopped || !this.deps.mayWrite()) return undefined;
    let written;
    // What is read of a copy's answer (its uid, version, labels and annotations) is its metadata:
    // a megabyte ConfigMap or Secret is not sent back whole.
    const answer = isPayloadKind(d.kind) ? "metadata" : "whole";
    if (d.action === "Create") {
      const created = await attempt(d, "Create", () => writer.create(desired, answer));
      if (created === "exists") {
        // The label-selected host cache cannot see a foreign object: read what holds the name and plan again.
        if (!firstTry) throw new Error(`host ${d.kind} ${d.hostRef.name} exists but cannot be read back`);
        const found = await writer.get(d.kind, d.hostRef.namespace, d.hostRef.name, answer);
        await this.converge(key, since, found, true);
        return "retry-with-found";
      }
      written = created;
    } else {
      const base = current ?? (await writer.get(d.kind, d.hostRef.namespace, d.hostRef.name, answer));
      if (base === undefined) throw new Error(`host ${d.kind} ${d.hostRef.name} vanished before update`);
      written = await attempt(d, "Update", () => writer.update(desired, base, answer));
    }
    if (faults.killAfterHostWrite) process.kill(process.pid, "SIGKILL");
    this.deps.observe.latency((Date.now() - since) / 1000);
    this.deps.observe.outcome(d.action === "Create" ? "create" : "update");
    this.publishAfterWrite({ ...d, id: record.id, time: record.time }, written.metadata?.uid);
    return "inSync";
  }

  /**
   * Remembers why `key` failed, and the first time a host refusal (or a transient failure that
   * persisted) is seen for it, explains it: a Fail Decision with the host's answer and a
   * Warning on the tenant object. Never throws.
   */
  private noteFailure(key: SourceKey, failure: WriteFailure | undefined, e: TenantplaneError): void {
    const text = encodeKey(key);
    const d = failure?.decision;
    const error = hostAnswerOf(failure?.cause ?? e, failure?.attempted);
    const tenantRef = d?.tenantRef ?? { namespace: key.namespace, name: key.name };
    const hostRef = d?.hostRef ?? {
      namespace: hostNamespaceFor(this.deps.tenant),
      name: hostName({ tenant: this.deps.tenant, namespace: key.namespace, name: key.name }).name,
    };
    const kind = d?.kind ?? key.kind;
    const attempt = { kind, tenantRef, hostRef, error, transient: e.transient, hostWrite: failure !== undefined };
    if (!this.failures.note(text, attempt, Date.now()) || this.stopped || !this.deps.mayWrite()) return;
    const run = this.failures.get(text);
    const planned: PlannedDecision = {
      tenant: this.deps.tenant,
      action: "Fail",
      kind,
      tenantRef,
      hostRef,
      reason: `${error.reason}: ${error.message}${e.transient ? " (still retrying)" : ""}`,
      error,
    };
    // One id per Fail of a run: the same answer again after another (A, B, A) or in a later run
    // is news, not a duplicate for the stream or the recorder to drop. Published beside the
    // retries, in order with the object's other Decisions, like a write's.
    this.publishAfterWrite({ ...planned, id: decisionId(planned, SERVICE, `fail:${run?.since}:${run?.sequence}`) });
    this.deps.onFailureChange?.(text);
    const source = this.tenantWatches.get(key.kind)?.get(key.namespace, key.name);
    if (source !== undefined) {
      void this.deps.events.warn(tenantObject(source), REASON_SYNC_FAILED, syncFailedMessage(kind, hostRef, error));
    }
  }

  /** The failure standing for a source key (encoded) once its Fail was published, for back-sync. */
  publishedFailure(key: string): FailedObject | undefined {
    const failure = this.failures.get(key);
    return failure?.published ? failure : undefined;
  }

  // `hostUid`: the written object's, so the recorder can put an Event on it as well.
  private async publish(d: PlannedDecision, hostUid?: string): Promise<void> {
    await this.deps.publish({
      ...(d.id === undefined ? {} : { id: d.id, time: d.time }),
      tenant: d.tenant,
      action: d.action,
      kind: d.kind,
      tenantRef: d.tenantRef,
      hostRef: hostUid ? { ...d.hostRef, uid: hostUid } : d.hostRef,
      reason: d.reason,
      ...(d.error === undefined ? {} : { error: d.error }),
    });
  }

  /**
   * Publishes a Delete's Decision before the delete; while NATS does not store it within
   * DELETE_ANNOUNCE_TIMEOUT_MS the delete waits (a transient failure: the key is retried
   * with backoff), so an outage holds up deletes without holding a worker slot.
   */
  private async announceDelete(d: PlannedDecision, hostUid: string | undefined): Promise<void> {
    const uid = hostUid ?? "";
    const announced = { ...d, id: deleteId(d, SERVICE, uid), time: new Date().toISOString() };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new TransientError(
              `the Decision for deleting ${d.kind} ${d.hostRef.name} was not stored yet; delete deferred`,
            ),
          ),
        DELETE_ANNOUNCE_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([this.publish(announced, uid || undefined), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Publishes again the Decisions recorded on host copies in the last moments, in case the
   * worker that wrote them stopped before publishing (killed, or lost its lease): the same id
   * within the stream's duplicate window is stored once, so those that were out already are
   * dropped.
   */
  private republishRecent(): void {
    const now = Date.now();
    for (const w of this.hostWatches.values()) {
      for (const host of w.list()) {
        const record = recordOf(host);
        const source = sourceOfCopy(host, this.deps.tenant);
        if (record === undefined || source === undefined || !republishable(record, now, decisionRecords.windowMs))
          continue;
        this.publishAfterWrite(
          {
            ...record,
            tenant: this.deps.tenant,
            kind: host.kind ?? source.kind,
            tenantRef: { namespace: source.namespace, name: source.name },
            hostRef: { namespace: host.metadata.namespace ?? "", name: host.metadata.name },
          },
          host.metadata.uid,
        );
      }
    }
  }

  /**
   * Publishes the Decision for a write that already happened without holding the worker
   * slot: in order per host object, retried by the service's publisher, awaited by
   * {@link drain} at shutdown.
   */
  private publishAfterWrite(d: PlannedDecision, hostUid?: string): void {
    const key = `${d.kind}/${d.hostRef.name}`;
    const next = (this.publishing.get(key) ?? Promise.resolve())
      .then(() => this.publish(d, hostUid))
      .catch((err: unknown) =>
        this.deps.logger.error(
          { err: describe(err), kind: d.kind, host: d.hostRef.name, action: d.action },
          "decision not published",
        ),
      );
    this.publishing.set(key, next);
    void next.then(() => {
      if (this.publishing.get(key) === next) this.publishing.delete(key);
    });
  }

  /** Resolves once every Decision of a completed write is published (or given up). */
  async drain(): Promise<void> {
    while (this.publishing.size > 0) await Promise.all(this.publishing.values());
  }

  /**
   * The plan context now: a kind is complete while its host listing is current and, for a
   * policy kind, its tenant listing and the tenant's namespaces are current too.
   */
  private context(): TenantPlanContext {
    const completeKinds = SYNC_KINDS.filter((kind) => this.deleteAllowed(kind));
    return {
      tenant: this.deps.tenant,
      policy: this.deps.policy,
      rules: this.deps.rules,
      hashKey: this.deps.hashKey,
      completeKinds,
      memo: this.memo,
      podEnvironment: this.podEnvironment(),
      heldBack: (key) => this.heldBack(key),
      privateNodes: this.ownNodes(),
    };
  }

  private deleteAllowed(kind: string): boolean {
    const host = this.hostWatches.get(kind)?.current() ?? false;
    if (!this.kinds.has(kind)) return host;
    return host && (this.tenantWatches.get(kind)?.current() ?? false) && this.namespaces.current();
  }

  private async firstPass(): Promise<void> {
    await Promise.all(
      [...this.tenantWatches.values(), ...this.hostWatches.values(), this.namespaces, this.nodes].map((w) => w?.synced),
    );
    if (this.stopped) return;
    this.privateNodes = undefined;
    this.started = true;
    this.deps.logger.info("tenant caches listed; first full pass");
    this.republishRecent();
    this.fullPass();
    this.podNetwork.schedule();
    this.podTokens.start();
    this.podTokens.poke();
  }

  /** The tenant namespace is deleted or terminating (known only once the namespaces have listed). */
  private namespaceGone(namespace: string): boolean {
    if (!this.started) return false;
    const ns = this.namespaces.get(undefined, namespace);
    return ns === undefined || ns.metadata.deletionTimestamp !== undefined;
  }

  private deletedNamespaces(): Set<string> {
    const deleted = new Set<string>();
    if (!this.started) return deleted;
    const live = new Map(this.namespaces.list().map((n) => [n.metadata.name, n]));
    for (const w of this.tenantWatches.values()) {
      for (const obj of w.list()) {
        const ns = obj.metadata.namespace ?? "default";
        const n = live.get(ns);
        if (n === undefined || n.metadata.deletionTimestamp) deleted.add(ns);
      }
    }
    for (const w of this.hostWatches.values()) {
      for (const h of w.list()) {
        const src = sourceOfCopy(h, this.deps.tenant);
        if (src === undefined) continue;
        const n = live.get(src.namespace);
        if (n === undefined || n.metadata.deletionTimestamp) deleted.add(src.namespace);
      }
    }
    return deleted;
  }

  private enqueueNamespace(namespace: string): void {
    for (const w of this.tenantWatches.values()) {
      for (const obj of w.list())
        if ((obj.metadata.namespace ?? "default") === namespace) this.deps.enqueue(encodeKey(keyOf(obj)));
    }
    for (const w of this.hostWatches.values()) {
      for (const h of w.list()) {
        const src = sourceOfCopy(h, this.deps.tenant);
        if (src?.namespace === namespace) this.deps.enqueue(encodeKey(src));
      }
    }
  }

  private tenantReachability(current: boolean, err?: unknown): void {
    if (this.stopped) return;
    const all = [...this.tenantWatches.values(), this.namespaces].every((w) => w?.current() ?? false);
    if (!current && this.downSince === undefined) {
      this.downSince = Date.now();
      this.downReason = err === undefined ? "tenant API watch closed" : describe(err);
      this.deps.logger.warn({ reason: this.downReason }, "tenant API unreachable; host copies kept");
      void this.deps
        .warn(
          "TenantAPIUnavailable",
          `cannot list the tenant API (${this.downReason}); host copies are kept and nothing is deleted until it answers`,
        )
        .catch(() => undefined);
      this.deps.onStatus();
    } else if (current && all && this.downSince !== undefined) {
      this.downSince = undefined;
      this.deps.logger.info("tenant API reachable again");
      this.deps.onStatus();
      if (this.started) this.fullPass();
    }
  }
}

/** The grace period a tenant Pod is being deleted with: its host copy gets the same. */
function gracePeriodOf(source: RawObject | undefined): number | undefined {
  const seconds = source?.metadata["deletionGracePeriodSeconds"];
  return source?.kind === "Pod" && typeof seconds === "number" ? seconds : undefined;
}

/** Runs one host write of `d`; what it throws becomes a {@link WriteFailure} naming the write. */
async function attempt<T>(d: PlannedDecision, write: AttemptedWrite, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new WriteFailure(d, write, err);
  }
}

function tenantObject(source: RawObject) {
  return {
    kind: source.kind ?? "",
    namespace: source.metadata.namespace ?? "default",
    name: source.metadata.name,
    uid: source.metadata.uid,
  };
}

function keyOf(obj: RawObject): SourceKey {
  return { kind: obj.kind ?? "", namespace: obj.metadata.namespace ?? "default", name: obj.metadata.name };
}

function targetKey(t: { kind: string; tenantRef: { namespace: string; name: string } }): SourceKey {
  return { kind: t.kind, namespace: t.tenantRef.namespace, name: t.tenantRef.name };
}
