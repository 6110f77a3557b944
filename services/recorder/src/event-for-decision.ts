import type { EventInput, Regarding } from "@tenantplane/kube";
import type { Decision, ObjectRef } from "@tenantplane/messaging";

/**
 * The Event that explains one Decision on its TenantCluster: Delete is a
 * Warning (something went away), everything else Normal. Reason is action plus
 * kind (`CreatePod`, `SkipConfigMap`); the message says what happened to which host
 * object and why, in that order (`created Secret tp-dev/dev-kubeconfig: admin kubeconfig
 * for ...`), naming the tenant object it came from when there is one. The deciding
 * service is the Event's reporting component, so `kubectl describe tenantcluster`
 * answers "why does this host object exist?".
 */
export function eventForDecision(decision: Decision, tenantCluster: Regarding, tenantGone = false): EventInput {
  // With the TenantCluster gone the Event lands in the events namespace: say whose it is.
  const gone = tenantGone ? ` (tenant ${decision.tenant}: its TenantCluster no longer exists)` : "";
  const source = isTenantCluster(decision.tenantRef, decision.tenant)
    ? ""
    : ` from tenant ${decision.kind} ${ref(decision.tenantRef)}`;
  return {
    regarding: tenantCluster,
    type: decision.action === "Delete" ? "Warning" : "Normal",
    reason: `${decision.action}${decision.kind}`,
    action: decision.action,
    reportingComponent: decision.service,
    message: `${PAST[decision.action]} ${decision.kind} ${ref(decision.hostRef)}${source}: ${decision.reason}${gone}`,
  };
}

const PAST: Record<Decision["action"], string> = {
  Create: "created",
  Update: "updated",
  Delete: "deleted",
  Skip: "skipped",
};

// Provisioner and isolation decide for the tenant as a whole: their tenantRef is the TenantCluster.
function isTenantCluster(r: ObjectRef, tenant: string): boolean {
  return r.namespace === "" && r.name === tenant;
}

function ref(r: ObjectRef): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name;
}
