import {
  hostNamespaceFor,
  isManaged,
  LABEL_KIND,
  LABEL_TENANT,
  labelValue,
  TENANT_API_PORT,
  TENANT_API_SERVICE,
  TENANT_DNS_SERVICE,
} from "@tenantplane/mapping";
import { isJsonObject } from "./internal/json.js";

/** Cluster DNS domain of every tenant: the zone the tenant DNS server answers for. */
export const TENANT_CLUSTER_DOMAIN = "cluster.local";

/**
 * What a host Pod copy needs to reach its tenant rather than the host: the tenant API
 * Service's ClusterIP and port and the tenant DNS Service's ClusterIP, all in `tp-<tenant>`.
 */
export interface PodEnvironment {
  /** ClusterIP of the tenant API Service (`k3s`). */
  apiHost: string;
  /** Port of the tenant API on that Service. */
  apiPort: number;
  /** ClusterIP of the tenant DNS Service (`tenant-dns`). */
  dnsHost: string;
}

/**
 * How the planner learns the pod environment: a known one, `"unknown"` when the caller
 * knows the Services lack addresses (Pods are then held back with a Skip naming what is
 * missing: a Pod's DNS and env cannot change after creation), or undefined to read it from
 * the host objects (or, when absent there, to show placeholders: offline explain-sync).
 */
export type PodEnvironmentInput = PodEnvironment | "unknown" | undefined;

/** Annotation on a host Pod: the tenant Pod's uid (the downward API's `metadata.uid`, and the token's bound object). */
export const ANNOTATION_VIRTUAL_UID = "tenantplane.io/virtual-uid";
/** Annotation on a host Pod: the tenant Pod's ServiceAccount name (downward API `spec.serviceAccountName`, token subject). */
export const ANNOTATION_VIRTUAL_SERVICE_ACCOUNT = "tenantplane.io/virtual-service-account";
/** Annotation on a host Pod: the tenant Pod's labels in the downward API's file format, for `metadata.labels`. */
export const ANNOTATION_VIRTUAL_LABELS = "tenantplane.io/virtual-labels";
/**
 * Annotation on a host Pod: the tokens its token Secret must hold, as JSON
 * `[{key, audience?, expirationSeconds}]`. Parameters only: a token never goes in an annotation.
 */
export const ANNOTATION_TOKEN_REQUESTS = "tenantplane.io/token-requests";
export { LABEL_TOKEN_FOR_POD } from "@tenantplane/mapping";

/** Key of the tenant CA certificate in a token Secret. */
export const TOKEN_SECRET_CA_KEY = "ca.crt";
/** Key of the virtual namespace in a token Secret. */
export const TOKEN_SECRET_NAMESPACE_KEY = "namespace";
/** Lifetime the API server gives a projected token that names none (as the kubelet asks). */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3607;

/**
 * The host Secret holding the tenant tokens of host Pod `hostPod`. The dot keeps it out of
 * the names sync copies get (always DNS labels), so no tenant object can claim it.
 */
export function tokenSecretName(hostPod: string): string {
  return `${hostPod}.token`;
}

/**
 * The host ConfigMap holding the tenant's service-link variables for virtual namespace
 * `namespace`, read by its Pods' containers through `envFrom` as the kubelet would compute
 * them; a dotted name no sync copy can take.
 */
export function serviceLinksConfigMapName(namespace: string): string {
  return `service-links.${namespace}`;
}

/** One token a host Pod's token Secret holds under `key`. */
export interface TokenRequestSpec {
  key: string;
  /** Audience the Pod asked for; absent: the tenant API server's own. */
  audience?: string;
  expirationSeconds: number;
}

/** The token requests recorded on a host Pod copy, or [] when it has none or they cannot be read. */
export function tokenRequestsOf(hostPod: unknown): TokenRequestSpec[] {
  const text = annotationsOf(hostPod)[ANNOTATION_TOKEN_REQUESTS];
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (r): r is TokenRequestSpec =>
        isJsonObject(r) &&
        typeof r["key"] === "string" &&
        typeof r["expirationSeconds"] === "number" &&
        (r["audience"] === undefined || typeof r["audience"] === "string"),
    );
  } catch {
    return [];
  }
}

/** Placeholders for offline planning, where no host Service has an address. */
export function placeholderPodEnvironment(): PodEnvironment {
  return {
    apiHost: `<${TENANT_API_SERVICE} ClusterIP>`,
    apiPort: TENANT_API_PORT,
    dnsHost: `<${TENANT_DNS_SERVICE} ClusterIP>`,
  };
}

/**
 * The pod environment as the host namespace's objects give it: the ClusterIPs of the
 * tenant's own API and DNS Services (managed by tenantplane, for this tenant, not sync
 * copies). `"unknown"` when either is missing or has no address yet.
 */
export function podEnvironmentFrom(hostObjects: readonly unknown[], tenant: string): PodEnvironment | "unknown" {
  const ns = hostNamespaceFor(tenant);
  const addressOf = (name: string): string | undefined => {
    for (const value of hostObjects) {
      if (!isJsonObject(value) || (value["kind"] !== undefined && value["kind"] !== "Service")) continue;
      const metadata = isJsonObject(value["metadata"]) ? value["metadata"] : {};
      if (metadata["name"] !== name || (metadata["namespace"] ?? ns) !== ns) continue;
      const labels = (isJsonObject(metadata["labels"]) ? metadata["labels"] : {}) as Record<string, string>;
      if (!isManaged({ labels }) || labels[LABEL_TENANT] !== labelValue(tenant) || labels[LABEL_KIND] !== undefined)
        continue;
      const spec = isJsonObject(value["spec"]) ? value["spec"] : {};
      const ip = spec["clusterIP"];
      if (typeof ip === "string" && ip !== "" && ip !== "None") return ip;
    }
    return undefined;
  };
  const apiHost = addressOf(TENANT_API_SERVICE);
  const dnsHost = addressOf(TENANT_DNS_SERVICE);
  if (apiHost === undefined || dnsHost === undefined) return "unknown";
  return { apiHost, apiPort: TENANT_API_PORT, dnsHost };
}

/** Why Pods wait while the pod environment is unknown. */
export function unknownPodEnvironmentReason(tenant: string): string {
  const ns = hostNamespaceFor(tenant);
  return (
    `waiting for Services ${ns}/${TENANT_API_SERVICE} (tenant API) and ${ns}/${TENANT_DNS_SERVICE} (tenant DNS) ` +
    `to have ClusterIPs: a Pod's DNS and API address cannot change once it exists`
  );
}

function annotationsOf(obj: unknown): Record<string, string> {
  if (!isJsonObject(obj) || !isJsonObject(obj["metadata"])) return {};
  const annotations = obj["metadata"]["annotations"];
  return isJsonObject(annotations) ? (annotations as Record<string, string>) : {};
}
