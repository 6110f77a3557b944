import type { EventInput, Regarding } from "@tenantplane/kube";
import type { Decision, ObjectRef } from "@tenantplane/messaging";

/**
 * The Event that explains one Decision on its TenantCluster: Delete is a
 * Warning (something went away), everything else Normal. Reason is action plus
 * kind (`CreatePod`, `SkipConfigMap`), the message names source, target,
 * deciding service and the decision's reason, so `kubectl describe tenantcluster`
 * answers "why does this host object exist?".
 */
export function eventForDecision(decision: Decision, tenantCluster: Regarding, tenantGone = false): EventInput {
  // With the TenantCluster gone the Event lands in the events namespace: say whose it is.
  const gone = tenantGone ? ` (tenant ${decision.tenant}: its TenantCluster no longer exists)` : "";
  return {
    regarding: tenantCluster,
    type: decision.action === "Delete" ? "Warning" : "Normal",
    reason: `${decision.action}${decision.kind}`,
    action: decision.action,
    message: `${decision.kind} ${ref(decision.tenantRef)} -> host ${ref(decision.hostRef)}: ${decision.reason} [${decision.service}]${gone}`,
  };
}

function ref(r: ObjectRef): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name;
}
