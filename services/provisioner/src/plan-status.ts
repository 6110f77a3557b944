import {
  CONDITION_CONTROL_PLANE_READY,
  CONDITION_ISOLATION_APPLIED,
  REASON_NAME_HELD_BY_FOREIGN_OBJECT,
  type Condition,
  type TenantClusterStatus,
  type TenantPhase,
} from "@tenantplane/api";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { REASON_REJECTED_BY_API_SERVER, type ConditionInput } from "@tenantplane/service";
import { API_SERVICE_NAME, STATEFULSET_NAME, endpointFor } from "./control-plane.js";
import { kubeconfigSecretRef } from "./kubeconfig.js";

/** Reasons the provisioner writes on its `ControlPlaneReady` condition. */
export const CONTROL_PLANE_REASONS = {
  /** The tenant API answered an authenticated readiness call. */
  ready: "Ready",
  /** The objects exist; the k3s pod is not ready yet. */
  waitingForPod: "WaitingForPod",
  /**
   * Exposed through a load balancer that has no address yet: no kubeconfig URL exists, and the
   * control plane waits for it so its serving certificate names the address from the first start.
   */
  waitingForLoadBalancer: "WaitingForLoadBalancer",
  /** The pod is ready but the API did not answer through the admin kubeconfig. */
  apiServerUnreachable: "ApiServerUnreachable",
  /** The spec asks for a change Kubernetes cannot make to the existing control plane. */
  immutableFieldChanged: "ImmutableFieldChanged",
  /** The stored PKI Secret is missing entries or holds unusable material. */
  invalidPkiSecret: "InvalidPkiSecret",
  /** A name the control plane needs is held by an object tenantplane did not create for this tenant. */
  nameHeldByForeignObject: REASON_NAME_HELD_BY_FOREIGN_OBJECT,
  /** The control plane is not created until the isolation service reports the namespace isolated. */
  waitingForIsolation: "WaitingForIsolation",
  /** The isolation profile's quota or LimitRange would refuse the control-plane pod or its volume. */
  blockedByIsolationProfile: "BlockedByIsolationProfile",
  /** The TenantCluster is being deleted; the message says what the teardown waits for. */
  terminating: "Terminating",
  /** The teardown removed everything it had to; the finalizer is released next. */
  teardownFinished: "TeardownFinished",
} as const;

/**
 * Reasons that mean a tenant cannot progress until someone changes something; a condition
 * that is False with one of them puts the tenant in phase `Failed`.
 */
export const TERMINAL_REASONS: ReadonlySet<string> = new Set([
  CONTROL_PLANE_REASONS.immutableFieldChanged,
  CONTROL_PLANE_REASONS.invalidPkiSecret,
  CONTROL_PLANE_REASONS.nameHeldByForeignObject,
  CONTROL_PLANE_REASONS.blockedByIsolationProfile,
  // Any service's write refused by the API server: only a change of the spec or profile helps.
  REASON_REJECTED_BY_API_SERVER,
]);

/**
 * Conditions that must all be True for phase `Ready`: the tenant API is usable and its host
 * namespace is isolated. `Synced` reports per-object sync errors and does not gate the phase.
 */
export const PHASE_READY_CONDITIONS: readonly string[] = [CONDITION_CONTROL_PLANE_READY, CONDITION_ISOLATION_APPLIED];

/** What the phase rule reads from a condition; a written Condition or a ConditionInput both fit. */
export type PhaseSignal = Pick<Condition, "type" | "status" | "reason"> & { observedGeneration?: number | undefined };

/** The condition of the given type, if present. */
export function findCondition<C extends PhaseSignal>(
  conditions: readonly C[] | undefined,
  type: string,
): C | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/**
 * The tenant's phase from its conditions: Terminating while deleting; Failed when a condition
 * is False for a terminal reason; Pending before the provisioner has reported; Ready when
 * every {@link PHASE_READY_CONDITIONS} entry is True (and, given `generation`, was observed for
 * it: isolation applied to an older spec does not make the current one Ready); Provisioning
 * otherwise, which includes a tenant held in lockdown while its isolation profile is missing.
 */
export function phaseFor(
  conditions: readonly PhaseSignal[] | undefined,
  options: { deleting?: boolean; terminalReasons?: ReadonlySet<string>; generation?: number } = {},
): TenantPhase {
  if (options.deleting) return "Terminating";
  const terminal = options.terminalReasons ?? TERMINAL_REASONS;
  if ((conditions ?? []).some((c) => c.status === "False" && terminal.has(c.reason))) return "Failed";
  if (!findCondition(conditions, CONDITION_CONTROL_PLANE_READY)) return "Pending";
  const ready = PHASE_READY_CONDITIONS.every((type) =>
    isCurrentAndTrue(findCondition(conditions, type), options.generation),
  );
  return ready ? "Ready" : "Provisioning";
}

/**
 * True when the condition is True and was observed for `generation` (when both are known).
 * The control plane is created only once this holds for IsolationApplied.
 */
export function isCurrentAndTrue(condition: PhaseSignal | undefined, generation?: number): boolean {
  if (condition?.status !== "True") return false;
  return (
    generation === undefined || condition.observedGeneration === undefined || condition.observedGeneration >= generation
  );
}

/** What the provisioner observed about one tenant's control plane in a reconcile pass. */
export type ControlPlaneObservation =
  /** `join`: what keeps a Private tenant's join credential from being in place, said after the API's readiness. */
  | { state: "ready"; server: string; join?: string }
  | { state: "waiting-for-pod"; readyReplicas: number; pod?: string }
  | { state: "waiting-for-load-balancer" }
  | { state: "api-unreachable"; error: string }
  | { state: "immutable-change"; reasons: readonly string[] }
  | { state: "invalid-pki"; error: string }
  | { state: "foreign-object"; message: string }
  | { state: "waiting-for-isolation"; detail: string }
  | { state: "blocked-by-isolation"; source: string; rules: readonly string[] };

/** How long a new wording of a tenant API's unchanged failure waits before it is written. */
export const UNREACHABLE_REWORDING_HOLD_MS = 5 * 60_000;

/**
 * The ControlPlaneReady condition to write for a tenant API that still does not answer: the one
 * stored, as it is, when only the error's wording changed (a lookup that fails at once on one
 * probe and times out on the next) and `manager` last changed the status less than
 * UNREACHABLE_REWORDING_HOLD_MS ago, by the time the API server recorded for that write in
 * managedFields; `next` otherwise. Every rewording would be a status write, and a pass of every
 * service watching TenantClusters, per probe of every waiting tenant. A new reason, status or
 * generation is never held.
 */
export function heldUnreachableCondition(
  next: ConditionInput,
  tenant: {
    metadata?: { managedFields?: ReadonlyArray<{ manager?: string; subresource?: string; time?: Date | string }> };
    status?: TenantClusterStatus | undefined;
  },
  manager: string,
  nowMs: number,
): ConditionInput {
  if (next.reason !== CONTROL_PLANE_REASONS.apiServerUnreachable) return next;
  const stored = findCondition(tenant.status?.conditions, next.type);
  if (
    !stored ||
    stored.status !== next.status ||
    stored.reason !== next.reason ||
    stored.observedGeneration !== next.observedGeneration ||
    stored.message === next.message
  )
    return next;
  const written = tenant.metadata?.managedFields?.find(
    (f) => f.manager === manager && f.subresource === "status",
  )?.time;
  const age = nowMs - new Date(written ?? Number.NaN).getTime();
  return age >= 0 && age < UNREACHABLE_REWORDING_HOLD_MS ? { ...next, message: stored.message } : next;
}

/** How long a new tenant's first condition may wait for the isolation service's first report. */
export const ISOLATION_REPORT_GRACE_MS = 10_000;

/**
 * How long the report of `observation` on a brand-new tenant may wait (0: write it now).
 * Waiting for the isolation service's first report is the normal course of a tenant's first
 * seconds; saying so costs a status write, and a pass of every service that watches
 * TenantClusters, per new tenant: in a burst of them, as much as creating one of its objects.
 * So while neither service has reported on the tenant and it is younger than the grace, the
 * condition waits: isolation's report wakes the next pass, and a timer writes it once the
 * grace is over, so a stalled isolation service is still named.
 */
export function firstReportHoldMs(
  observation: ControlPlaneObservation,
  tenant: { metadata?: { creationTimestamp?: Date | string | undefined }; status?: TenantClusterStatus | undefined },
  nowMs: number,
): number {
  if (observation.state !== "waiting-for-isolation") return 0;
  const conditions = tenant.status?.conditions ?? [];
  if (conditions.some((c) => c.type === CONDITION_CONTROL_PLANE_READY || c.type === CONDITION_ISOLATION_APPLIED))
    return 0;
  const age = nowMs - new Date(tenant.metadata?.creationTimestamp ?? Number.NaN).getTime();
  return age >= 0 && age < ISOLATION_REPORT_GRACE_MS ? ISOLATION_REPORT_GRACE_MS - age : 0;
}

/** Observations a person must act on: each is also recorded as a Warning on the TenantCluster. */
export function needsAttention(observation: ControlPlaneObservation): boolean {
  return ["immutable-change", "invalid-pki", "foreign-object", "blocked-by-isolation"].includes(observation.state);
}

/** Turns an observation into the ControlPlaneReady status, reason and message. */
export function describeControlPlane(observation: ControlPlaneObservation): Omit<ConditionInput, "type"> {
  switch (observation.state) {
    case "ready":
      return {
        status: "True",
        reason: CONTROL_PLANE_REASONS.ready,
        message: `tenant API is ready at ${observation.server}` + (observation.join ? `; ${observation.join}` : ""),
      };
    case "waiting-for-pod":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.waitingForPod,
        message:
          `waiting for StatefulSet ${STATEFULSET_NAME}: ${observation.readyReplicas}/1 pods ready` +
          (observation.pod ? `; ${observation.pod}` : ""),
      };
    case "waiting-for-load-balancer":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.waitingForLoadBalancer,
        message:
          `waiting for the load balancer of Service ${API_SERVICE_NAME} to be assigned an address; ` +
          `the kubeconfig and the control plane are created for that address`,
      };
    case "api-unreachable":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.apiServerUnreachable,
        message: `the pod is ready but the tenant API did not answer GET /version: ${observation.error}`,
      };
    case "immutable-change":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.immutableFieldChanged,
        message: observation.reasons.join("; "),
      };
    case "invalid-pki":
      return { status: "False", reason: CONTROL_PLANE_REASONS.invalidPkiSecret, message: observation.error };
    case "foreign-object":
      return { status: "False", reason: CONTROL_PLANE_REASONS.nameHeldByForeignObject, message: observation.message };
    case "waiting-for-isolation":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.waitingForIsolation,
        message: `the control plane is created once the host namespace is isolated (IsolationApplied=True): ${observation.detail}`,
      };
    case "blocked-by-isolation":
      return {
        status: "False",
        reason: CONTROL_PLANE_REASONS.blockedByIsolationProfile,
        message: `${observation.source} would refuse the control plane: ${observation.rules.join("; ")}`,
      };
  }
}

/**
 * The ControlPlaneReady condition input for an observation of the spec at `generation`; the
 * shared status writer adds the transition time.
 */
export function controlPlaneReadyInput(observation: ControlPlaneObservation, generation: number): ConditionInput {
  return {
    type: CONDITION_CONTROL_PLANE_READY,
    observedGeneration: generation,
    ...describeControlPlane(observation),
  };
}

/** Inputs to {@link provisionerStatusFields}. */
export interface ProvisionerStatusInput {
  tenant: string;
  generation: number;
  /** The provisioner's new ControlPlaneReady condition. */
  condition: ConditionInput;
  /** The status as last read, whose other services' conditions decide the phase. */
  current?: TenantClusterStatus | undefined;
  deleting?: boolean;
  /** Set once the kubeconfig Secret has been written. */
  kubeconfigWritten?: boolean;
  /** When the admin kubeconfig's client certificate expires, once one is written. */
  kubeconfigExpiresAt?: Date | undefined;
  externalEndpoint?: string | undefined;
}

/**
 * The status fields besides conditions that the provisioner owns, for a server-side apply
 * under its own field manager: phase (judged with the new condition in place of the old),
 * hostNamespace, endpoint, externalEndpoint and kubeconfigSecretRef once they exist, and
 * observedGeneration. Fields left out are released, so a vanished address disappears.
 */
export function provisionerStatusFields(input: ProvisionerStatusInput): Omit<TenantClusterStatus, "conditions"> {
  const others = (input.current?.conditions ?? []).filter((c) => c.type !== input.condition.type);
  return {
    phase: phaseFor([...others, input.condition], { deleting: input.deleting ?? false, generation: input.generation }),
    hostNamespace: hostNamespaceFor(input.tenant),
    endpoint: endpointFor(input.tenant),
    ...(input.externalEndpoint !== undefined ? { externalEndpoint: input.externalEndpoint } : {}),
    ...(input.kubeconfigWritten ? { kubeconfigSecretRef: kubeconfigSecretRef(input.tenant) } : {}),
    ...(input.kubeconfigWritten && input.kubeconfigExpiresAt
      ? { kubeconfigExpiresAt: input.kubeconfigExpiresAt.toISOString() }
      : {}),
    observedGeneration: input.generation,
  };
}

/** Namespace condition types that say what keeps a terminating namespace alive. */
const NAMESPACE_DELETION_CONDITIONS = [
  "NamespaceContentRemaining",
  "NamespaceFinalizersRemaining",
  "NamespaceDeletionContentFailure",
  "NamespaceDeletionDiscoveryFailure",
  "NamespaceDeletionGroupVersionParsingFailure",
];

/** The part of a Namespace that tells how far its deletion got. */
export interface NamespaceProgress {
  metadata?: { name?: string; deletionTimestamp?: Date | string | undefined } | undefined;
  status?: { conditions?: ReadonlyArray<{ type?: string; status?: string; message?: string }> } | undefined;
}

/**
 * What a terminating host namespace still waits for, from the namespace controller's own
 * conditions (remaining content, finalizers, failures), e.g. `Some resources are remaining:
 * pods. has 1 resource instances`; a general sentence before the controller has reported.
 */
export function namespaceDeletionProgress(ns: NamespaceProgress): string {
  const reported = (ns.status?.conditions ?? [])
    .filter((c) => c.status === "True" && NAMESPACE_DELETION_CONDITIONS.includes(c.type ?? "") && c.message)
    .map((c) => c.message!);
  return reported.length > 0 ? reported.join("; ") : "the namespace controller is removing its content";
}

/** How far a tenant's teardown got in one pass. */
export type TeardownObservation =
  /** The host namespace is being deleted; `progress` says what it still holds. */
  | { state: "deleting-namespace"; namespace: string; progress: string }
  /** Nothing of the tenant is left to wait for; `outcome` says what happened to the namespace. */
  | { state: "finished"; namespace: string; outcome: "deleted" | "kept" | "not-ours" | "absent" };

/** Inputs to {@link teardownStatus}. */
export interface TeardownStatusInput {
  tenant: string;
  generation: number;
  /** The status as last read: its endpoint, kubeconfig and expiry stay while the namespace does. */
  current?: TenantClusterStatus | undefined;
  observation: TeardownObservation;
}

/**
 * The ControlPlaneReady condition and provisioner status fields of a tenant being deleted.
 * Phase is Terminating throughout. While the host namespace exists, hostNamespace, endpoint,
 * externalEndpoint and the kubeconfig reference stay as they were, because they still name
 * real objects, and the condition says what the teardown waits for; once the teardown has
 * finished they are released, right before the finalizer is.
 */
export function teardownStatus(input: TeardownStatusInput): {
  condition: ConditionInput;
  fields: Omit<TenantClusterStatus, "conditions">;
} {
  const { observation, current } = input;
  const base = { phase: "Terminating" as const, observedGeneration: input.generation };
  if (observation.state === "finished") {
    return {
      condition: {
        type: CONDITION_CONTROL_PLANE_READY,
        status: "False",
        reason: CONTROL_PLANE_REASONS.teardownFinished,
        message: describeTeardownOutcome(observation.namespace, observation.outcome),
        observedGeneration: input.generation,
      },
      fields: base,
    };
  }
  return {
    condition: {
      type: CONDITION_CONTROL_PLANE_READY,
      status: "False",
      reason: CONTROL_PLANE_REASONS.terminating,
      message: `waiting for host namespace ${observation.namespace} to be deleted: ${observation.progress}`,
      observedGeneration: input.generation,
    },
    fields: {
      ...base,
      hostNamespace: hostNamespaceFor(input.tenant),
      endpoint: endpointFor(input.tenant),
      ...(current?.externalEndpoint !== undefined ? { externalEndpoint: current.externalEndpoint } : {}),
      ...(current?.kubeconfigSecretRef !== undefined ? { kubeconfigSecretRef: current.kubeconfigSecretRef } : {}),
      ...(current?.kubeconfigExpiresAt !== undefined ? { kubeconfigExpiresAt: current.kubeconfigExpiresAt } : {}),
    },
  };
}

/** One sentence on what the teardown did with the host namespace. */
export function describeTeardownOutcome(
  namespace: string,
  outcome: Extract<TeardownObservation, { state: "finished" }>["outcome"],
): string {
  switch (outcome) {
    case "deleted":
      return `host namespace ${namespace} and everything in it are deleted`;
    case "kept":
      return `tenantplane's objects are removed from host namespace ${namespace}, which is kept for the objects tenantplane did not create`;
    case "not-ours":
      return `host namespace ${namespace} is not this tenant's and was left untouched`;
    case "absent":
      return `there was no host namespace ${namespace} to remove`;
  }
}

const TEARDOWN_OUTCOMES = ["deleted", "kept", "not-ours", "absent"] as const;

/**
 * What became of a host namespace that is no longer there, judged by the ControlPlaneReady
 * condition an earlier pass wrote: deleted when that pass was waiting for its deletion, the
 * outcome already reported when the teardown had finished (a pass that died before releasing
 * the finalizer), absent otherwise.
 */
export function outcomeWithoutNamespace(
  namespace: string,
  previous: Pick<Condition, "reason" | "message"> | undefined,
): Extract<TeardownObservation, { state: "finished" }>["outcome"] {
  if (previous?.reason === CONTROL_PLANE_REASONS.terminating) return "deleted";
  if (previous?.reason === CONTROL_PLANE_REASONS.teardownFinished) {
    return TEARDOWN_OUTCOMES.find((o) => describeTeardownOutcome(namespace, o) === previous.message) ?? "absent";
  }
  return "absent";
}
