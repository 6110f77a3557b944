/** Standard label marking tenantplane-managed host objects; GC never touches objects without it. */
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
/** The value of {@link LABEL_MANAGED_BY} on every object tenantplane owns. */
export const MANAGED_BY = "tenantplane";
/** Label naming the tenant a host object belongs to (a tenant name is always a valid label value). */
export const LABEL_TENANT = "tenantplane.io/tenant";
/** Label carrying the source's virtual namespace as a label value; Service selectors are scoped by it. */
export const LABEL_VIRTUAL_NAMESPACE = "tenantplane.io/virtual-namespace";
/** Label naming the source's kind, so GC can list one tenant's copies of one kind. */
export const LABEL_KIND = "tenantplane.io/kind";
/** Annotation with the verbatim virtual namespace of the source (labels may be hashed, this never is). */
export const ANNOTATION_VIRTUAL_NAMESPACE = "tenantplane.io/virtual-namespace";
/** Annotation with the verbatim virtual name of the source. */
export const ANNOTATION_VIRTUAL_NAME = "tenantplane.io/virtual-name";
/** Annotation with the hash of the desired host object; an equal hash means no write is needed. */
export const ANNOTATION_CONTENT_HASH = "tenantplane.io/content-hash";
/**
 * Annotation on a sync copy naming the Decision of the write that made it what it is
 * (JSON: id, time, action, reason); written in that same write, so it survives a crash
 * before the publish and tells from the object itself why it is as it is.
 */
export const ANNOTATION_DECISION = "tenantplane.io/decision";
/** Exemption label (value "true") on tenantplane's own control-plane pods; tenants can never set it. */
export const LABEL_CONTROL_PLANE = "tenantplane.io/control-plane";
/** Label on a token Secret naming the host Pod it serves (the Secret is also owned by that Pod). */
export const LABEL_TOKEN_FOR_POD = "tenantplane.io/token-for-pod";
/** Key prefix reserved for tenantplane; tenant-supplied keys under it are dropped, never trusted. */
export const RESERVED_PREFIX = "tenantplane.io/";
/**
 * Prefix of the host label key that stands in for a tenant label key under a reserved
 * prefix (`app.kubernetes.io/managed-by: Helm` is common), so selectors keep their meaning.
 */
export const ESCAPED_KEY_PREFIX = "escaped.tenantplane.io/";
