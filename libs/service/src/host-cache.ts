import { CONDITION_SYNCED, GROUP, PLURAL_ISOLATION_PROFILES, PLURAL_TENANT_CLUSTERS, VERSION } from "@tenantplane/api";
import type { CacheEvent, CachedKind, RawObject } from "@tenantplane/kube";
import {
  LABEL_CONTROL_PLANE,
  LABEL_MANAGED_BY,
  LABEL_TOKEN_FOR_POD,
  LABEL_TENANT,
  LABEL_VIRTUAL_NAMESPACE,
  MANAGED_BY,
} from "@tenantplane/mapping";

/** The kinds of host objects a service may keep in its cache (see startService's `cache`). */
export type HostKind =
  | "TenantCluster"
  | "IsolationProfile"
  | "Namespace"
  | "Secret"
  | "Service"
  | "StatefulSet"
  | "ConfigMap"
  | "Deployment"
  | "NetworkPolicy"
  | "ResourceQuota"
  | "LimitRange"
  | "RoleBinding"
  | "ControlPlanePod"
  | "Node";

// Host objects tenantplane made for a tenant itself, not the copies the sync worker makes of
// tenant objects (those carry the virtual namespace): memory grows with tenants, not with
// what runs inside them.
const OWN_OBJECTS = `${LABEL_MANAGED_BY}=${MANAGED_BY},!${LABEL_VIRTUAL_NAMESPACE}`;
const CRD_VERSION = `${GROUP}/${VERSION}`;

/** A namespaced kind of which the cache holds only tenantplane's own objects (OWN_OBJECTS). */
function ownObjects(apiVersion: string, kind: HostKind, resource: string): CachedKind {
  return { apiVersion, kind, resource: { resource, namespaced: true }, labelSelector: OWN_OBJECTS };
}

const HOST_KINDS: Record<HostKind, CachedKind> = {
  TenantCluster: {
    apiVersion: CRD_VERSION,
    kind: "TenantCluster",
    resource: { resource: PLURAL_TENANT_CLUSTERS, namespaced: false },
  },
  IsolationProfile: {
    apiVersion: CRD_VERSION,
    kind: "IsolationProfile",
    resource: { resource: PLURAL_ISOLATION_PROFILES, namespaced: false },
  },
  Namespace: {
    apiVersion: "v1",
    kind: "Namespace",
    resource: { resource: "namespaces", namespaced: false },
    labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
  },
  // Not the token Secrets the sync worker keeps for host Pod copies: one per Pod, each refreshed
  // hourly, and nothing a pass reads (each would wake a provisioner pass for its tenant).
  Secret: { ...ownObjects("v1", "Secret", "secrets"), labelSelector: `${OWN_OBJECTS},!${LABEL_TOKEN_FOR_POD}` },
  Service: ownObjects("v1", "Service", "services"),
  StatefulSet: ownObjects("apps/v1", "StatefulSet", "statefulsets"),
  ConfigMap: ownObjects("v1", "ConfigMap", "configmaps"),
  Deployment: ownObjects("apps/v1", "Deployment", "deployments"),
  NetworkPolicy: ownObjects("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies"),
  ResourceQuota: ownObjects("v1", "ResourceQuota", "resourcequotas"),
  LimitRange: ownObjects("v1", "LimitRange", "limitranges"),
  RoleBinding: ownObjects("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
  // Only the k3s pods: the tenant's own pods in the namespace (any number) stay out. The label
  // is reserved, stripped from every tenant object, so no synced pod carries it.
  ControlPlanePod: {
    apiVersion: "v1",
    kind: "Pod",
    resource: { resource: "pods", namespaced: true },
    labelSelector: `${OWN_OBJECTS},${LABEL_CONTROL_PLANE}=true`,
  },
  // Every host node: the isolation service reserves nodes for Dedicated tenants by their labels.
  Node: { apiVersion: "v1", kind: "Node", resource: { resource: "nodes", namespaced: false } },
};

/** How the cache holds each of `kinds`: tenantplane's own objects only, every TenantCluster and IsolationProfile. */
export function hostKinds(kinds: readonly HostKind[]): CachedKind[] {
  return kinds.map((kind) => HOST_KINDS[kind]);
}

/**
 * `kinds` with each namespaced kind the service may not list and watch everywhere (as
 * `mayWatchEverywhere` answers; a failure to answer counts as no) cached per namespace instead:
 * rights granted inside each tenant namespace by a RoleBinding, never cluster-wide.
 */
export async function scopeByAccess(
  kinds: readonly CachedKind[],
  mayWatchEverywhere: (kind: CachedKind) => Promise<boolean>,
): Promise<CachedKind[]> {
  return Promise.all(
    kinds.map(async (kind) => {
      if (!kind.resource.namespaced) return kind;
      const everywhere = await mayWatchEverywhere(kind).catch(() => false);
      return everywhere ? kind : { ...kind, perNamespace: true };
    }),
  );
}

/**
 * The tenant whose next pass a cache event calls for, if any: a change someone else made (a
 * controller's status, a person's edit, a deletion) to an object of one of `kinds`, named by
 * its tenant label (a TenantCluster by its name). The answers to the service's own writes
 * wake nothing, so a pass never wakes itself.
 */
export function tenantToWake(event: CacheEvent, kinds: readonly HostKind[]): string | undefined {
  if (event.ours) return undefined;
  const kind = hostKindOf(event.object);
  if (kind === undefined || !kinds.includes(kind)) return undefined;
  if (kind === "TenantCluster") return onlySyncProgress(event) ? undefined : event.object.metadata.name;
  if (STATUS_UNREAD.has(kind) && onlyStatus(event)) return undefined;
  const read = STATUS_READ[kind];
  if (read && onlyStatus(event) && read.every((field) => sameStatusField(event, field))) return undefined;
  return event.object.metadata.labels?.[LABEL_TENANT];
}

// Kinds whose status no pass reads.
const STATUS_UNREAD: ReadonlySet<HostKind> = new Set(["LimitRange", "NetworkPolicy"]);

// Kinds whose status passes read only in part: an update of the status alone that leaves these
// fields as they were wakes nothing. A StatefulSet's status changes several times while its pod
// starts (replicas, current and updated counts, revisions); a pass reads only the ready count.
// A quota's usage changes with every Pod or Service created in the namespace, and each change
// would cost a pass; its counted limits (the quota controller's first count) are what the
// isolation pass waits for.
const STATUS_READ: Partial<Record<HostKind, readonly string[]>> = {
  StatefulSet: ["readyReplicas"],
  ResourceQuota: ["hard"],
};

function sameStatusField(event: CacheEvent, field: string): boolean {
  const of = (obj: RawObject | undefined) => (obj?.["status"] as Record<string, unknown> | undefined)?.[field];
  return JSON.stringify(of(event.previous)) === JSON.stringify(of(event.object));
}

/** True for an update that changed only the status (and with it the version and managed fields). */
function onlyStatus(event: CacheEvent): boolean {
  return unchangedUpdate(event, ({ status: _status, ...body }: RawObject & { status?: unknown }) => body);
}

/**
 * True for an update after which `view` of the object is what it was before; the server's
 * bookkeeping (resourceVersion, managedFields) is left out of both sides.
 */
function unchangedUpdate(event: CacheEvent, view: (obj: RawObject) => unknown): boolean {
  if (event.type !== "update" || event.previous === undefined) return false;
  const text = (obj: RawObject) => {
    const { resourceVersion: _version, managedFields: _fields, ...metadata } = obj.metadata;
    return JSON.stringify(view({ ...obj, metadata }));
  };
  return text(event.previous) === text(event.object);
}

// The cache files objects by their API kind; a cached Pod is a control-plane pod.
function hostKindOf(obj: RawObject): HostKind | undefined {
  return obj.kind === "Pod" ? "ControlPlanePod" : (obj.kind as HostKind | undefined);
}

/**
 * True for a TenantCluster update that changed nothing but the sync workers' progress: the
 * counts in status.sync and the Synced condition's message, rewritten every few seconds
 * while a tenant syncs. No other service's pass depends on them (a Synced status or reason
 * that changes still wakes), so they would only cost every service a pass each time.
 */
export function onlySyncProgress(event: CacheEvent): boolean {
  return unchangedUpdate(event, withoutSyncProgress);
}

function withoutSyncProgress(tc: RawObject): unknown {
  const {
    sync: _sync,
    conditions,
    ...status
  } = (tc["status"] ?? {}) as {
    sync?: unknown;
    conditions?: Array<Record<string, unknown>>;
  };
  const kept = (conditions ?? []).map((c) =>
    c["type"] === CONDITION_SYNCED ? { type: c["type"], status: c["status"], reason: c["reason"] } : c,
  );
  return { ...tc, status: { ...status, conditions: kept } };
}
