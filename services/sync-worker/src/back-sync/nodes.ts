import { LABEL_MANAGED_BY, MANAGED_BY } from "@tenantplane/mapping";
import { LABEL_VIRTUAL_NODE } from "@tenantplane/sync";
import { isBound, isTerminal, type PodLike } from "./pods.js";
import { sameJson, type Json } from "./same-json.js";

/** Label on every virtual Node tenantplane made in a tenant API; nodes without it are never touched. */
export { LABEL_VIRTUAL_NODE };

/**
 * Taint on every virtual Node: a tenant scheduler (k3s runs one) must never place a Pod on
 * it, since only the host decides where a Pod runs; back-sync binds through pods/binding,
 * which no taint stops.
 */
export const VIRTUAL_NODE_TAINT = { key: LABEL_VIRTUAL_NODE, value: "true", effect: "NoSchedule" } as const;

/** Host node labels a tenant may see: placement facts, nothing about the host's own workloads. */
const SAFE_LABELS = [
  "kubernetes.io/hostname",
  "kubernetes.io/os",
  "kubernetes.io/arch",
  "beta.kubernetes.io/os",
  "beta.kubernetes.io/arch",
  "node.kubernetes.io/instance-type",
  "beta.kubernetes.io/instance-type",
  "topology.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/zone",
];

/** nodeInfo fields a tenant may see (`kubectl get nodes` shows the version). */
const SAFE_NODE_INFO = ["architecture", "operatingSystem", "kubeletVersion", "containerRuntimeVersion"];

/** The parts of a Node back-sync reads. */
export interface NodeLike {
  metadata: { name: string; labels?: Record<string, string>; uid?: string; [key: string]: unknown };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The virtual Node that mirrors `host` in a tenant API: name, safe labels, capacity, Ready, addresses. */
export function virtualNode(host: NodeLike): NodeLike {
  const labels: Record<string, string> = {};
  for (const key of SAFE_LABELS) {
    const value = host.metadata.labels?.[key];
    if (value !== undefined) labels[key] = value;
  }
  labels[LABEL_MANAGED_BY] = MANAGED_BY;
  labels[LABEL_VIRTUAL_NODE] = "true";
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: host.metadata.name, labels },
    spec: { taints: [{ ...VIRTUAL_NODE_TAINT }] },
    status: virtualNodeStatus(host),
  };
}

/** The status a virtual Node shows for `host`: capacity, allocatable, the Ready condition, addresses, versions. */
export function virtualNodeStatus(host: NodeLike): Record<string, Json> {
  const status = host.status ?? {};
  const ready = (status["conditions"] as Record<string, Json>[] | undefined)?.find((c) => c["type"] === "Ready");
  const addresses = ((status["addresses"] as Record<string, Json>[] | undefined) ?? []).filter(
    (a) => a["type"] === "InternalIP" || a["type"] === "Hostname",
  );
  const info = (status["nodeInfo"] ?? {}) as Record<string, Json>;
  const nodeInfo: Record<string, Json> = {};
  for (const key of SAFE_NODE_INFO) nodeInfo[key] = info[key] ?? "";
  return {
    capacity: (status["capacity"] ?? {}) as Json,
    allocatable: (status["allocatable"] ?? status["capacity"] ?? {}) as Json,
    conditions: [
      {
        type: "Ready",
        status: (ready?.["status"] as string | undefined) ?? "Unknown",
        reason: (ready?.["reason"] as string | undefined) ?? "HostNodeStatusUnknown",
        message: (ready?.["message"] as string | undefined) ?? "the host node reports no Ready condition",
        lastTransitionTime: (ready?.["lastTransitionTime"] as string | undefined) ?? new Date().toISOString(),
        lastHeartbeatTime: new Date().toISOString(),
      },
    ],
    addresses,
    nodeInfo,
  };
}

/** A virtual Node's status differs from what the host node shows (heartbeat times aside). */
export function nodeStatusDiffers(current: NodeLike, host: NodeLike): boolean {
  const strip = (status: Record<string, unknown>) => ({
    ...status,
    conditions: ((status["conditions"] as Record<string, unknown>[] | undefined) ?? [])
      .filter((c) => c["type"] === "Ready")
      .map((c) => ({ ...c, lastHeartbeatTime: undefined, lastTransitionTime: undefined })),
    nodeInfo: Object.fromEntries(
      SAFE_NODE_INFO.map((k) => [k, ((status["nodeInfo"] ?? {}) as Record<string, unknown>)[k] ?? ""]),
    ),
    addresses: status["addresses"] ?? [],
    daemonEndpoints: undefined,
    images: undefined,
  });
  const want = virtualNodeStatus(host);
  return !sameJson(strip(want), strip(pick(current.status ?? {}, Object.keys(want))));
}

/** What the node pass does to a tenant's virtual Nodes. */
export interface NodePlan {
  /** Virtual Nodes to create (a host copy of a tenant Pod is placed on a host node the tenant has no Node for). */
  create: NodeLike[];
  /** Virtual Nodes whose status no longer matches their host node: name and new status. */
  updateStatus: { name: string; status: Record<string, Json> }[];
  /** Virtual Nodes no host copy is placed on and no live tenant Pod is bound to any more. */
  delete: NodeLike[];
}

/** What the node pass looks at. */
export interface NodeInput {
  /** Host nodes by name. */
  hostNode(name: string): NodeLike | undefined;
  /** Every Node in the tenant API (only those labelled {@link LABEL_VIRTUAL_NODE} are considered). */
  tenantNodes: readonly NodeLike[];
  /** Every tenant Pod. */
  tenantPods: readonly PodLike[];
  /** Every host copy of the tenant's Pods (sync copies only, never the tenant's control-plane pod). */
  hostPods: readonly PodLike[];
}

/**
 * Which host nodes a tenant may see is decided by the host alone: a virtual Node is created,
 * and follows its host node's status, only while a host copy of one of the tenant's Pods is
 * placed there (the copy's `spec.nodeName`, which the host scheduler wrote: the sync planner
 * strips the tenant's own). A tenant Pod's `spec.nodeName` is the tenant's to write (a Pod
 * created bound, or a Node object it made itself and labelled as ours), so it never makes a
 * virtual Node nor refreshes one: otherwise naming any host node would mirror its address,
 * zone, instance type and kubelet version into the tenant.
 *
 * A live tenant Pod bound to an existing virtual Node only keeps that node from being
 * deleted: its host copy just vanished (back-sync is about to mark it Failed), and a node
 * deleted under a bound Pod would have the tenant's pod garbage collector delete the Pod
 * before the tenant sees why it failed. A host node that no longer exists keeps its virtual
 * Node until the copies placed there are gone, shown as not Ready.
 */
export function planNodes(input: NodeInput): NodePlan {
  const used = new Set<string>();
  for (const pod of input.hostPods) {
    const node = pod.spec?.nodeName;
    if (node !== undefined && node !== "") used.add(node);
  }
  const kept = new Set<string>();
  for (const pod of input.tenantPods) if (isBound(pod) && !isTerminal(pod)) kept.add(pod.spec!.nodeName!);
  const virtual = new Map(
    input.tenantNodes
      .filter((n) => n.metadata.labels?.[LABEL_VIRTUAL_NODE] === "true")
      .map((n) => [n.metadata.name, n]),
  );
  const foreign = new Set(input.tenantNodes.map((n) => n.metadata.name).filter((name) => !virtual.has(name)));
  const plan: NodePlan = { create: [], updateStatus: [], delete: [] };
  for (const name of [...used].sort()) {
    if (foreign.has(name)) continue;
    const host = input.hostNode(name) ?? goneHostNode(name);
    const current = virtual.get(name);
    if (current === undefined) plan.create.push(virtualNode(host));
    else if (nodeStatusDiffers(current, host)) plan.updateStatus.push({ name, status: virtualNodeStatus(host) });
  }
  for (const [name, node] of virtual) if (!used.has(name) && !kept.has(name)) plan.delete.push(node);
  return plan;
}

function goneHostNode(name: string): NodeLike {
  return {
    metadata: { name },
    status: {
      conditions: [
        {
          type: "Ready",
          status: "Unknown",
          reason: "HostNodeGone",
          message: "the host node running this node's pods no longer exists",
          lastTransitionTime: new Date(0).toISOString(),
        },
      ],
    },
  };
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, obj[k]]));
}
