// Name and reference shapes the API server enforces on the objects tenantplane writes,
// checked when a tenantplane resource is admitted instead (the CRDs' CEL rules spell the
// same expressions), so a bad value is refused where the user typed it.

/** A DNS-1123 subdomain (StorageClass names, annotation key prefixes), at most 253 characters. */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A qualified name (annotation and extended resource keys): `[prefix/]name`, name at most 63 characters. */
export const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$/;

/**
 * A container image reference: `[registry[:port]/]path[:tag][@algorithm:digest]`, the path
 * in lowercase components as the distribution reference grammar requires.
 */
export const IMAGE_REFERENCE =
  /^(([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*(:[0-9]+)?\/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(\/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$/;

/** Whether `key` is a qualified name: a DNS subdomain prefix of at most 253 characters, `/`, a name. */
export function isQualifiedName(key: string): boolean {
  const slash = key.indexOf("/");
  return key.length <= 317 && QUALIFIED_NAME.test(key) && slash <= 253;
}

// ResourceQuota resource names the API server knows without a prefix.
const STANDARD_QUOTA_RESOURCES = new Set([
  "cpu",
  "memory",
  "ephemeral-storage",
  "requests.cpu",
  "requests.memory",
  "requests.storage",
  "requests.ephemeral-storage",
  "limits.cpu",
  "limits.memory",
  "limits.ephemeral-storage",
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "persistentvolumeclaims",
  "configmaps",
  "services.nodeports",
  "services.loadbalancers",
]);

// Object counts: the API server only takes whole numbers for these.
const COUNTED_QUOTA_RESOURCES = new Set([
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "persistentvolumeclaims",
  "configmaps",
  "services.nodeports",
  "services.loadbalancers",
]);

/** Whether `key` may appear in ResourceQuota `spec.hard`: a standard name, a hugepages name or a prefixed name. */
export function isQuotaResourceName(key: string): boolean {
  if (!isQualifiedName(key)) return false;
  return (
    key.includes("/") ||
    STANDARD_QUOTA_RESOURCES.has(key) ||
    key.startsWith("hugepages-") ||
    key.startsWith("requests.hugepages-")
  );
}

/** Whether a quota on `key` must be a whole number: object counts and extended resources (`count/…`, `vendor.com/gpu`). */
export function isWholeQuotaResource(key: string): boolean {
  return (
    COUNTED_QUOTA_RESOURCES.has(key) ||
    (key.includes("/") && !key.includes("kubernetes.io/") && !key.startsWith("requests."))
  );
}

/** Whether `key` is a container resource: cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource. */
export function isContainerResourceName(key: string): boolean {
  if (!isQualifiedName(key)) return false;
  if (!key.includes("/")) {
    return key === "cpu" || key === "memory" || key === "ephemeral-storage" || key.startsWith("hugepages-");
  }
  return key.includes("kubernetes.io/") || !key.startsWith("requests.");
}
