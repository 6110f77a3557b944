import type { EventInput } from "@tenantplane/kube";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { tenantRegarding } from "@tenantplane/service";
import { describeTeardownOutcome, type TeardownObservation } from "./plan-status.js";

/**
 * Reasons of the Normal Events the provisioner records on a TenantCluster at the milestones of
 * its life. Each is recorded once per transition; Warnings stay for what needs a person.
 */
export const LIFECYCLE_REASONS = {
  /** The tenant reached phase Ready: its API answered through the admin kubeconfig and its namespace is isolated. */
  ready: "Ready",
  /** The TenantCluster is being deleted and the provisioner began removing what it created. */
  teardownStarted: "TeardownStarted",
  /** Everything is removed; recorded right before the finalizer is released. */
  teardownFinished: "TeardownFinished",
} as const;

/** The Event saying the tenant became Ready, with the endpoints a client can use. */
export function readyEvent(tenant: string, uid: string | undefined, server: string, endpoint: string): EventInput {
  const inCluster = server === endpoint ? "" : ` (in the host cluster: ${endpoint})`;
  return {
    regarding: tenantRegarding(tenant, uid),
    type: "Normal",
    reason: LIFECYCLE_REASONS.ready,
    message: `tenant is Ready: its API answers at ${server}${inCluster} and host namespace ${hostNamespaceFor(tenant)} is isolated`,
  };
}

/** The Event saying the teardown began, and what it is about to remove. */
export function teardownStartedEvent(
  tenant: string,
  uid: string | undefined,
  namespace: string,
  plan: "delete-namespace" | "empty-namespace" | "nothing",
): EventInput {
  const what = {
    "delete-namespace": `deleting host namespace ${namespace} with the control plane and every host object of the tenant`,
    "empty-namespace": `removing tenantplane's objects from host namespace ${namespace}`,
    nothing: `no host namespace of this tenant to remove`,
  }[plan];
  return {
    regarding: tenantRegarding(tenant, uid),
    type: "Normal",
    reason: LIFECYCLE_REASONS.teardownStarted,
    message: `TenantCluster ${tenant} is being deleted: ${what}`,
  };
}

/** The Event saying the teardown is over, recorded while the TenantCluster still exists. */
export function teardownFinishedEvent(
  tenant: string,
  uid: string | undefined,
  observation: Extract<TeardownObservation, { state: "finished" }>,
  startedAt: string | undefined,
  now: Date,
): EventInput {
  const took = startedAt ? ` after ${Math.max(0, Math.round((now.getTime() - Date.parse(startedAt)) / 1000))} s` : "";
  return {
    regarding: tenantRegarding(tenant, uid),
    type: "Normal",
    reason: LIFECYCLE_REASONS.teardownFinished,
    message: `teardown finished${took}: ${describeTeardownOutcome(observation.namespace, observation.outcome)}; releasing the finalizer`,
  };
}
