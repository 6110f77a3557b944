import type { EventInput, Regarding } from "@tenantplane/kube";
import type { Decision, ObjectRef } from "@tenantplane/messaging";

/** What the recorder knows about the TenantCluster a Decision belongs to. */
export interface TenantState {
  /** The TenantCluster no longer exists: the Event lands in the events namespace, naming the tenant. */
  gone?: boolean;
  /** The TenantCluster exists and is being deleted: its removals are the teardown it asked for. */
  deleting?: boolean;
}

/**
 * The Event that explains one Decision on its TenantCluster. A Delete is a Warning (something
 * went away that a person may miss), except while the TenantCluster is being deleted: then it
 * is the routine teardown and Normal. (Once the TenantCluster is gone nothing tells a teardown
 * from anything else, so a Delete stays a Warning.) A Fail (the host API refused a write) is
 * always a Warning. Everything else is Normal. Reason is action plus
 * kind (`CreatePod`, `SkipConfigMap`); the message says what happened to which host
 * object and why, in that order (`created Secret tp-dev/dev-kubeconfig: admin kubeconfig
 * for ...`), naming the tenant object it came from when there is one. The deciding
 * service is the Event's reporting component, so `kubectl describe tenantcluster`
 * answers "why does this host object exist?".
 */
export function eventForDecision(decision: Decision, tenantCluster: Regarding, tenant: TenantState = {}): EventInput {
  // With the TenantCluster gone the Event lands in the events namespace: say whose it is.
  const gone = tenant.gone ? ` (tenant ${decision.tenant}: its TenantCluster no longer exists)` : "";
  return {
    regarding: tenantCluster,
    type: isWarning(decision, tenant) ? "Warning" : "Normal",
    reason: `${decision.action}${decision.kind}`,
    action: decision.action,
    reportingComponent: decision.service,
    message: `${past(decision)} ${decision.kind} ${ref(decision.hostRef)}${source(decision)}: ${decision.reason}${gone}`,
  };
}

/**
 * The Event on the host object itself for a Decision that created or updated it, so
 * `kubectl describe` of that object and `kubectl get events -n tp-<tenant>` say why it exists:
 * which tenant (and tenant object) it comes from, who decided, and why. Undefined when there
 * is no such object to attach it to: a Delete or Skip, a cluster-scoped object (the host
 * namespace), a Decision without the object's uid, or a kind the recorder cannot name.
 */
export function hostEventForDecision(decision: Decision): EventInput | undefined {
  const { hostRef } = decision;
  if (decision.action !== "Create" && decision.action !== "Update") return undefined;
  const apiVersion = HOST_API_VERSIONS[decision.kind];
  if (!hostRef.namespace || !hostRef.uid || !apiVersion) return undefined;
  return {
    regarding: { apiVersion, kind: decision.kind, name: hostRef.name, namespace: hostRef.namespace, uid: hostRef.uid },
    type: "Normal",
    reason: `${decision.action}${decision.kind}`,
    action: decision.action,
    reportingComponent: decision.service,
    message: `${PAST[decision.action]} for tenant ${decision.tenant}${source(decision)}: ${decision.reason}`,
  };
}

/** API versions of the host kinds tenantplane writes, for an Event's involvedObject. */
const HOST_API_VERSIONS: Readonly<Record<string, string>> = {
  ConfigMap: "v1",
  Secret: "v1",
  Pod: "v1",
  Service: "v1",
  ServiceAccount: "v1",
  PersistentVolumeClaim: "v1",
  ResourceQuota: "v1",
  LimitRange: "v1",
  StatefulSet: "apps/v1",
  NetworkPolicy: "networking.k8s.io/v1",
  Role: "rbac.authorization.k8s.io/v1",
  RoleBinding: "rbac.authorization.k8s.io/v1",
};

const PAST: Record<Decision["action"], string> = {
  Create: "created",
  Update: "updated",
  Delete: "deleted",
  Skip: "skipped",
  Fail: "host refused to write",
};

function isWarning(decision: Decision, tenant: TenantState): boolean {
  if (decision.action === "Fail") return true;
  return decision.action === "Delete" && tenant.deleting !== true;
}

// A Fail names the write the host refused when the Decision says which one.
function past(decision: Decision): string {
  const attempted = decision.error?.attempted;
  return decision.action === "Fail" && attempted ? `host refused to ${attempted.toLowerCase()}` : PAST[decision.action];
}

// Provisioner and isolation decide for the tenant as a whole: their tenantRef is the TenantCluster.
function source(decision: Decision): string {
  const r = decision.tenantRef;
  return r.namespace === "" && r.name === decision.tenant ? "" : ` from tenant ${decision.kind} ${ref(r)}`;
}

function ref(r: ObjectRef): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name;
}
