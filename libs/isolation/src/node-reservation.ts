import {
  TAINT_EFFECT_DEDICATED,
  TAINT_KEY_DEDICATED,
  IsolationSpecSchema,
  dedicatedNodeSelectorOf,
  dedicatedTaint,
  isValidTenantName,
  type Taint,
} from "@tenantplane/api";

// Reserving host nodes for Dedicated tenants. The taint on a node is the record of whom it is
// reserved for: whoever holds it keeps it, and a node two tenants' selectors match is reserved
// for neither newcomer. Everything here is pure; the isolation service reads the nodes and
// TenantClusters, and writes what the plan says, one node at a time.

/** What planning needs of a host node. */
export interface NodeView {
  name: string;
  labels: Readonly<Record<string, string>>;
  taints: readonly Taint[];
}

/** A TenantCluster that asks for Dedicated (and is not being deleted), with its node selector. */
export interface DedicatedTenant {
  name: string;
  nodeSelector: Readonly<Record<string, string>>;
}

/** A node the tenant's selector matches that it cannot have, and who else claims it. */
export interface NodeConflict {
  node: string;
  /** Every tenant claiming the node, this one included, in name order. */
  tenants: string[];
  /** The tenant the node is reserved for (its taint says so), if any; otherwise it is reserved for none. */
  holder?: string | undefined;
}

/** What one tenant's pass does to the host nodes, and what it reports. */
export interface ReservationPlan {
  /** Nodes to taint for the tenant now, in name order. */
  reserve: string[];
  /** Nodes whose taint for the tenant goes, in name order. */
  release: string[];
  /** Nodes reserved for the tenant once the plan is carried out, in name order. */
  reserved: string[];
  /** Matched nodes the tenant cannot have, in node order. */
  conflicts: NodeConflict[];
  /** How many nodes the selector matches (0 without a selector). */
  matched: number;
}

/** Whether `labels` carry every pair of `selector` (an empty selector matches nothing: it would reserve every node). */
export function matchesSelector(
  labels: Readonly<Record<string, string>>,
  selector: Readonly<Record<string, string>>,
): boolean {
  const pairs = Object.entries(selector);
  return pairs.length > 0 && pairs.every(([key, value]) => labels[key] === value);
}

/** Whether `taint` is the one tenantplane puts on a node reserved for `tenant`. */
export function isDedicatedTaintOf(taint: Taint, tenant: string): boolean {
  return taint.key === TAINT_KEY_DEDICATED && taint.value === tenant && taint.effect === TAINT_EFFECT_DEDICATED;
}

/**
 * The tenants a node is reserved for: the values of its `tenantplane.io/dedicated` taints, of
 * any effect (a hand-made NoExecute one reserves the node as well), in name order.
 */
export function holdersOf(node: Pick<NodeView, "taints">): string[] {
  const values = node.taints.filter((t) => t.key === TAINT_KEY_DEDICATED).map((t) => t.value ?? "");
  return [...new Set(values)].sort();
}

/**
 * What `tenant`'s pass does: with a selector (the tenant is Dedicated) every matching node
 * nobody else holds or claims is tainted for it, a matching node it already holds stays
 * reserved whoever else claims it (the other tenant is the newcomer), and a matching node held
 * by another tenant, or claimed by another Dedicated tenant while nobody holds it, is a
 * conflict and left untouched. Without a selector (Shared, being deleted, gone) every node
 * carrying its taint is released. A node that stops matching is released. Only the exact
 * taint `tenantplane.io/dedicated=<tenant>:NoSchedule` is ever added or removed.
 */
export function planReservation(
  tenant: string,
  nodeSelector: Readonly<Record<string, string>> | undefined,
  others: readonly DedicatedTenant[],
  nodes: readonly NodeView[],
): ReservationPlan {
  const plan: ReservationPlan = { reserve: [], release: [], reserved: [], conflicts: [], matched: 0 };
  const rivals = others.filter((o) => o.name !== tenant);
  for (const node of [...nodes].sort((a, b) => compare(a.name, b.name))) {
    const ours = node.taints.some((t) => isDedicatedTaintOf(t, tenant));
    if (!nodeSelector || !matchesSelector(node.labels, nodeSelector)) {
      if (ours) plan.release.push(node.name);
      continue;
    }
    plan.matched++;
    const otherHolders = holdersOf(node).filter((h) => h !== tenant);
    if (otherHolders.length > 0) {
      plan.conflicts.push({ node: node.name, tenants: [tenant, ...otherHolders].sort(), holder: otherHolders[0] });
      continue;
    }
    if (ours) {
      plan.reserved.push(node.name);
      continue;
    }
    const claimants = rivals.filter((r) => matchesSelector(node.labels, r.nodeSelector)).map((r) => r.name);
    if (claimants.length > 0) {
      plan.conflicts.push({ node: node.name, tenants: [tenant, ...claimants].sort() });
      continue;
    }
    plan.reserve.push(node.name);
    plan.reserved.push(node.name);
  }
  plan.reserved.sort(compare);
  return plan;
}

/** `taints` with the tenant's dedicated taint added (once) or removed; every other taint kept as it is, in order. */
export function withDedicatedTaint(taints: readonly Taint[], tenant: string, present: boolean): Taint[] {
  const others = taints.filter((t) => !isDedicatedTaintOf(t, tenant));
  return present ? [...others, dedicatedTaint(tenant)] : others;
}

/** `k=v,k2=v2` in key order, as `kubectl get nodes -l` takes it. */
export function describeSelector(selector: Readonly<Record<string, string>>): string {
  return Object.keys(selector)
    .sort()
    .map((key) => `${key}=${selector[key]}`)
    .join(",");
}

const LISTED_NODES = 20;

/** Node names for a message: the first 20, then how many more. */
export function listNodes(names: readonly string[]): string {
  const shown = names.slice(0, LISTED_NODES).join(", ");
  return names.length > LISTED_NODES ? `${shown} and ${names.length - LISTED_NODES} more` : shown;
}

/** One sentence per conflicting node, naming every tenant that claims it and whom it stays reserved for. */
export function describeConflicts(conflicts: readonly NodeConflict[]): string {
  return conflicts
    .map((c) => {
      const who = c.tenants.map((t) => `TenantCluster ${t}`).join(" and ");
      const outcome = c.holder ? `stays reserved for ${c.holder}, which held it first` : "is reserved for neither";
      return `node ${c.node} is matched by the spec.isolation.dedicated.nodeSelector of ${who} and ${outcome}.`;
    })
    .join(" ");
}

/** The NodesReserved condition of a Dedicated tenant after its plan was carried out. */
export function reservationCondition(
  tenant: string,
  nodeSelector: Readonly<Record<string, string>>,
  plan: Pick<ReservationPlan, "reserved" | "conflicts" | "matched">,
): { status: "True" | "False"; reason: string; message: string } {
  const selector = describeSelector(nodeSelector);
  const taint = `${TAINT_KEY_DEDICATED}=${tenant}:${TAINT_EFFECT_DEDICATED}`;
  if (plan.matched === 0) {
    return {
      status: "False",
      reason: "NoMatchingNodes",
      message:
        `no host node matches spec.isolation.dedicated.nodeSelector ${selector}: label the nodes to reserve ` +
        `(kubectl label node <node> ${selector.replaceAll(",", " ")}) or change the selector; no node is reserved for ${tenant}.`,
    };
  }
  const reserved =
    plan.reserved.length > 0
      ? `${count(plan.reserved.length)} reserved for ${tenant} (tainted ${taint}): ${listNodes(plan.reserved)}.`
      : `no node is reserved for ${tenant}.`;
  if (plan.conflicts.length > 0) {
    return {
      status: "False",
      reason: "NodeConflict",
      message:
        `${describeConflicts(plan.conflicts)} Change one of the selectors or the nodes' labels so that each node is ` +
        `matched by one Dedicated tenant; ${reserved}`,
    };
  }
  return {
    status: "True",
    reason: "Reserved",
    message: `${reserved[0]?.toUpperCase()}${reserved.slice(1)} Selector: ${selector}.`,
  };
}

function count(n: number): string {
  return n === 1 ? "1 host node" : `${n} host nodes`;
}

/**
 * The tenants whose reservation a change of a host node may affect: those a dedicated taint on
 * it names (before or after) and the Dedicated tenants whose selector matches it (before or
 * after). Nothing when neither its labels nor its dedicated taints changed (a kubelet's
 * heartbeat, a status update): those cost no pass.
 */
export function tenantsAffectedByNode(
  before: NodeView | undefined,
  after: NodeView | undefined,
  dedicated: readonly DedicatedTenant[],
): string[] {
  if (!reservationViewChanged(before, after)) return [];
  const out = new Set<string>();
  for (const node of [before, after]) {
    if (!node) continue;
    for (const holder of holdersOf(node)) if (isValidTenantName(holder)) out.add(holder);
    for (const t of dedicated) if (matchesSelector(node.labels, t.nodeSelector)) out.add(t.name);
  }
  return [...out].sort();
}

/** Whether a node's change touched what reservations read: its labels or its dedicated taints (or it came or went). */
export function reservationViewChanged(before: NodeView | undefined, after: NodeView | undefined): boolean {
  return !before || !after || !sameReservationView(before, after);
}

function sameReservationView(a: NodeView, b: NodeView): boolean {
  const dedicatedTaints = (n: NodeView) =>
    JSON.stringify(n.taints.filter((t) => t.key === TAINT_KEY_DEDICATED).map((t) => [t.value, t.effect]));
  const labels = (n: NodeView) =>
    JSON.stringify(
      Object.keys(n.labels)
        .sort()
        .map((k) => [k, n.labels[k]]),
    );
  return dedicatedTaints(a) === dedicatedTaints(b) && labels(a) === labels(b);
}

/** Reads a NodeView from a raw Node without trusting its shape. */
export function nodeViewOf(obj: unknown): NodeView | undefined {
  const node = obj as { metadata?: { name?: unknown; labels?: unknown }; spec?: { taints?: unknown } } | undefined;
  const name = node?.metadata?.name;
  if (typeof name !== "string" || name === "") return undefined;
  const labels = isStringMap(node?.metadata?.labels) ? node.metadata.labels : {};
  const taints = Array.isArray(node?.spec?.taints)
    ? (node.spec.taints as unknown[]).filter(
        (t): t is Taint =>
          typeof t === "object" &&
          t !== null &&
          typeof (t as Taint).key === "string" &&
          typeof (t as Taint).effect === "string",
      )
    : [];
  return { name, labels, taints };
}

function isStringMap(value: unknown): value is Record<string, string> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === "string")
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The Dedicated tenants among raw TenantClusters (as a cache holds them): each one whose
 * spec.isolation parses, asks for Dedicated with a selector, and is not being deleted.
 */
export function dedicatedTenantsOf(tenantClusters: readonly unknown[]): DedicatedTenant[] {
  const out: DedicatedTenant[] = [];
  for (const raw of tenantClusters) {
    const tc = raw as { metadata?: { name?: unknown; deletionTimestamp?: unknown }; spec?: { isolation?: unknown } };
    const name = tc?.metadata?.name;
    if (typeof name !== "string" || tc.metadata?.deletionTimestamp) continue;
    const parsed = IsolationSpecSchema.safeParse(tc.spec?.isolation);
    if (!parsed.success) continue;
    const nodeSelector = dedicatedNodeSelectorOf({ isolation: parsed.data });
    if (nodeSelector && Object.keys(nodeSelector).length > 0) out.push({ name, nodeSelector });
  }
  return out.sort((a, b) => compare(a.name, b.name));
}
