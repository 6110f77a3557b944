import {
  API_VERSION,
  GROUP,
  canonicalJson,
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

interface ManagedFieldsEntry {
  manager?: string;
  subresource?: string;
  fieldsV1?: Record<string, unknown>;
}

/** A TenantCluster as far as its status and who owns which part of it. */
export type StatusHolder = {
  metadata?: { managedFields?: ManagedFieldsEntry[] };
  status?: TenantClusterStatus & Record<string, unknown>;
};

/** The top-level status fields `manager` owns on the status subresource (conditions and phase included). */
export function ownedStatusKeys(tc: StatusHolder, manager: string): Set<string> {
  const owned = new Set<string>();
  for (const entry of tc.metadata?.managedFields ?? []) {
    if (entry.manager !== manager || entry.subresource !== "status") continue;
    const status = entry.fieldsV1?.["f:status"];
    if (!status || typeof status !== "object") continue;
    for (const key of Object.keys(status)) if (key.startsWith("f:")) owned.add(key.slice(2));
  }
  return owned;
}

/**
 * Whether `current` already shows what a status write of `condition` and `fields` by `manager`
 * would store: the condition with the same status, reason, message and observedGeneration, and
 * every other field the manager owns or would send with the same value (a field it owns but no
 * longer sends would be removed, so that is a change too).
 */
export function statusUpToDate(
  current: StatusHolder,
  manager: string,
  condition: ConditionInput,
  fields: Omit<TenantClusterStatus, "conditions">,
): boolean {
  const next = nextCondition(current.status?.conditions, condition);
  const before = current.status?.conditions?.find((c) => c.type === condition.type);
  if (
    !before ||
    before.status !== next.status ||
    before.reason !== next.reason ||
    before.message !== next.message ||
    before.observedGeneration !== next.observedGeneration
  )
    return false;
  const sent = fields as Record<string, unknown>;
  const keys = new Set([...Object.keys(sent), ...ownedStatusKeys(current, manager)]);
  keys.delete("conditions");
  return [...keys].every((key) => canonicalJson(sent[key]) === canonicalJson(current.status?.[key]));
}

/**
 * Writes this service's part of a TenantCluster's status with server-side apply:
 * its one condition plus the status fields it owns. Other services' conditions
 * and fields are untouched because the conditions list is keyed by type. Given the
 * TenantCluster as last read (`current`), a status it already shows is not written again.
 */
export async function applyTenantStatus(
  objects: Objects,
  tenant: string,
  previous: readonly Condition[] | undefined,
  condition: ConditionInput,
  fields: Omit<TenantClusterStatus, "conditions"> = {},
  current?: StatusHolder,
): Promise<Condition> {
  const next = nextCondition(previous, condition);
  if (current && statusUpToDate(current, objects.fieldManager, condition, fields)) return next;
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
