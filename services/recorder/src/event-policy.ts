import type { EventInput, Regarding } from "@tenantplane/kube";
import type { Decision } from "@tenantplane/messaging";
import { eventForDecision, hostEventForDecision, type TenantState } from "./event-for-decision.js";

/**
 * How routine Decisions become Events: a Create or Update of the copy of a tenant object,
 * whose number grows with what tenants create (3,000 objects, 3,000 Decisions). Everything that
 * needs attention (Skip, Delete, Fail) is always an Event of its own, and so are the Decisions
 * about a tenant's own objects (namespace, control plane, isolation objects: a fixed handful per
 * TenantCluster, each telling a different part of its story).
 * - `aggregated` (default): one Event per TenantCluster, deciding service and reason
 *   (`CreateConfigMap`) with a count and a series, written at most once per interval; no Event
 *   on the copy, whose labels and annotations (`tenantplane.io/tenant`, `…/virtual-name`,
 *   `tenantplane.io/decision`) say in `kubectl describe` why it exists.
 * - `each`: an Event per Decision on the TenantCluster (repeats folded, many distinct ones
 *   combined) and a copy on the host object within its budget, as before aggregation.
 * - `none`: routine Decisions are left to the DECISIONS stream and the copies' annotations.
 */
export const ROUTINE_EVENTS = ["aggregated", "each", "none"] as const;
export type RoutineEvents = (typeof ROUTINE_EVENTS)[number];

/** What the recorder writes for one Decision. */
export interface EventPlan {
  /**
   * The Event on the TenantCluster: written on its own, awaited, retried until stored
   * (`event`), counted in its routine series (`series`), or none.
   */
  tenant: { write: "event" | "series"; event: EventInput } | undefined;
  /**
   * The convenience copy on the host object the Decision created or updated: under `each`, and
   * for a tenant's own objects under every setting.
   */
  host: EventInput | undefined;
}

/**
 * A Create or Update of a tenant object's copy: the planned outcome, which nobody needs to act
 * on. (The provisioner's and isolation's Decisions name the TenantCluster as their source.)
 */
export function isRoutine(decision: Pick<Decision, "action" | "tenant" | "tenantRef">): boolean {
  const ownObject = decision.tenantRef.namespace === "" && decision.tenantRef.name === decision.tenant;
  return (decision.action === "Create" || decision.action === "Update") && !ownObject;
}

/** The Events of `decision` under `routine`; pure. */
export function planEvents(
  decision: Decision,
  tenantCluster: Regarding,
  tenant: TenantState,
  routine: RoutineEvents,
): EventPlan {
  const event = eventForDecision(decision, tenantCluster, tenant);
  if (!isRoutine(decision)) return { tenant: { write: "event", event }, host: hostEventForDecision(decision) };
  switch (routine) {
    case "each":
      return { tenant: { write: "event", event }, host: hostEventForDecision(decision) };
    case "aggregated":
      return { tenant: { write: "series", event }, host: undefined };
    case "none":
      return { tenant: undefined, host: undefined };
  }
}
