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
 */
export async function teardown(
  tenant: string,
  raw: RawTenant | undefined,
  deps: TeardownDeps,
  finalizer: string,
): Promise<void> {
  const namespace = hostNamespaceFor(tenant);
  const uid = raw?.metadata?.uid;
  if (uid === undefined) {
    // The TenantCluster is gone without its finalizer having run (force-removed), so nothing
    // proves which namespace was its own: an earlier tenant's leftovers look the same. Leave it.
    deps.logger.info(
      { tenant, namespace },
      "TenantCluster gone; its namespace, if any, is left for a person to remove",
    );
    return;
  }
  // A Delete recorded on the TenantCluster by a pass that died before publishing goes out first.
  await publishPendingDeletes(deps.objects, raw!, tenantDecider(tenant, deps.publish));
  const ns = await deps.objects.get("v1", "Namespace", namespace);
  if (ns) {
    const ownership = namespaceOwnership(ns, tenant, uid);
    if (ownership.owner === "ours") {
      await removeNamespace(tenant, raw, ns, deps);
    } else {
      deps.logger.info({ tenant, namespace, why: ownership.why }, "host namespace is not ours; leaving it untouched");
    }
  }
  await releaseFinalizer(tenant, raw, deps, finalizer);
}

async function removeNamespace(
  tenant: string,
  raw: RawTenant | undefined,
  ns: KubernetesObject,
  deps: TeardownDeps,
): Promise<void> {
  const namespace = ns.metadata!.name!;
  const waiting = new TransientError(`waiting for host namespace ${namespace} to be deleted`, {
    code: "Terminating",
    retryAfterMs: WAIT_MS,
  });
  if (ns.metadata?.deletionTimestamp) throw waiting;

  const foreign = await foreignObjectsIn(namespace, tenant, deps.objects);
  if (foreign.length > 0) {
    const removed = await deleteOursIn(namespace, tenant, deps);
    const message =
      `host namespace ${namespace} is kept because it holds objects tenantplane did not create ` +
      `(${foreign.slice(0, 10).join(", ")}${foreign.length > 10 ? ", …" : ""}); ` +
      `tenantplane's own ${removed} objects in it were deleted`;
    deps.logger.warn({ tenant, namespace }, message);
    if (raw) {
      await deps.events.record({
        regarding: tenantRegarding(tenant, raw.metadata?.uid),
        type: "Warning",
        reason: "NamespaceKept",
        message,
      });
    }
    return;
  }

  if (raw) {
    await applyTenantStatus(
      deps.objects,
      tenant,
      raw.status?.conditions,
      {
        type: CONDITION_CONTROL_PLANE_READY,
        status: "False",
        reason: "Terminating",
        message: `deleting host namespace ${namespace}`,
      },
      { phase: "Terminating" },
    );
  }
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
        anchor: raw!,
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
  throw waiting;
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
  for (const { apiVersion, kind } of [...SCANNED_KINDS, ...ISOLATION_KINDS]) {
    for (const object of await deps.objects.list(apiVersion, kind, { namespace, labelSelector: selector })) {
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

async function releaseFinalizer(
  tenant: string,
  raw: RawTenant | undefined,
  deps: TeardownDeps,
  finalizer: string,
): Promise<void> {
  if (!raw?.metadata?.finalizers?.includes(finalizer)) return;
  const remaining = raw.metadata.finalizers.filter((f) => f !== finalizer);
  await deps.objects.mergePatch(
    { apiVersion: API_VERSION, kind: KIND_TENANT_CLUSTER, metadata: { name: tenant } },
    { metadata: { resourceVersion: raw.metadata.resourceVersion, finalizers: remaining } },
  );
  deps.logger.info({ tenant }, "teardown complete; finalizer released");
}
