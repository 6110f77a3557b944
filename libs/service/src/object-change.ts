import type { KubernetesObject } from "@kubernetes/client-node";
import type { Objects } from "@tenantplane/kube";
import type { DecisionAction, PlannedDecision } from "@tenantplane/messaging";

/**
 * What an apply did, judged by resourceVersion: Create when nothing was there,
 * Update when the server stored a new version, nothing when the apply was a no-op
 * (server-side apply of unchanged content writes nothing and bumps nothing).
 */
export function changeOf(before: KubernetesObject | undefined, after: KubernetesObject): DecisionAction | undefined {
  if (!before) return "Create";
  return before.metadata?.resourceVersion === after.metadata?.resourceVersion ? undefined : "Update";
}

/** The decision a tracked apply reports, before the tenant and refs are filled in. */
export type ApplyOutcome<T> = { action: DecisionAction | undefined; object: T };

/**
 * Applies `desired` and says what changed, reading the object first so the
 * answer is exact. Used wherever a service owes a Decision for each write.
 */
export async function applyTracked<T extends KubernetesObject>(objects: Objects, desired: T): Promise<ApplyOutcome<T>> {
  const meta = desired.metadata ?? {};
  const before = await objects.get<T>(desired.apiVersion!, desired.kind!, meta.name!, meta.namespace);
  const after = await objects.apply(desired);
  return { action: changeOf(before, after), object: after };
}

/** Reports one change to a host object made on behalf of a tenant; no action, no Decision. */
export type Decide = (
  action: DecisionAction | undefined,
  kind: string,
  name: string,
  namespace: string,
  reason: string,
) => Promise<void>;

/**
 * The Decide of a service acting for the TenantCluster itself (provisioner,
 * isolation): the tenant reference is the cluster-scoped TenantCluster.
 */
export function tenantDecider(tenant: string, publish: (decision: PlannedDecision) => Promise<void>): Decide {
  return async (action, kind, name, namespace, reason) => {
    if (!action) return;
    await publish({
      tenant,
      action,
      kind,
      tenantRef: { namespace: "", name: tenant },
      hostRef: { namespace, name },
      reason,
    });
  };
}
