import { canonicalJson, subtractQuantities } from "@tenantplane/api";
import { ANNOTATION_CONTROL_PLANE_SHARE, ANNOTATION_ISOLATION_PROFILE, OBJECT_NAMES } from "@tenantplane/isolation";
import { LABEL_MANAGED_BY, MANAGED_BY } from "@tenantplane/mapping";
import { sameJson } from "./same-json.js";

/** Name of the tenant ConfigMap mirroring the host quota (the host ResourceQuota's own name). */
export const QUOTA_VIEW_NAME = OBJECT_NAMES.quota;
/**
 * Tenant namespace of the mirror. kube-public is where a cluster publishes what every user may
 * read, it is never synced to the host (so the mirror costs no host object and no quota), and
 * it keeps the tenant's own namespaces, `default` included, free of tenantplane's objects.
 */
export const QUOTA_VIEW_NAMESPACE = "kube-public";
/** Role and RoleBinding letting every authenticated tenant user read the mirror, and only it. */
export const QUOTA_READER_NAME = "tenantplane-quota-reader";

/** The parts of a host ResourceQuota the mirror reads. */
export interface QuotaLike {
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec?: { hard?: Record<string, string> };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

/** A namespaced object the mirror writes into the tenant API. */
export interface TenantObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  [field: string]: unknown;
}

/** The tenant's own part of a host quota: its limits and usage with tenantplane's share taken out. */
export interface TenantQuota {
  /** IsolationProfile the quota was compiled from, as the quota records it. */
  profile: string | undefined;
  hard: Record<string, string>;
  /** Only resources the host's quota controller has counted already. */
  used: Record<string, string>;
  /** What the host quota holds for tenantplane's control plane on top of `hard`. */
  share: Record<string, string>;
}

/**
 * The tenant's limits and usage from the host quota: the limits the quota controller enforces
 * (`status.hard`, else `spec.hard` before it has seen the quota) and the usage it counted,
 * each minus the control plane's share recorded on the quota, never below zero. A share that
 * cannot be read counts as none: the tenant then sees the host's totals, never less than it has.
 */
export function tenantQuota(quota: QuotaLike): TenantQuota {
  const share = readShare(quota.metadata.annotations?.[ANNOTATION_CONTROL_PLANE_SHARE]);
  const minusShare = (list: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(list ?? {}).map(([key, amount]) => [key, minus(amount, share[key])])) as Record<
      string,
      string
    >;
  const hard = quota.status?.hard ?? quota.spec?.hard;
  return {
    profile: quota.metadata.annotations?.[ANNOTATION_ISOLATION_PROFILE],
    hard: minusShare(hard),
    used: minusShare(pick(quota.status?.used, Object.keys(hard ?? {}))),
    share: pick(share, Object.keys(hard ?? {})),
  };
}

/**
 * The ConfigMap `kube-public/tenantplane-quota` the tenant reads its host quota from: per
 * resource its limit and usage (JSON under `hard` and `used`, a table under `summary`), the
 * profile, the control plane's share and where the quota lives on the host. `quota` undefined
 * means the profile sets no quota. Pure; the same input gives the same object.
 */
export function quotaView(tenant: string, hostNamespace: string, quota: QuotaLike | undefined): TenantObject {
  const about =
    "Read-only: tenantplane rewrites this ConfigMap from the host's ResourceQuota on every change, so edits are " +
    "overwritten. A Pod the host refuses for quota is not started; the refusal, with the host's numbers, is a " +
    "Warning Event on the Pod (kubectl describe pod). The host's numbers include tenantplane's own control plane " +
    "(controlPlaneShare); hard and used here are the tenant's part.";
  const base = { apiVersion: "v1", kind: "ConfigMap", metadata: viewMetadata(QUOTA_VIEW_NAME) };
  if (quota === undefined) {
    return {
      ...base,
      data: {
        about,
        hard: "{}",
        used: "{}",
        summary: `no quota: the isolation profile of tenant ${tenant} sets no limits`,
      },
    };
  }
  const view = tenantQuota(quota);
  return {
    ...base,
    data: {
      about,
      ...(view.profile === undefined ? {} : { profile: view.profile }),
      hard: canonicalJson(view.hard),
      used: canonicalJson(view.used),
      controlPlaneShare: canonicalJson(view.share),
      hostQuota: `ResourceQuota ${quota.metadata.name} in host namespace ${hostNamespace}`,
      summary: summary(view),
    },
  };
}

/** The Role and RoleBinding that let every authenticated user of the tenant read the mirror, and nothing else. */
export function quotaReaderRbac(): [TenantObject, TenantObject] {
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: viewMetadata(QUOTA_READER_NAME),
      rules: [
        { apiGroups: [""], resources: ["configmaps"], resourceNames: [QUOTA_VIEW_NAME], verbs: ["get", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: viewMetadata(QUOTA_READER_NAME),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: QUOTA_READER_NAME },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" }],
    },
  ];
}

/** Whether the tenant's ConfigMap already says what `desired` says (its data and labels), so no write is due. */
export function viewIsCurrent(
  current: { data?: unknown; metadata?: { labels?: unknown } } | undefined,
  desired: TenantObject,
): boolean {
  if (current === undefined) return false;
  const labels = (current.metadata?.labels ?? {}) as Record<string, string>;
  return (
    sameJson(current.data ?? {}, desired["data"]) &&
    Object.entries(desired.metadata.labels).every(([key, value]) => labels[key] === value)
  );
}

function viewMetadata(name: string): TenantObject["metadata"] {
  return { name, namespace: QUOTA_VIEW_NAMESPACE, labels: { [LABEL_MANAGED_BY]: MANAGED_BY } };
}

function summary(view: TenantQuota): string {
  const rows = Object.keys(view.hard)
    .sort()
    .map((key) => [key, view.used[key] ?? "?", view.hard[key] ?? ""]);
  const table = [["RESOURCE", "USED", "HARD"], ...rows];
  const widths = [0, 1].map((i) => Math.max(...table.map((row) => row[i]!.length)));
  return table.map((row) => row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]! + 2) : cell)).join("")).join("\n");
}

function readShare(text: string | undefined): Record<string, string> {
  if (text === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string"));
  } catch {
    return {};
  }
}

function minus(amount: string, share: string | undefined): string {
  if (share === undefined) return amount;
  try {
    return subtractQuantities(amount, share);
  } catch {
    // Not a quantity (the annotation was edited on the host): show the host's own number.
    return amount;
  }
}

function pick(list: Record<string, string> | undefined, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of keys) if (list?.[key] !== undefined) out[key] = list[key];
  return out;
}
