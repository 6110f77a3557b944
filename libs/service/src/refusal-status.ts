import { API_VERSION, KIND_TENANT_CLUSTER, type Condition } from "@tenantplane/api";
import type { EventRecorder, Objects } from "@tenantplane/kube";
import { describeRefusal, REASON_REJECTED_BY_API_SERVER, type ApiRefusal } from "./api-refusal.js";
import { applyTenantStatus, ownedStatusKeys, tenantRegarding, type StatusHolder } from "./tenant-status.js";

/** How a service reports a refused write: the condition it owns and where the user fixes the input. */
export interface RefusalReporting {
  /** The condition type this service owns, e.g. `ControlPlaneReady`. */
  condition: string;
  /** One sentence naming what to change for `tenant`, e.g. "Fix spec.controlPlane of TenantCluster a." */
  fix: (tenant: string) => string;
  /**
   * Status fields the service reports on every tenant whatever happens (e.g. its host
   * namespace): written with a refusal too, so a tenant whose first report is a refusal shows them.
   */
  fields?: (tenant: string) => Record<string, unknown>;
}

type TenantObject = StatusHolder & { metadata?: { uid?: string; generation?: number } };

/**
 * The top-level status fields `manager` owns on the status subresource, other than
 * conditions and phase, with their current values. A server-side apply that left them
 * out would delete them, so a refusal report carries them forward unchanged.
 */
export function ownedStatusFields(tc: TenantObject, manager: string): Record<string, unknown> {
  const owned = ownedStatusKeys(tc, manager);
  const out: Record<string, unknown> = {};
  for (const field of owned) {
    if (field === "conditions" || field === "phase") continue;
    const value = tc.status?.[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/**
 * Records a refused write on the TenantCluster: the service's condition False with
 * reason RejectedByApiServer and the server's message, `status.phase` Failed, and a
 * Warning Event naming the object and field. A TenantCluster that is gone gets nothing.
 */
export async function reportApiRefusal(
  deps: { objects: Objects; events: EventRecorder },
  tenant: string,
  refusal: ApiRefusal,
  reporting: RefusalReporting,
): Promise<boolean> {
  const tc = await deps.objects.get<TenantObject & { apiVersion: string; kind: string }>(
    API_VERSION,
    KIND_TENANT_CLUSTER,
    tenant,
  );
  if (!tc) return false;
  const message = describeRefusal(refusal, reporting.fix(tenant));
  const previous = tc.status?.conditions as Condition[] | undefined;
  await applyTenantStatus(
    deps.objects,
    tenant,
    previous,
    {
      type: reporting.condition,
      status: "False",
      reason: REASON_REJECTED_BY_API_SERVER,
      message,
      observedGeneration: tc.metadata?.generation,
    },
    { ...reporting.fields?.(tenant), ...ownedStatusFields(tc, deps.objects.fieldManager), phase: "Failed" },
  );
  await deps.events.record({
    regarding: tenantRegarding(tenant, tc.metadata?.uid),
    type: "Warning",
    reason: REASON_REJECTED_BY_API_SERVER,
    message,
  });
  return true;
}
