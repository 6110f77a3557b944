import {
  API_VERSION,
  GROUP,
  KIND_TENANT_CLUSTER,
  PLURAL_TENANT_CLUSTERS,
  VERSION,
  type Condition,
  type TenantClusterStatus,
} from "@tenantplane/api";
import type { Objects } from "@tenantplane/kube";

/** A condition as a service computes it, before transition bookkeeping. */
export interface ConditionInput {
  type: string;
  status: Condition["status"];
  reason: string;
  message: string;
  observedGeneration?: number | undefined;
}

/**
 * The condition to write: keeps the previous lastTransitionTime when the status
 * did not change, so the time says when the state began, not when it was last seen.
 */
export function nextCondition(
  previous: readonly Condition[] | undefined,
  input: ConditionInput,
  now = new Date(),
): Condition {
  const before = previous?.find((c) => c.type === input.type);
  const lastTransitionTime = before && before.status === input.status ? before.lastTransitionTime : now.toISOString();
  return {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message.slice(0, 32_768),
    lastTransitionTime,
    ...(input.observedGeneration === undefined ? {} : { observedGeneration: input.observedGeneration }),
  };
}

/**
 * Writes this service's part of a TenantCluster's status with server-side apply:
 * its one condition plus the status fields it owns. Other services' conditions
 * and fields are untouched because the conditions list is keyed by type.
 */
export async function applyTenantStatus(
  objects: Objects,
  tenant: string,
  previous: readonly Condition[] | undefined,
  condition: ConditionInput,
  fields: Omit<TenantClusterStatus, "conditions"> = {},
): Promise<Condition> {
  const next = nextCondition(previous, condition);
  await objects.applyClusterStatus(
    { group: GROUP, version: VERSION, plural: PLURAL_TENANT_CLUSTERS, kind: KIND_TENANT_CLUSTER, name: tenant },
    { ...fields, conditions: [next] },
  );
  return next;
}

/** The TenantCluster an Event about `tenant` is attached to. */
export function tenantRegarding(
  tenant: string,
  uid?: string,
): { apiVersion: string; kind: string; name: string; uid?: string | undefined } {
  return { apiVersion: API_VERSION, kind: KIND_TENANT_CLUSTER, name: tenant, uid };
}
