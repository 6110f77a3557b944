import {
  API_VERSION,
  canonicalJson,
  IsolationSpecSchema,
  IsolationStatusSchema,
  KIND_TENANT_CLUSTER,
  PLURAL_TENANT_CLUSTERS,
} from "@tenantplane/api";
import { resourcePath, type JsonClient, type ListWatch, type RawObject } from "@tenantplane/kube";
import {
  hostName,
  hostNamespaceFor,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  labelValue,
  MANAGED_BY,
} from "@tenantplane/mapping";
import { decisionId, type PlannedDecision } from "@tenantplane/messaging";
import { describe, httpStatusOf, type Logger } from "@tenantplane/runtime";
import { placementOf } from "@tenantplane/sync";
import {
  planMigration,
  type MigrationNote,
  type MigrationObject,
  type MigrationPod,
  type MigrationState,
} from "./migration-plan.js";
import { openTenantNodes, privateNodeNames } from "./tenant-nodes.js";
import type { SharedWatches } from "./shared-watches.js";
import { hostAnswerOf } from "./write-failure.js";

/** The field manager of status.isolation.mode and .migration: apart from the Synced writer's, so neither removes the other's fields. */
export const MIGRATION_FIELD_MANAGER = "tenantplane-migration";
/** The service name migration Decisions carry. */
const SERVICE = "sync-worker";
/** Longest pause between passes while a tenant's Pods do not change (evictions a budget refused are retried then). */
const PASS_INTERVAL_MS = 3_000;
/** A burst of Pod events is one pass. */
const DEBOUNCE_MS = 200;

/** What a tenant's migration driver is given. */
export interface MigrationDriverDeps {
  tenant: string;
  /** The tenant API (the admin kubeconfig): Pods are evicted through its eviction subresource. */
  tenantClient: JsonClient;
  /** The host API: status.isolation is written there. */
  hostClient: JsonClient;
  /** The tenant's watches, shared with its syncer (which must have opened its own first). */
  watches: SharedWatches;
  /** The TenantCluster as the host cache holds it now. */
  tenantCluster(): RawObject | undefined;
  publish(decision: PlannedDecision): Promise<void>;
  /** False once this worker's lease on the tenant's partition is lost: nothing is evicted or written. */
  mayWrite(): boolean;
  logger: Logger;
}

/**
 * Drives a tenant's isolation migration (see {@link planMigration}): on every change of its
 * Pods or host copies, and every few seconds, plans from the caches and the TenantCluster,
 * publishes each new step as a Decision, evicts the Pods of the controller being moved through
 * the tenant API (a PodDisruptionBudget's 429 is retried on a later pass, never forced), and
 * writes status.isolation when it changed. Runs in the worker holding the tenant's partition
 * lease, so there is one driver per tenant; it keeps nothing a successor would need.
 */
export class MigrationDriver {
  private tenantPods: ListWatch | undefined;
  private hostPods: ListWatch | undefined;
  /** The tenant's Nodes: its own (joined to its API) are where Private runs its Pods. */
  private tenantNodes: ListWatch | undefined;
  /** Host copies of the tenant's claims: storage that cannot follow a Pod to its own nodes. */
  private hostClaims: ListWatch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** What this driver last wrote to status.isolation (the cache may not show it yet). */
  private written: MigrationState | undefined;
  /** The spec and status of the last pass that found nothing to do (see {@link pass}). */
  private settled: string | undefined;
  /** Decision ids published by this driver. */
  private readonly published = new Set<string>();

  constructor(private readonly deps: MigrationDriverDeps) {}

  /** Opens the Pod watches (shared with the syncer) and starts the passes. */
  start(): void {
    const { tenant, logger } = this.deps;
    const hostNs = hostNamespaceFor(tenant);
    this.tenantPods = this.deps.watches.open({
      client: this.deps.tenantClient,
      path: resourcePath("v1", "pods"),
      apiVersion: "v1",
      kind: "Pod",
      logger: logger.child({ side: "tenant", kind: "Pod" }),
      onEvent: () => this.poke(),
    });
    this.hostPods = this.deps.watches.open({
      client: this.deps.hostClient,
      path: resourcePath("v1", "pods", hostNs),
      apiVersion: "v1",
      kind: "Pod",
      labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${labelValue(tenant)}`,
      logger: logger.child({ side: "host", kind: "Pod" }),
      onEvent: () => this.poke(),
    });
    this.tenantNodes = openTenantNodes(this.deps.watches, this.deps.tenantClient, logger, () => this.poke());
    this.hostClaims = this.deps.watches.open({
      client: this.deps.hostClient,
      path: resourcePath("v1", "persistentvolumeclaims", hostNs),
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${labelValue(tenant)}`,
      logger: logger.child({ side: "host", kind: "PersistentVolumeClaim" }),
      onEvent: () => this.poke(),
    });
    this.timer = setInterval(() => this.poke(), PASS_INTERVAL_MS);
    this.timer.unref();
    this.poke();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.debounce);
    this.tenantPods?.stop();
    this.hostPods?.stop();
    this.tenantNodes?.stop();
    this.hostClaims?.stop();
  }

  /** Asks for a pass soon (the TenantCluster changed, Pods changed). */
  poke(): void {
    if (this.stopped || this.debounce !== undefined) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.run();
    }, DEBOUNCE_MS);
    this.debounce.unref();
  }

  private run(): void {
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err: unknown) =>
        this.deps.logger.warn({ err: describe(err) }, "isolation migration pass failed; retried on the next one"),
      )
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.poke();
        }
      });
  }

  private async pass(): Promise<void> {
    const tenantPods = this.tenantPods;
    const hostPods = this.hostPods;
    const nodes = this.tenantNodes;
    const claims = this.hostClaims;
    if (this.stopped || !this.deps.mayWrite()) return;
    if (tenantPods === undefined || hostPods === undefined || nodes === undefined || claims === undefined) return;
    // An absent Pod (a node, a claim) proves nothing until every listing is complete and current.
    if (!tenantPods.current() || !hostPods.current() || !nodes.current() || !claims.current()) return;
    const tc = this.deps.tenantCluster();
    if (tc === undefined || tc.metadata.deletionTimestamp) return;
    const spec = IsolationSpecSchema.safeParse((tc["spec"] as { isolation?: unknown } | undefined)?.isolation ?? {});
    // The CRD refuses a bad spec.isolation; the syncer's planTenant reports one that got past it.
    if (!spec.success) return;
    const shown = IsolationStatusSchema.safeParse(
      (tc["status"] as { isolation?: unknown } | undefined)?.isolation ?? {},
    );
    const status = this.written ?? (shown.success ? { mode: shown.data.mode, migration: shown.data.migration } : {});
    // Settled (the mode asked for is in effect, every copy was placed for it): new Pods get that
    // placement from the planner, so only a new spec or status can bring work. A change of the
    // placement restarts the syncer, and this driver with it.
    const settledKey = canonicalJson({ spec: spec.data, status });
    if (settledKey === this.settled) return;
    const step = planMigration({
      tenant: this.deps.tenant,
      now: new Date(),
      spec: {
        mode: spec.data.mode,
        placement: placementOf(spec.data),
        evictBarePods: spec.data.migration.evictBarePods,
      },
      status,
      tenantPods: tenantPods.list() as unknown as MigrationPod[],
      hostPods: hostPods.list() as unknown as MigrationPod[],
      privateNodes: privateNodeNames(nodes.list()),
      hostClaims: claims.list() as unknown as MigrationObject[],
    });
    const salt = `migration:${step.status?.migration?.startedAt ?? status.migration?.startedAt ?? ""}`;
    for (const note of step.notes) await this.announce(note, salt);
    for (const pod of step.evict) {
      if (this.stopped || !this.deps.mayWrite()) return;
      // The controller's Pods share its budget: once it refuses one, the rest wait for a later pass too.
      if ((await this.evict(pod)) === "refused") break;
    }
    if (step.waiting !== undefined) this.deps.logger.debug({ why: step.waiting }, "isolation migration waiting");
    if (step.status !== undefined && !sameState(step.status, status)) await this.writeStatus(step.status);
    const idle = step.status === undefined && step.evict.length === 0 && step.notes.length === 0;
    this.settled = idle && step.waiting === undefined ? settledKey : undefined;
  }

  /** Publishes a step once, under an id its migration and key fix, so a successor's repeat is dropped as a duplicate. */
  private async announce(note: MigrationNote, salt: string): Promise<void> {
    const { tenant } = this.deps;
    const hostRef =
      note.kind === "Pod"
        ? { namespace: hostNamespaceFor(tenant), name: hostName({ tenant, ...note.tenantRef }).name }
        : { namespace: "", name: tenant };
    const planned: PlannedDecision = {
      tenant,
      action: note.action,
      kind: note.kind,
      tenantRef: note.tenantRef,
      hostRef,
      reason: note.reason,
    };
    const id = decisionId({ ...planned, reason: note.key }, SERVICE, salt);
    if (this.published.has(id)) return;
    await this.deps.publish({ ...planned, id });
    this.published.add(id);
  }

  /**
   * A refused eviction other than a budget's (no right to evict, the tenant API failing) is a
   * Fail Decision on the Pod, once per answer, so the stalled migration says why in Events.
   */
  private async announceFailure(pod: { namespace: string; name: string }, err: unknown): Promise<void> {
    const { tenant } = this.deps;
    const error = { ...hostAnswerOf(err), attempted: "Delete" as const };
    const planned: PlannedDecision = {
      tenant,
      action: "Fail",
      kind: "Pod",
      tenantRef: { namespace: pod.namespace, name: pod.name },
      hostRef: { namespace: hostNamespaceFor(tenant), name: hostName({ tenant, ...pod }).name },
      reason: `isolation migration: the tenant API refused to evict Pod ${pod.namespace}/${pod.name} (retried): ${error.reason}: ${error.message}`,
      error,
    };
    const id = decisionId(planned, SERVICE, "migration-eviction");
    if (this.published.has(id)) return;
    await this.deps.publish({ ...planned, id });
    this.published.add(id);
  }

  /** Evicts one tenant Pod; "refused" when a PodDisruptionBudget allows no disruption now. */
  private async evict(pod: { namespace: string; name: string; uid: string | undefined }): Promise<"done" | "refused"> {
    const path = `${resourcePath("v1", "pods", pod.namespace, pod.name)}/eviction`;
    try {
      await this.deps.tenantClient.request("POST", path, {
        body: {
          apiVersion: "policy/v1",
          kind: "Eviction",
          metadata: { name: pod.name, namespace: pod.namespace },
          ...(pod.uid === undefined ? {} : { deleteOptions: { preconditions: { uid: pod.uid } } }),
        },
      });
      this.deps.logger.info({ pod: `${pod.namespace}/${pod.name}` }, "evicted for the isolation migration");
      return "done";
    } catch (err) {
      const code = httpStatusOf(err);
      // 429: a PodDisruptionBudget allows no disruption now; retried on a later pass, never forced.
      // 404/409: gone or replaced meanwhile.
      if (code === 429 || code === 404 || code === 409) {
        this.deps.logger.debug({ pod: `${pod.namespace}/${pod.name}`, code }, "eviction not done now");
        return code === 429 ? "refused" : "done";
      }
      this.deps.logger.warn({ pod: `${pod.namespace}/${pod.name}`, err: describe(err) }, "eviction failed; retried");
      await this.announceFailure(pod, err);
      return "done";
    }
  }

  private async writeStatus(state: MigrationState): Promise<void> {
    if (this.stopped || !this.deps.mayWrite()) return;
    const path = `/apis/${API_VERSION}/${PLURAL_TENANT_CLUSTERS}/${encodeURIComponent(this.deps.tenant)}/status`;
    const isolation = { mode: state.mode, ...(state.migration === undefined ? {} : { migration: state.migration }) };
    await this.deps.hostClient.request("PATCH", path, {
      query: { fieldManager: MIGRATION_FIELD_MANAGER, force: true },
      body: {
        apiVersion: API_VERSION,
        kind: KIND_TENANT_CLUSTER,
        metadata: { name: this.deps.tenant },
        status: { isolation },
      },
      contentType: "application/apply-patch+yaml",
    });
    this.written = state;
  }
}

function sameState(a: MigrationState, b: { mode?: string | undefined; migration?: unknown }): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
