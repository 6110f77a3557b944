import { SYNC_KINDS, type SyncKind } from "@tenantplane/api";

/** The names kubectl accepts for each syncable kind (singular, plural, short name), lowercase. */
const ALIASES: Record<SyncKind, readonly string[]> = {
  Pod: ["pod", "pods", "po"],
  ConfigMap: ["configmap", "configmaps", "cm"],
  Secret: ["secret", "secrets"],
  Service: ["service", "services", "svc"],
  ServiceAccount: ["serviceaccount", "serviceaccounts", "sa"],
  PersistentVolumeClaim: ["persistentvolumeclaim", "persistentvolumeclaims", "pvc"],
};

/** Names of the TenantCluster kind as `explain` accepts them. */
export const TENANT_CLUSTER_NAMES: readonly string[] = ["tc", "tenantcluster", "tenantclusters", "tenant", "tenants"];

/** The syncable kind `text` names (any case, kubectl's plural and short names too), or undefined. */
export function syncKindOf(text: string): SyncKind | undefined {
  const lower = text.toLowerCase();
  return SYNC_KINDS.find((kind) => ALIASES[kind].includes(lower));
}

/** What `syncKindOf` accepts, for error messages. */
export const SYNC_KIND_NAMES = SYNC_KINDS.map((kind) => `${kind} (${ALIASES[kind].slice(1).join(", ")})`).join(", ");

/** The REST resource name (plural) of a syncable kind, e.g. `pods`; a kind outside them is lowercased and given an `s`. */
export function pluralOf(kind: string): string {
  return ALIASES[kind as SyncKind]?.[1] ?? `${kind.toLowerCase()}s`;
}
