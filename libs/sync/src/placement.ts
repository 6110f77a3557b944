import { dedicatedToleration, TAINT_KEY_DEDICATED, type IsolationSpec, type Toleration } from "@tenantplane/api";

/**
 * Where a tenant's host Pods run (TenantCluster spec.isolation): the host's shared nodes
 * (the profile's node selector and tolerations), or the host nodes reserved for the tenant:
 * the dedicated node selector merged in, and the toleration of the tenant's own
 * `tenantplane.io/dedicated=<tenant>:NoSchedule` taint. Private: on no host node at all; the
 * tenant's own scheduler places its Pods on nodes joined to its own API, and the planner
 * makes no new host copy (those made before stay until the migration evicts their Pods).
 */
export type Placement =
  | { mode: "Shared" }
  | { mode: "Dedicated"; nodeSelector: Readonly<Record<string, string>> }
  | { mode: "Private" };

/** Today's placement, and that of every tenant whose spec names none. */
export const SHARED_PLACEMENT: Placement = { mode: "Shared" };
/** The placement of a Private tenant: no host node. */
export const PRIVATE_PLACEMENT: Placement = { mode: "Private" };

/**
 * Annotation on a Dedicated host Pod copy naming the placement it was made for
 * (`Dedicated pool=team-a,zone=x`). A copy without it was made Shared. A host Pod's node
 * selector and tolerations cannot change once it is scheduled, so the planner keeps each copy
 * in the placement it was made for, and the migration driver reads this to know which copies
 * still run in the old one. Reserved: a tenant can never set it on its own Pod.
 */
export const ANNOTATION_PLACEMENT = "tenantplane.io/placement";

/**
 * Label on every virtual Node tenantplane makes in a tenant API (a host node mirrored there).
 * A tenant Node without it joined the tenant's own API (Private mode): tenantplane never
 * copies a Pod bound to one, nor touches the node.
 */
export const LABEL_VIRTUAL_NODE = "tenantplane.io/virtual-node";

/** Where a TenantCluster asks for its mode, for reasons. */
export const ISOLATION_MODE_FIELD = "TenantCluster spec.isolation.mode";
/** Where a TenantCluster's dedicated node selector is set, for reasons. */
export const DEDICATED_SELECTOR_FIELD = "TenantCluster spec.isolation.dedicated.nodeSelector";

/**
 * The placement as the annotation writes it: undefined for Shared (no annotation), `Private`,
 * else `Dedicated` and the node selector as sorted `key=value` pairs. Label keys and values
 * hold no space, comma or `=`, so the text reads back exactly ({@link parsePlacement}). No
 * host copy is ever made Private; the text exists so placements compare as text.
 */
export function placementText(placement: Placement): string | undefined {
  if (placement.mode === "Shared") return undefined;
  if (placement.mode === "Private") return "Private";
  const pairs = Object.entries(placement.nodeSelector)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`);
  return `Dedicated ${pairs.join(",")}`;
}

/** The placement a host copy's annotation names (absent: Shared); undefined when the text cannot be read. */
export function parsePlacement(text: string | undefined): Placement | undefined {
  if (text === undefined) return SHARED_PLACEMENT;
  if (text === "Private") return PRIVATE_PLACEMENT;
  const match = /^Dedicated (.*)$/.exec(text);
  if (match === null) return undefined;
  const nodeSelector: Record<string, string> = {};
  for (const pair of (match[1] ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) return undefined;
    nodeSelector[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { mode: "Dedicated", nodeSelector };
}

/** Whether two placements put Pods on the same nodes (same mode and, for Dedicated, the same selector). */
export function samePlacement(a: Placement, b: Placement): boolean {
  return placementText(a) === placementText(b);
}

/** One enforced node selector entry and the field that enforces it, for reasons. */
export interface EnforcedSelectorEntry {
  value: string;
  field: string;
}

/**
 * The node selector every host Pod gets under `placement`: the profile's entries
 * (`profileField`), and in Dedicated the dedicated selector's, which win on the same key
 * (the profile's selector names the shared nodes; the reservation names the tenant's own).
 */
export function enforcedNodeSelector(
  profile: Readonly<Record<string, string>>,
  placement: Placement | undefined,
  profileField: string,
): Map<string, EnforcedSelectorEntry> {
  const enforced = new Map<string, EnforcedSelectorEntry>();
  for (const [key, value] of Object.entries(profile)) enforced.set(key, { value, field: profileField });
  if (placement?.mode === "Dedicated") {
    for (const [key, value] of Object.entries(placement.nodeSelector)) {
      enforced.set(key, { value, field: DEDICATED_SELECTOR_FIELD });
    }
  }
  return enforced;
}

/** The tolerations a host Pod gets from its placement: in Dedicated, its own tenant's taint and nothing else. */
export function placementTolerations(placement: Placement | undefined, tenant: string): Toleration[] {
  return placement?.mode === "Dedicated" ? [{ ...dedicatedToleration(tenant) }] : [];
}

/**
 * Whether a toleration names the dedicated-node taint's key: tenantplane alone adds that
 * toleration (each tenant's own value), never a tenant Pod or a profile, so no Pod of one
 * tenant can land on the nodes reserved for another.
 */
export function isDedicatedToleration(toleration: { key?: unknown }): boolean {
  return toleration.key === TAINT_KEY_DEDICATED;
}

/** The placement a TenantCluster's parsed `spec.isolation` asks for (absent: Shared). */
export function placementOf(isolation: IsolationSpec | undefined): Placement {
  if (isolation?.mode === "Private") return PRIVATE_PLACEMENT;
  if (isolation?.mode !== "Dedicated") return SHARED_PLACEMENT;
  return { mode: "Dedicated", nodeSelector: { ...isolation.dedicated?.nodeSelector } };
}
