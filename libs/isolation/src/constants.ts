/** Label naming which tenantplane component produced a host object. */
export const LABEL_COMPONENT = "tenantplane.io/component";
/** Value of {@link LABEL_COMPONENT} on every object this compiler produces. */
export const COMPONENT_ISOLATION = "isolation";
/** Annotation naming the IsolationProfile an object was compiled from. */
export const ANNOTATION_ISOLATION_PROFILE = "tenantplane.io/isolation-profile";
/**
 * Profile name recorded when a TenantCluster names no profile. Parentheses cannot occur in
 * object names, so it never collides with a real IsolationProfile.
 */
export const BUILT_IN_PROFILE_NAME = "(built-in)";

/** Port the tenant API server (k3s) listens on inside its pod. */
export const CONTROL_PLANE_PORT = 6443;

/** Deterministic names of the objects the compiler can produce. */
export const OBJECT_NAMES = {
  defaultDeny: "tenantplane-default-deny",
  allowControlPlane: "tenantplane-allow-control-plane",
  allowControlPlanePeers: "tenantplane-allow-control-plane-peers",
  allowDns: "tenantplane-allow-dns",
  allowSameNamespace: "tenantplane-allow-same-namespace",
  allowNamespaces: "tenantplane-allow-namespaces",
  allowCidrs: "tenantplane-allow-cidrs",
  quota: "tenantplane-quota",
  limits: "tenantplane-limits",
} as const;

/** The kinds the compiler produces, with what a client needs to list and delete them. */
export const ISOLATION_KINDS = [
  { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", plural: "networkpolicies" },
  { apiVersion: "v1", kind: "ResourceQuota", plural: "resourcequotas" },
  { apiVersion: "v1", kind: "LimitRange", plural: "limitranges" },
] as const;
