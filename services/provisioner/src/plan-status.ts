import {
  CONDITION_CONTROL_PLANE_READY,
  CONDITION_ISOLATION_APPLIED,
  type Condition,
  type ConditionStatus,
  type TenantClusterStatus,
  type TenantPhase,
} from "@tenantplane/api";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { API_SERVICE_NAME, STATEFULSET_NAME, endpointFor } from "./control-plane.js";
import { kubeconfigSecretRef } from "./kubeconfig.js";

/** Reasons the provisioner writes on its `ControlPlaneReady` condition. */
export const CONTROL_PLANE_REASONS = {
  /** The tenant API answered an authenticated readiness call. */
  ready: "Ready",
  /** The objects exist; the k3s pod is not ready yet. */
  waitingForPod: "WaitingForPod",
  /** Exposed through a load balancer that has no address yet, so no kubeconfig URL exists. */
  waitingForLoadBalancer: "WaitingForLoadBalancer",
  /** The pod is ready but the API did not answer through the admin kubeconfig. */
  apiServerUnreachable: "ApiServerUnreachable",
  /** The spec asks for a change Kubernetes cannot make to the existing control plane. */
  immutableFieldChanged: "ImmutableFieldChanged",
  /** The stored PKI Secret is missing entries or holds unusable material. */
  invalidPkiSecret: "InvalidPkiSecret",
} as const;

/**
 * Reasons that mean a tenant cannot progress until someone changes something; a condition
 * that is False with one of them puts the tenant in phase `Failed`.
 */
export const TERMINAL_REASONS: ReadonlySet<string> = new Set([
  CONTROL_PLANE_REASONS.immutableFieldChanged,
  CONTROL_PLANE_REASONS.invalidPkiSecret,
]);

/**
 * Conditions that must all be True for phase `Ready`: the tenant API is usable and its host
 * namespace is isolated. `Synced` reports per-object sync errors and does not gate the phase.
 */
export const PHASE_READY_CONDITIONS: readonly string[] = [CONDITION_CONTROL_PLANE_READY, CONDITION_ISOLATION_APPLIED];

/** The condition of the given type, if present. */
export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/**
 * The tenant's phase from its conditions: Terminating while deleting; Failed when a condition
 * is False for a terminal reason; Pending before the provisioner has reported; Ready when
 * every {@link PHASE_READY_CONDITIONS} entry is True; Provisioning otherwise.
 */
export function phaseFor(
  conditions: readonly Condition[] | undefined,
  options: { deleting?: boolean; terminalReasons?: ReadonlySet<string> } = {},
): TenantPhase {
  if (options.deleting) return "Terminating";
  const terminal = options.terminalReasons ?? TERMINAL_REASONS;
  if ((conditions ?? []).some((c) => c.status === "False" && terminal.has(c.reason))) return "Failed";
  if (!findCondition(conditions, CONDITION_CONTROL_PLANE_READY)) return "Pending";
  const ready = PHASE_READY_CONDITIONS.every((type) => findCondition(conditions, type)?.status === "True");
  return ready ? "Ready" : "Provisioning";
}

/** A condition before its transition time is decided. */
export interface ConditionUpdate {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  observedGeneration?: number;
}

/**
 * The condition to write: `update` stamped with `now` as lastTransitionTime, or with the
 * previous condition's time when the status did not change (as metav1.Condition requires).
 */
export function nextCondition(update: ConditionUpdate, previous: Condition | undefined, now: Date): Condition {
  const keep = previous !== undefined && previous.type === update.type && previous.status === update.status;
  return {
    type: update.type,
    status: update.status,
    ...(update.observedGeneration !== undefined ? { observedGeneration: update.observedGeneration } : {}),
    lastTransitionTime: keep ? previous.lastTransitionTime : toKubernetesTime(now),
    reason: update.reason,
    message: update.message,
  };
}

/** What the provisioner observed about one tenant's control plane in a reconcile pass. */
export type ControlPlaneObservation =
  | { state: "ready"; server: string }
  | { state: "waiting-for-pod"; readyReplicas: number }
  | { state: "waiting-for-load-balancer" }
  | { state: "api-unreachable"; error: string }
  | { state: "immutable-change"; reasons: readonly string[] }
  | { state: "invalid-pki"; error: string };

/** Turns an observation into the ControlPlaneReady status, reason and message. */
export function describeControlPlane(observation: ControlPlaneObservation): Omit<ConditionUpdate, "type"> {
  switch (observation.state) {
    case "ready":
      return {
        status: "True",
        reason: CONTROL_PLANE_REASONS.ready,
        message: `tenant API is ready at ${observation.server}`,
      };
    case "waiting-for-pod":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.waitingForPod,
        message: `waiting for StatefulSet ${STATEFULSET_NAME}: ${observation.readyReplicas}/1 pods ready`,
      };
    case "waiting-for-load-balancer":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.waitingForLoadBalancer,
        message: `waiting for the load balancer of Service ${API_SERVICE_NAME} to be assigned an address`,
      };
    case "api-unreachable":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.apiServerUnreachable,
        message: `the pod is ready but the tenant API did not answer /readyz: ${observation.error}`,
      };
    case "immutable-change":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.immutableFieldChanged,
        message: observation.reasons.join("; "),
      };
    case "invalid-pki":
      return { status: "False", reason: CONTROL_PLANE_REASONS.invalidPkiSecret, message: observation.error };
  }
}

/**
 * The ControlPlaneReady condition for an observation at `generation`, keeping the previous
 * transition time when the status is unchanged.
 */
export function controlPlaneReadyCondition(
  observation: ControlPlaneObservation,
  context: { generation: number; previous?: Condition | undefined; now: Date },
): Condition {
  return nextCondition(
    {
      type: CONDITION_CONTROL_PLANE_READY,
      observedGeneration: context.generation,
      ...describeControlPlane(observation),
    },
    context.previous,
    context.now,
  );
}

/** Inputs to {@link provisionerStatus}. */
export interface ProvisionerStatusInput {
  tenant: string;
  generation: number;
  /** The provisioner's freshly built ControlPlaneReady condition. */
  condition: Condition;
  /** The status as last read, whose other services' conditions decide the phase. */
  current?: TenantClusterStatus | undefined;
  deleting?: boolean;
  /** Set once the kubeconfig Secret has been written. */
  kubeconfigWritten?: boolean;
  externalEndpoint?: string | undefined;
}

/**
 * The status fields the provisioner owns, for a server-side apply under its own field manager:
 * phase, hostNamespace, endpoint, externalEndpoint, kubeconfigSecretRef, observedGeneration and
 * only its own condition (the list is keyed by type, so other services' conditions stay).
 */
export function provisionerStatus(input: ProvisionerStatusInput): TenantClusterStatus {
  const others = (input.current?.conditions ?? []).filter((c) => c.type !== input.condition.type);
  return {
    phase: phaseFor([...others, input.condition], { deleting: input.deleting ?? false }),
    hostNamespace: hostNamespaceFor(input.tenant),
    endpoint: endpointFor(input.tenant),
    ...(input.externalEndpoint !== undefined ? { externalEndpoint: input.externalEndpoint } : {}),
    ...(input.kubeconfigWritten ? { kubeconfigSecretRef: kubeconfigSecretRef(input.tenant) } : {}),
    observedGeneration: input.generation,
    conditions: [input.condition],
  };
}

// metav1.Time has second precision; writing milliseconds would make every read-back differ.
function toKubernetesTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}
