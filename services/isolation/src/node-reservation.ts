import type { KubernetesObject } from "@kubernetes/client-node";
import {
  API_VERSION,
  CONDITION_NODES_RESERVED,
  GROUP,
  IsolationSpecSchema,
  KIND_TENANT_CLUSTER,
  PLURAL_TENANT_CLUSTERS,
  TAINT_EFFECT_DEDICATED,
  TAINT_KEY_DEDICATED,
  VERSION,
  dedicatedNodeSelectorOf,
  type Condition,
  type TenantClusterStatus,
} from "@tenantplane/api";
import type { EventRecorder, Objects } from "@tenantplane/kube";
import {
  dedicatedTenantsOf,
  describeSelector,
  holdersOf,
  isDedicatedTaintOf,
  nodeViewOf,
  planReservation,
  reservationCondition,
  withDedicatedTaint,
  type NodeView,
} from "@tenantplane/isolation";
import type { PlannedDecision } from "@tenantplane/messaging";
import { httpStatusOf, TransientError, type Logger } from "@tenantplane/runtime";
import { applyTenantStatus, tenantDecider, tenantRegarding } from "@tenantplane/service";

/** Field manager of the NodesReserved condition and status.isolation.dedicatedNodes (IsolationApplied has its own). */
export const NODES_FIELD_MANAGER = "tenantplane-isolation-nodes";

/** What the node reservation needs from the outside world. */
export interface ReservationDeps {
  /** Reads TenantClusters and Nodes (from the cache) and patches Nodes. */
  objects: Objects;
  /** Writes the NodesReserved condition under NODES_FIELD_MANAGER. */
  statusObjects: Objects;
  events: EventRecorder;
  publish: (decision: PlannedDecision) => Promise<void>;
  logger: Logger;
}

type TenantObject = KubernetesObject & {
  spec?: { isolation?: unknown };
  status?: { conditions?: Condition[]; isolation?: { dedicatedNodes?: string[] } };
};

// A node patched by someone else between the read and the write (the node lifecycle controller
// adding a not-ready taint) costs one more read; this many in a row and the pass is retried.
const PATCH_ATTEMPTS = 5;

/**
 * Keeps the dedicated taint `tenantplane.io/dedicated=<tenant>:NoSchedule` in step with the
 * tenant: on the host nodes its spec.isolation.dedicated.nodeSelector matches while it is
 * Dedicated (a node another tenant holds or claims is left alone and reported as a conflict),
 * on no node once it is Shared, being deleted or gone. Each taint added or removed is an
 * Update Decision about the Node; the NodesReserved condition and status.isolation.dedicatedNodes
 * say the outcome while the tenant is Dedicated and are removed otherwise. Never touches
 * another taint, and writes nothing when the nodes already say what the plan says.
 */
export async function reserveNodes(tenant: string, deps: ReservationDeps): Promise<void> {
  const raw = await deps.objects.get<TenantObject>(API_VERSION, KIND_TENANT_CLUSTER, tenant);
  const state = !raw ? "gone" : raw.metadata?.deletionTimestamp ? "deleting" : "live";
  let nodeSelector: Readonly<Record<string, string>> | undefined;
  let mode = "Shared";
  if (raw && state === "live") {
    const parsed = IsolationSpecSchema.optional().safeParse(raw.spec?.isolation);
    // The IsolationApplied pass reports an invalid spec; the nodes stay as they are meanwhile.
    if (!parsed.success) return;
    mode = parsed.data?.mode ?? "Shared";
    nodeSelector = dedicatedNodeSelectorOf({ isolation: parsed.data });
  }
  const tenants = await deps.objects.list(API_VERSION, KIND_TENANT_CLUSTER);
  const nodes = (await deps.objects.list("v1", "Node")).map(nodeViewOf).filter((n): n is NodeView => !!n);
  const plan = planReservation(tenant, nodeSelector, dedicatedTenantsOf(tenants), nodes);
  const decide = tenantDecider(tenant, deps.publish);
  const taint = `${TAINT_KEY_DEDICATED}=${tenant}:${TAINT_EFFECT_DEDICATED}`;

  const releaseWhy =
    state === "gone"
      ? `TenantCluster ${tenant} no longer exists`
      : state === "deleting"
        ? `TenantCluster ${tenant} is being deleted`
        : nodeSelector
          ? `the node no longer matches spec.isolation.dedicated.nodeSelector ${describeSelector(nodeSelector)}`
          : `TenantCluster ${tenant} is no longer Dedicated (spec.isolation.mode ${mode})`;
  for (const name of plan.release) {
    await setTaint(deps, tenant, name, false, async (uid) =>
      decide("Update", "Node", name, "", `removed taint ${taint}: ${releaseWhy}`, undefined, uid),
    );
  }

  const reserved = new Set(plan.reserved);
  const conflicts = [...plan.conflicts];
  for (const name of plan.reserve) {
    const outcome = await setTaint(deps, tenant, name, true, async (uid) =>
      decide(
        "Update",
        "Node",
        name,
        "",
        `added taint ${taint}: the node matches spec.isolation.dedicated.nodeSelector ` +
          `${describeSelector(nodeSelector ?? {})} of Dedicated TenantCluster ${tenant}`,
        undefined,
        uid,
      ),
    );
    // Another tenant took the node between the read and the write: it is that tenant's now.
    if (typeof outcome === "object") {
      reserved.delete(name);
      conflicts.push({ node: name, tenants: [tenant, ...outcome.heldBy].sort(), holder: outcome.heldBy[0] });
    } else if (outcome === "gone") {
      reserved.delete(name);
    }
  }

  if (!raw || state !== "live") return;
  if (!nodeSelector) return clearStatus(deps, tenant, raw);
  const dedicatedNodes = [...reserved].sort();
  const condition = reservationCondition(tenant, nodeSelector, {
    reserved: dedicatedNodes,
    conflicts: conflicts.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)),
    matched: plan.matched,
  });
  await report(deps, tenant, raw, condition, dedicatedNodes);
}

type TaintOutcome = "written" | "unchanged" | "gone" | { heldBy: string[] };

/**
 * Adds or removes the tenant's taint on one node with a merge patch of the whole taint list
 * pinned to the resourceVersion read, so a concurrent change (the node lifecycle controller's
 * taints, another tenant's reservation) makes the server refuse ours instead of losing theirs;
 * on a conflict the node is read afresh and the check repeated. The node the server answers
 * with is checked for the taint; `recorded` publishes the Decision once it is stored.
 */
async function setTaint(
  deps: ReservationDeps,
  tenant: string,
  name: string,
  present: boolean,
  recorded: (uid: string | undefined) => Promise<void>,
): Promise<TaintOutcome> {
  for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt++) {
    const node = await deps.objects.get("v1", "Node", name, undefined, { fresh: attempt > 0 });
    const view = node && nodeViewOf(node);
    if (!node || !view) return "gone";
    const ours = view.taints.some((t) => isDedicatedTaintOf(t, tenant));
    if (ours === present) return "unchanged";
    if (present) {
      const heldBy = holdersOf(view).filter((h) => h !== tenant);
      if (heldBy.length > 0) return { heldBy };
    }
    const taints = withDedicatedTaint(view.taints, tenant, present);
    let stored: KubernetesObject;
    try {
      stored = await deps.objects.mergePatch(
        { apiVersion: "v1", kind: "Node", metadata: { name } },
        {
          metadata: { resourceVersion: node.metadata?.resourceVersion },
          // null removes the field: an empty list would be stored as written.
          spec: { taints: taints.length > 0 ? taints : null },
        },
      );
    } catch (err) {
      const status = httpStatusOf(err);
      if (status === 409) continue;
      if (status === 404) return "gone";
      throw err;
    }
    const after = nodeViewOf(stored);
    if (!after || after.taints.some((t) => isDedicatedTaintOf(t, tenant)) !== present) {
      throw new TransientError(`node ${name}: the server did not store the ${present ? "added" : "removed"} taint`, {
        code: "TaintNotStored",
      });
    }
    await recorded(stored.metadata?.uid);
    return "written";
  }
  throw new TransientError(`node ${name} changed ${PATCH_ATTEMPTS} times while its dedicated taint was being written`, {
    code: "NodeConflictRetry",
  });
}

/** Writes NodesReserved and status.isolation.dedicatedNodes unless they already say this; a Warning when a problem is new. */
async function report(
  deps: ReservationDeps,
  tenant: string,
  raw: TenantObject,
  condition: { status: "True" | "False"; reason: string; message: string },
  dedicatedNodes: string[],
): Promise<void> {
  const previous = raw.status?.conditions;
  const before = previous?.find((c) => c.type === CONDITION_NODES_RESERVED);
  const generation = raw.metadata?.generation;
  const same =
    before?.status === condition.status &&
    before.reason === condition.reason &&
    before.message === condition.message &&
    before.observedGeneration === generation &&
    JSON.stringify(raw.status?.isolation?.dedicatedNodes ?? null) === JSON.stringify(dedicatedNodes);
  if (same) return;
  const fields: Omit<TenantClusterStatus, "conditions"> = { isolation: { dedicatedNodes } };
  await applyTenantStatus(
    deps.statusObjects,
    tenant,
    previous,
    { ...condition, type: CONDITION_NODES_RESERVED, observedGeneration: generation },
    fields,
  );
  // Said once per change of what is wrong, not on every pass.
  if (condition.status === "False" && (before?.reason !== condition.reason || before.message !== condition.message)) {
    await deps.events.record({
      regarding: tenantRegarding(tenant, raw.metadata?.uid),
      type: "Warning",
      reason: condition.reason,
      message: condition.message,
    });
  }
}

/**
 * Drops the NodesReserved condition of a tenant that is no longer Dedicated and empties
 * status.isolation.dedicatedNodes. The list stays (empty) so that this manager still sends a
 * field: an apply of nothing would leave status null, which the schema refuses, whenever no
 * other service has written status yet.
 */
async function clearStatus(deps: ReservationDeps, tenant: string, raw: TenantObject): Promise<void> {
  const owns =
    raw.status?.conditions?.some((c) => c.type === CONDITION_NODES_RESERVED) ||
    (raw.status?.isolation?.dedicatedNodes?.length ?? 0) > 0;
  if (!owns) return;
  await deps.statusObjects.applyClusterStatus(
    { group: GROUP, version: VERSION, plural: PLURAL_TENANT_CLUSTERS, kind: KIND_TENANT_CLUSTER, name: tenant },
    { isolation: { dedicatedNodes: [] } },
  );
}
