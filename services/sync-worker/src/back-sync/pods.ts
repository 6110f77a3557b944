import { sameJson, type Json } from "./same-json.js";
import { REASON_SYNC_FAILED } from "../tenant-events.js";

/** The parts of a Pod back-sync reads; everything else is passed through untouched. */
export interface PodLike {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    deletionTimestamp?: string;
    ownerReferences?: unknown;
    [key: string]: unknown;
  };
  spec?: { nodeName?: string; [key: string]: unknown };
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * Status fields the host's kubelet owns and the tenant sees as they are. `qosClass` is not
 * among them: the tenant's API computed it from the tenant's spec and keeps it.
 */
export const MIRRORED_POD_STATUS = [
  "phase",
  "conditions",
  "message",
  "reason",
  "nominatedNodeName",
  "hostIP",
  "hostIPs",
  "podIP",
  "podIPs",
  "startTime",
  "initContainerStatuses",
  "containerStatuses",
  "ephemeralContainerStatuses",
  "resize",
  "resourceClaimStatuses",
] as const;

/** Reason on a tenant Pod whose host copy vanished without the tenant asking. */
export const REASON_HOST_POD_LOST = "HostPodDeleted";

/** Reason on a tenant Pod created with its own spec.nodeName: never copied, the host scheduler places host Pods. */
export const REASON_NODE_NAME_SET = "NodeNameSetInTenant";
const NODE_NAME_SET_MESSAGE =
  "spec.nodeName was set in the tenant: the host scheduler places every host Pod, so this Pod does not run (create it without spec.nodeName; steer it with nodeSelector or affinity)";

/** One write back-sync makes to the tenant for a Pod, in order. */
export type PodStep =
  /** Bind the tenant Pod (pods/binding) to the virtual node of this name, which must exist first. */
  | { action: "Bind"; node: string }
  /** Merge-patch the tenant Pod's status subresource with these fields (null clears one). */
  | { action: "Status"; patch: Record<string, Json> }
  /** Delete the tenant Pod with grace 0 (its uid as precondition), as a kubelet confirms a deletion. */
  | { action: "Delete"; reason: string };

/** What planning one tenant Pod looks at. */
export interface PodInput {
  /** The tenant Pod as the tenant cache holds it. */
  tenant: PodLike;
  /** Its host copy, or undefined when the host holds none. */
  host: PodLike | undefined;
  /** The host copy's last state before it disappeared, when it did (an eviction's condition is in it). */
  lastHost?: PodLike | undefined;
  /** The host listing is complete and current, so an absent copy is really gone. */
  hostListed: boolean;
  /** Why the host refused to create the copy, while it does (a published Fail). */
  syncFailure?: string | undefined;
  /**
   * The tenant Pod is bound to one of the tenant's own Nodes (joined to its API, not a virtual
   * node): that node's kubelet owns its status and its deletion, so back-sync never touches it.
   */
  onOwnNode?: boolean | undefined;
}

/**
 * The writes that make the tenant Pod tell the truth about its host copy:
 * - a host copy placed on a node binds the tenant Pod to that node's virtual node;
 * - the copy's status (phase, conditions, IPs, container states, start time) is mirrored;
 * - a tenant Pod being deleted whose copy is gone is deleted for good (the host honoured the grace period);
 * - a bound tenant Pod whose copy vanished otherwise (eviction, node loss, a manual delete)
 *   is marked Failed with the reason, never left Running, and its copy is not made again;
 * - a pending tenant Pod whose copy the host refused shows `PodScheduled=False` with reason
 *   SyncFailed and the host's words, as a scheduler would say why; the condition goes once the
 *   refusal ends (the copy's own conditions replace it when the copy exists).
 * Returns no steps when the tenant already shows what the host has, and never any for a Pod
 * bound to one of the tenant's own nodes (`onOwnNode`).
 */
export function planPod(input: PodInput): PodStep[] {
  const { tenant, host } = input;
  // Run by the tenant's own node: marking it Failed or deleting it would fight its kubelet.
  if (input.onOwnNode === true) return [];
  const deleting = tenant.metadata.deletionTimestamp !== undefined && tenant.metadata.deletionTimestamp !== null;
  if (host === undefined) {
    if (!input.hostListed) return [];
    if (deleting) return [{ action: "Delete", reason: "host copy deleted" }];
    if (!isBound(tenant) && !isTerminal(tenant)) {
      const patch = syncFailedPatch(tenant, input.syncFailure);
      return patch === undefined ? [] : [{ action: "Status", patch }];
    }
    if (!isBound(tenant) || isTerminal(tenant)) return [];
    return [{ action: "Status", patch: lostPodStatus(tenant, input.lastHost) }];
  }
  const steps: PodStep[] = [];
  const hostNode = host.spec?.nodeName;
  let tenantStatus = tenant.status ?? {};
  if (!isBound(tenant) && hostNode !== undefined && hostNode !== "" && !deleting) {
    steps.push({ action: "Bind", node: hostNode });
    tenantStatus = boundStatus(tenantStatus);
  }
  const patch = statusPatch(tenantStatus, host.status ?? {});
  if (patch !== undefined) steps.push({ action: "Status", patch });
  return steps;
}

/** The merge patch that makes `tenant`'s mirrored fields equal to `host`'s, or undefined when they are. */
export function statusPatch(
  tenant: Record<string, unknown>,
  host: Record<string, unknown>,
): Record<string, Json> | undefined {
  const patch: Record<string, Json> = {};
  for (const field of MIRRORED_POD_STATUS) {
    const want = host[field] as Json | undefined;
    const have = tenant[field] as Json | undefined;
    if (field === "conditions" ? sameConditions(want, have) : sameJson(want ?? null, have ?? null)) continue;
    patch[field] = want ?? null;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

/**
 * Whether two condition lists say the same, their timestamps aside: a condition whose times
 * alone differ (the tenant's binding stamped PodScheduled itself a moment apart from the host's
 * scheduler) costs no write; any other change writes the host's list, times included.
 */
function sameConditions(a: Json | undefined, b: Json | undefined): boolean {
  return sameJson(untimed(a), untimed(b));
}

function untimed(conditions: Json | undefined): Json {
  if (!Array.isArray(conditions)) return conditions ?? null;
  return conditions.map((c) => {
    if (c === null || typeof c !== "object" || Array.isArray(c)) return c;
    const { lastTransitionTime: _transition, lastProbeTime: _probe, ...rest } = c;
    return rest;
  });
}

/** The tenant Pod's status as its API leaves it after a binding: PodScheduled True (the binding sets it). */
/**
 * The tenant Pod as it is once bound to `node`: what a binding this worker made does to it,
 * for planning before the tenant watch has shown it (the API server sets the node and the
 * PodScheduled condition).
 */
export function asBound(pod: PodLike, node: string): PodLike {
  return { ...pod, spec: { ...pod.spec, nodeName: node }, status: boundStatus(pod.status ?? {}) };
}

function boundStatus(status: Record<string, unknown>): Record<string, unknown> {
  const others = conditionsOf(status).filter((c) => c["type"] !== "PodScheduled");
  return { ...status, conditions: [...others, { type: "PodScheduled", status: "True" }] };
}

/**
 * The merge patch that makes an uncopied tenant Pod's PodScheduled condition say why the host
 * refused it (`failure`), or take that back (`failure` undefined); undefined when it already says so.
 */
export function syncFailedPatch(
  tenant: PodLike,
  failure: string | undefined,
  now = new Date(),
): Record<string, Json> | undefined {
  const conditions = conditionsOf(tenant.status);
  const scheduled = conditions.find((c) => c["type"] === "PodScheduled");
  const others = conditions.filter((c) => c !== scheduled) as Json[];
  const ours = scheduled?.["reason"] === REASON_SYNC_FAILED;
  if (failure === undefined) return ours ? { conditions: others } : undefined;
  if (ours && scheduled["status"] === "False" && scheduled["message"] === failure) return undefined;
  const since = scheduled?.["status"] === "False" ? scheduled["lastTransitionTime"] : undefined;
  const condition: Record<string, Json> = {
    type: "PodScheduled",
    status: "False",
    reason: REASON_SYNC_FAILED,
    message: failure,
    lastTransitionTime: typeof since === "string" ? since : now.toISOString(),
  };
  return { conditions: [...others, condition] };
}

/**
 * The host scheduler's word on a copy it cannot place (its PodScheduled condition is False:
 * reason `Unschedulable` and a message naming what no node offers), or undefined.
 */
export function schedulingProblem(host: PodLike | undefined): { reason: string; message: string } | undefined {
  const scheduled = conditionsOf(host?.status).find((c) => c["type"] === "PodScheduled");
  if (scheduled?.["status"] !== "False") return undefined;
  return { reason: String(scheduled["reason"] ?? "Unschedulable"), message: String(scheduled["message"] ?? "") };
}

/** The Failed status of a bound tenant Pod whose host copy vanished, naming why when the copy said. */
export function lostPodStatus(tenant: PodLike, lastHost?: PodLike): Record<string, Json> {
  const now = new Date().toISOString();
  const disruption = conditionsOf(lastHost?.status).find((c) => c["type"] === "DisruptionTarget");
  const why =
    disruption === undefined
      ? "the host copy of this pod was deleted outside the tenant (node loss or a manual delete)"
      : `the host copy of this pod was deleted: ${String(disruption["reason"] ?? "")} ${String(disruption["message"] ?? "")}`.trim();
  let reason = disruption?.["reason"] === "EvictionByEvictionAPI" ? "Evicted" : REASON_HOST_POD_LOST;
  const previous = conditionsOf(tenant.status);
  // Created bound (its own spec.nodeName): no binding ever set PodScheduled, and no copy was made.
  const tenantBound = !previous.some((c) => c["type"] === "PodScheduled");
  if (tenantBound) reason = REASON_NODE_NAME_SET;
  const message = tenantBound ? NODE_NAME_SET_MESSAGE : why;
  const notReady = (type: string): Record<string, Json> => ({
    type,
    status: "False",
    reason: "PodFailed",
    lastTransitionTime: now,
  });
  const conditions: Json[] = [
    ...previous.filter((c) => !["Ready", "ContainersReady"].includes(String(c["type"]))).map((c) => c as Json),
    notReady("Ready"),
    notReady("ContainersReady"),
  ];
  const statuses = (field: string): Json | undefined => {
    const list = tenant.status?.[field];
    if (!Array.isArray(list)) return undefined;
    return list.map((s: Record<string, unknown>) => {
      const running = (s["state"] as Record<string, unknown> | undefined)?.["terminated"] === undefined;
      return {
        ...(s as Record<string, Json>),
        ready: false,
        ...(running
          ? {
              state: {
                terminated: {
                  exitCode: 137,
                  reason: "ContainerStatusUnknown",
                  message: "The container could not be located when the pod was deleted",
                  finishedAt: now,
                },
              },
            }
          : {}),
      } as Json;
    });
  };
  const patch: Record<string, Json> = { phase: "Failed", reason, message, conditions };
  for (const field of ["initContainerStatuses", "containerStatuses"]) {
    const list = statuses(field);
    if (list !== undefined) patch[field] = list;
  }
  return patch;
}

/** The Pod names a node. */
export function isBound(pod: PodLike): boolean {
  const node = pod.spec?.nodeName;
  return node !== undefined && node !== "";
}

/** The Pod has finished for good (Succeeded or Failed). */
export function isTerminal(pod: PodLike): boolean {
  const phase = pod.status?.["phase"];
  return phase === "Succeeded" || phase === "Failed";
}

/** The Pod's Ready condition is True. */
export function isReady(pod: PodLike | undefined): boolean {
  return conditionsOf(pod?.status).some((c) => c["type"] === "Ready" && c["status"] === "True");
}

function conditionsOf(status: Record<string, unknown> | undefined): Record<string, unknown>[] {
  const list = status?.["conditions"];
  return Array.isArray(list) ? (list as Record<string, unknown>[]) : [];
}
