import type { KubernetesObject } from "@kubernetes/client-node";
import {
  API_VERSION,
  CONDITION_CONTROL_PLANE_READY,
  KIND_TENANT_CLUSTER,
  type TenantClusterStatus,
} from "@tenantplane/api";
import { ISOLATION_KINDS, namespaceOwnership, objectOwnership } from "@tenantplane/isolation";
import type { EventRecorder, Objects } from "@tenantplane/kube";
import { LABEL_MANAGED_BY, LABEL_TENANT, MANAGED_BY, hostNamespaceFor } from "@tenantplane/mapping";
import type { PlannedDecision } from "@tenantplane/messaging";
import { TransientError, httpStatusOf, type Logger } from "@tenantplane/runtime";
import {
  applyTenantStatus,
  deleteTracked,
  publishPendingDeletes,
  tenantDecider,
  tenantRegarding,
} from "@tenantplane/service";
import { teardownFinishedEvent, teardownStartedEvent } from "./lifecycle-events.js";
import { RBAC_VERSION, type RoleBinding } from "./role-bindings.js";
import {
  findCondition,
  namespaceDeletionProgress,
  outcomeWithoutNamespace,
  teardownStatus,
  type NamespaceProgress,
  type TeardownObservation,
} from "./plan-status.js";

/** What the teardown needs from the outside world. */
export interface TeardownDeps {
  objects: Objects;
  events: EventRecorder;
  publish: (decision: PlannedDecision) => Promise<void>;
  logger: Logger;
}

type RawTenant = KubernetesObject & { status?: TenantClusterStatus };

const WAIT_MS = 3_000;

/**
 * Kinds looked through for objects tenantplane did not create before a host namespace is
 * deleted, and emptied of tenantplane's own objects when the namespace must be kept.
 */
export const SCANNED_KINDS: ReadonlyArray<{ apiVersion: string; kind: string }> = [
  { apiVersion: "apps/v1", kind: "StatefulSet" },
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "v1", kind: "Pod" },
  { apiVersion: "v1", kind: "Service" },
  { apiVersion: "v1", kind: "Secret" },
  { apiVersion: "v1", kind: "ConfigMap" },
  { apiVersion: "v1", kind: "PersistentVolumeClaim" },
];

// Objects the API server's own controllers put in every namespace; neither ours nor a user's.
const SYSTEM_OBJECTS = new Set(["ConfigMap/kube-root-ca.crt"]);

/**
 * Removes what tenantplane created for a tenant and then releases `finalizer`. A host namespace
 * that is ours (labels and this TenantCluster's uid) and holds nothing foreign is deleted whole;
 * one that holds foreign objects is kept with them, emptied of tenantplane's own objects, and a
 * Warning names what was kept; a namespace that is not ours is left exactly as it is, and so is
 * everything when the TenantCluster itself is gone (without its uid nothing proves ownership).
 *
 * The status stays truthful throughout: phase Terminating, the host namespace and endpoints
 * kept while the namespace exists, and a condition saying what the teardown waits for; they are
 * released once it is over. Normal Events mark its start and its end, the end recorded before
 * the finalizer is released so it lands on the TenantCluster that still exists.
 */
export async function teardown(
  tenant: string,
  raw: RawTenant | undefined,
  deps: TeardownDeps,
  finalizer: string,
): Promise<void> {
  const namespace = hostNamespaceFor(tenant);
  const uid = raw?.metadata?.uid;
  if (raw === undefined || uid === undefined) {
    // The TenantCluster is gone without its finalizer having run (force-removed), so nothing
    // proves which namespace was its own: an earlier tenant's leftovers look the same. Leave it.
    deps.logger.info(
      { tenant, namespace },
      "TenantCluster gone; its namespace, if any, is left for a person to remove",
    );
    return;
  }
  // A Delete recorded on the TenantCluster by a pass that died before publishing goes out first.
  await publishPendingDeletes(deps.objects, raw, tenantDecider(tenant, deps.publish));
  const pass: TeardownPass = { tenant, namespace, raw, uid, deps, started: raw.status?.phase === "Terminating" };
  const ns = await deps.objects.get<Namespace>("v1", "Namespace", namespace);
  const previous = findCondition(raw.status?.conditions, CONDITION_CONTROL_PLANE_READY);
  let outcome = outcomeWithoutNamespace(namespace, previous);
  if (ns) {
    const ownership = namespaceOwnership(ns, tenant, uid);
    if (ownership.owner === "ours") {
      outcome = await removeNamespace(pass, ns);
    } else {
      deps.logger.info({ tenant, namespace, why: ownership.why }, "host namespace is not ours; leaving it untouched");
      outcome = "not-ours";
    }
  }
  await announceStart(pass, outcome === "kept" ? "empty-namespace" : "nothing");
  await finish(pass, { state: "finished", namespace, outcome });
  await releaseFinalizer(pass, finalizer);
}

type Namespace = KubernetesObject & NamespaceProgress;
type FinishedOutcome = Extract<TeardownObservation, { state: "finished" }>["outcome"];

/** One teardown pass over one tenant whose TenantCluster still exists. */
interface TeardownPass {
  tenant: string;
  namespace: string;
  raw: RawTenant;
  uid: string;
  deps: TeardownDeps;
  /** Whether an earlier pass already wrote phase Terminating (and so announced the start). */
  started: boolean;
}

// Deletes the namespace whole, or empties it of tenantplane's objects when it holds foreign
// ones. Throws TransientError while the namespace is terminating, so the message comes back.
async function removeNamespace(pass: TeardownPass, ns: Namespace): Promise<FinishedOutcome> {
  const { tenant, namespace, deps } = pass;
  const waiting = () =>
    new TransientError(`waiting for host namespace ${namespace} to be deleted`, {
      code: "Terminating",
      retryAfterMs: WAIT_MS,
    });
  if (ns.metadata?.deletionTimestamp) {
    await announceStart(pass, "delete-namespace");
    await reportProgress(pass, { state: "deleting-namespace", namespace, progress: namespaceDeletionProgress(ns) });
    throw waiting();
  }

  const foreign = await foreignObjectsIn(namespace, tenant, deps.objects);
  if (foreign.length > 0) {
    await announceStart(pass, "empty-namespace");
    const removed = await deleteOursIn(namespace, tenant, deps);
    const message =
      `host namespace ${namespace} is kept because it holds objects tenantplane did not create ` +
      `(${foreign.slice(0, 10).join(", ")}${foreign.length > 10 ? ", …" : ""}); ` +
      `tenantplane's own ${removed} objects in it were deleted`;
    deps.logger.warn({ tenant, namespace }, message);
    await deps.events.record({
      regarding: tenantRegarding(tenant, pass.uid),
      type: "Warning",
      reason: "NamespaceKept",
      message,
    });
    return "kept";
  }

  await announceStart(pass, "delete-namespace");
  // Pinned to the namespace that was judged: if it was replaced or relabelled since, the
  // delete fails instead of removing something nobody checked.
  // The Delete Decision is recorded on the TenantCluster before the delete and published after
  // it, so a crash in between is caught up by the next pass.
  try {
    await deleteTracked(
      deps.objects,
      { apiVersion: "v1", kind: "Namespace", name: namespace },
      {
        decide: tenantDecider(tenant, deps.publish),
        reason: `TenantCluster ${tenant} is being deleted; the namespace takes every host object of the tenant with it`,
        anchor: pass.raw,
        ifResourceVersion: ns.metadata?.resourceVersion,
      },
    );
  } catch (err) {
    if (httpStatusOf(err) !== 409) throw err;
    throw new TransientError(`host namespace ${namespace} changed while being deleted; looking again`, {
      code: "Conflict",
      retryAfterMs: 500,
      cause: err,
    });
  }
  // The status says so at once, with what the namespace controller has to remove.
  const after = await deps.objects.get<Namespace>("v1", "Namespace", namespace);
  if (!after) return "deleted";
  await reportProgress(pass, { state: "deleting-namespace", namespace, progress: namespaceDeletionProgress(after) });
  throw waiting();
}

// Recorded once, by the first pass that sees the TenantCluster deleting (it then writes phase
// Terminating, which later passes read).
async function announceStart(
  pass: TeardownPass,
  plan: "delete-namespace" | "empty-namespace" | "nothing",
): Promise<void> {
  if (pass.started) return;
  pass.started = true;
  await pass.deps.events.record(teardownStartedEvent(pass.tenant, pass.uid, pass.namespace, plan));
}

async function reportProgress(pass: TeardownPass, observation: TeardownObservation): Promise<void> {
  const { condition, fields } = teardownStatus({
    tenant: pass.tenant,
    generation: pass.raw.metadata?.generation ?? 0,
    current: pass.raw.status,
    observation,
  });
  await applyTenantStatus(pass.deps.objects, pass.tenant, pass.raw.status?.conditions, condition, fields);
}

// The status lets go of the namespace and endpoints, and the Event is written while the
// TenantCluster exists, so `kubectl describe` and the events namespace both show the end.
async function finish(
  pass: TeardownPass,
  observation: Extract<TeardownObservation, { state: "finished" }>,
): Promise<void> {
  await reportProgress(pass, observation);
  const deleting = pass.raw.metadata?.deletionTimestamp;
  const startedAt = deleting === undefined ? undefined : new Date(deleting).toISOString();
  await pass.deps.events.record(teardownFinishedEvent(pass.tenant, pass.uid, observation, startedAt, new Date()));
}

/** `Kind/name` of every object in the scanned kinds of `namespace` that is not ours. */
async function foreignObjectsIn(namespace: string, tenant: string, objects: Objects): Promise<string[]> {
  const found: string[] = [];
  for (const { apiVersion, kind } of [...SCANNED_KINDS, ...ISOLATION_KINDS]) {
    for (const object of await objects.list(apiVersion, kind, { namespace })) {
      const id = `${kind}/${object.metadata?.name ?? "?"}`;
      if (SYSTEM_OBJECTS.has(id)) continue;
      if (objectOwnership(object, tenant).owner === "foreign") found.push(id);
    }
  }
  return found;
}

async function deleteOursIn(namespace: string, tenant: string, deps: TeardownDeps): Promise<number> {
  const selector = `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${tenant}`;
  let removed = 0;
  for (const { apiVersion, kind } of [...SCANNED_KINDS, ...ISOLATION_KINDS, ROLE_BINDINGS]) {
    let found = await deps.objects.list(apiVersion, kind, { namespace, labelSelector: selector });
    // The services' RoleBindings go too, so no service keeps rights in a namespace that is no
    // longer a tenant's; the provisioner's own goes last, since it may be what lets it delete.
    if (kind === ROLE_BINDINGS.kind) found = bindingsLastOf(found, await whoAmI(deps.objects));
    for (const object of found) {
      if (objectOwnership(object, tenant).owner !== "ours") continue;
      // By uid alone: a busy object's version moves with every status update.
      const { resourceVersion: _ignored, ...metadata } = object.metadata ?? {};
      if (await deleteExactly(deps.objects, { apiVersion, kind, metadata })) {
        removed++;
        await deps.publish({
          tenant,
          action: "Delete",
          kind,
          tenantRef: { namespace: "", name: tenant },
          hostRef: { namespace, name: object.metadata!.name! },
          reason: `TenantCluster ${tenant} is being deleted; its namespace is kept for objects tenantplane did not create`,
        });
      }
    }
  }
  return removed;
}

const ROLE_BINDINGS = { apiVersion: RBAC_VERSION, kind: "RoleBinding" } as const;

/** `bindings` with those naming `user` (a `system:serviceaccount:<ns>:<name>`) as a subject last. */
export function bindingsLastOf(bindings: readonly RoleBinding[], user: string | undefined): RoleBinding[] {
  const names = (b: RoleBinding) =>
    (b.subjects ?? []).some(
      (s) => s.kind === "ServiceAccount" && `system:serviceaccount:${s.namespace}:${s.name}` === user,
    );
  return [...bindings.filter((b) => !names(b)), ...bindings.filter(names)];
}

// Who the API server takes this service for; undefined when it cannot say (then any order will do,
// as a caller with cluster-wide rights needs no binding of its own).
async function whoAmI(objects: Objects): Promise<string | undefined> {
  try {
    const review = await objects.create<KubernetesObject & { status?: { userInfo?: { username?: string } } }>({
      apiVersion: "authentication.k8s.io/v1",
      kind: "SelfSubjectReview",
    });
    return review.status?.userInfo?.username;
  } catch {
    return undefined;
  }
}

// Deletes with uid and resourceVersion preconditions; false when it is already gone.
async function deleteExactly(objects: Objects, object: KubernetesObject): Promise<boolean> {
  const { apiVersion, kind } = object;
  const { name, namespace, uid, resourceVersion } = object.metadata ?? {};
  try {
    await objects.delete(
      { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } },
      { preconditions: { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) } },
    );
    return true;
  } catch (err) {
    const status = httpStatusOf(err);
    if (status === 404) return false;
    if (status === 409) {
      throw new TransientError(`${kind} ${name} changed while being deleted; looking again`, {
        code: "Conflict",
        retryAfterMs: 500,
        cause: err,
      });
    }
    throw err;
  }
}

// Pinned to the version read after the last status write, so no other finalizer added meanwhile is lost.
async function releaseFinalizer(pass: TeardownPass, finalizer: string): Promise<void> {
  const { tenant, deps } = pass;
  const current = await deps.objects.get<RawTenant>(API_VERSION, KIND_TENANT_CLUSTER, tenant);
  if (!current || current.metadata?.uid !== pass.uid || !current.metadata?.finalizers?.includes(finalizer)) return;
  const remaining = current.metadata.finalizers.filter((f) => f !== finalizer);
  try {
    await deps.objects.mergePatch(
      { apiVersion: API_VERSION, kind: KIND_TENANT_CLUSTER, metadata: { name: tenant } },
      { metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: remaining } },
    );
  } catch (err) {
    if (httpStatusOf(err) !== 409) throw err;
    throw new TransientError(`TenantCluster ${tenant} changed while its finalizer was released; looking again`, {
      code: "Conflict",
      retryAfterMs: 500,
      cause: err,
    });
  }
  deps.logger.info({ tenant }, "teardown complete; finalizer released");
}
