import type { Condition } from "@tenantplane/api";
import { ConditionSchema, TenantClusterStatusSchema } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import {
  CONTROL_PLANE_REASONS,
  controlPlaneReadyCondition,
  describeControlPlane,
  findCondition,
  nextCondition,
  phaseFor,
  provisionerStatus,
  type ControlPlaneObservation,
} from "./plan-status.js";

const T0 = new Date("2026-03-01T12:00:00.123Z");
const T1 = new Date("2026-03-01T12:05:00.456Z");

function condition(type: string, status: Condition["status"], reason = "Whatever"): Condition {
  return { type, status, reason, message: "", lastTransitionTime: "2026-03-01T11:00:00Z" };
}

describe("phaseFor", () => {
  it("is Pending before the provisioner reports", () => {
    expect(phaseFor(undefined)).toBe("Pending");
    expect(phaseFor([condition("IsolationApplied", "True")])).toBe("Pending");
  });

  it("is Provisioning until both the control plane and isolation are True", () => {
    expect(phaseFor([condition("ControlPlaneReady", "False", "WaitingForPod")])).toBe("Provisioning");
    expect(phaseFor([condition("ControlPlaneReady", "True")])).toBe("Provisioning");
    expect(
      phaseFor([condition("ControlPlaneReady", "True"), condition("IsolationApplied", "Unknown")]),
    ).toBe("Provisioning");
  });

  it("is Ready when the control plane and isolation are True, whatever Synced says", () => {
    const ready = [condition("ControlPlaneReady", "True"), condition("IsolationApplied", "True")];
    expect(phaseFor(ready)).toBe("Ready");
    expect(phaseFor([...ready, condition("Synced", "False", "ObjectErrors")])).toBe("Ready");
  });

  it("is Failed when any condition is False for a terminal reason", () => {
    expect(phaseFor([condition("ControlPlaneReady", "False", "ImmutableFieldChanged")])).toBe("Failed");
    expect(phaseFor([condition("ControlPlaneReady", "False", "InvalidPkiSecret")])).toBe("Failed");
    const custom = new Set(["ProfileNotFound"]);
    expect(
      phaseFor([condition("ControlPlaneReady", "True"), condition("IsolationApplied", "False", "ProfileNotFound")], {
        terminalReasons: custom,
      }),
    ).toBe("Failed");
  });

  it("is Terminating while deleting, before anything else", () => {
    expect(phaseFor([condition("ControlPlaneReady", "False", "ImmutableFieldChanged")], { deleting: true })).toBe(
      "Terminating",
    );
  });
});

describe("nextCondition", () => {
  const update = { type: "ControlPlaneReady", status: "False" as const, reason: "WaitingForPod", message: "m" };

  it("stamps a new condition with the current time at second precision", () => {
    expect(nextCondition(update, undefined, T0)).toEqual({
      type: "ControlPlaneReady",
      status: "False",
      lastTransitionTime: "2026-03-01T12:00:00Z",
      reason: "WaitingForPod",
      message: "m",
    });
  });

  it("keeps the transition time while the status is unchanged, even if reason and message move", () => {
    const first = nextCondition(update, undefined, T0);
    const second = nextCondition({ ...update, reason: "ApiServerUnreachable", message: "x" }, first, T1);
    expect(second.lastTransitionTime).toBe("2026-03-01T12:00:00Z");
    expect(second.reason).toBe("ApiServerUnreachable");
  });

  it("moves the transition time when the status changes", () => {
    const first = nextCondition(update, undefined, T0);
    const second = nextCondition({ ...update, status: "True", reason: "Ready" }, first, T1);
    expect(second.lastTransitionTime).toBe("2026-03-01T12:05:00Z");
  });

  it("carries observedGeneration when given and produces a schema-valid condition", () => {
    const made = nextCondition({ ...update, observedGeneration: 4 }, undefined, T0);
    expect(made.observedGeneration).toBe(4);
    expect(ConditionSchema.parse(made)).toEqual(made);
  });
});

describe("controlPlaneReadyCondition", () => {
  const observations: Array<[ControlPlaneObservation, string, string, RegExp]> = [
    [{ state: "ready", server: "https://k3s.tp-acme.svc:6443" }, "True", "Ready", /ready at https:\/\/k3s\.tp-acme/],
    [{ state: "waiting-for-pod", readyReplicas: 0 }, "False", "WaitingForPod", /StatefulSet k3s: 0\/1 pods ready/],
    [{ state: "waiting-for-load-balancer" }, "False", "WaitingForLoadBalancer", /Service k3s/],
    [{ state: "api-unreachable", error: "ECONNREFUSED" }, "False", "ApiServerUnreachable", /ECONNREFUSED/],
    [{ state: "immutable-change", reasons: ["a", "b"] }, "False", "ImmutableFieldChanged", /^a; b$/],
    [{ state: "invalid-pki", error: "PKI Secret is missing service.key" }, "False", "InvalidPkiSecret", /service\.key/],
  ];

  it.each(observations)("maps %o to %s/%s", (observation, status, reason, message) => {
    const made = controlPlaneReadyCondition(observation, { generation: 3, now: T0 });
    expect(made.type).toBe("ControlPlaneReady");
    expect(made.status).toBe(status);
    expect(made.reason).toBe(reason);
    expect(made.message).toMatch(message);
    expect(made.observedGeneration).toBe(3);
    expect(ConditionSchema.safeParse(made).success).toBe(true);
  });

  it("uses only reasons the provisioner documents", () => {
    const documented = new Set<string>(Object.values(CONTROL_PLANE_REASONS));
    for (const [observation] of observations) {
      expect(documented.has(describeControlPlane(observation).reason)).toBe(true);
    }
  });

  it("keeps the previous transition time while still not ready", () => {
    const previous = controlPlaneReadyCondition(
      { state: "waiting-for-pod", readyReplicas: 0 },
      { generation: 1, now: T0 },
    );
    const next = controlPlaneReadyCondition(
      { state: "waiting-for-load-balancer" },
      { generation: 2, previous, now: T1 },
    );
    expect(next.lastTransitionTime).toBe(previous.lastTransitionTime);
    expect(next.observedGeneration).toBe(2);
  });
});

describe("provisionerStatus", () => {
  const ready = controlPlaneReadyCondition(
    { state: "ready", server: "https://127.0.0.9:6443" },
    { generation: 5, now: T0 },
  );

  it("writes only the provisioner's own fields and condition", () => {
    const status = provisionerStatus({
      tenant: "acme",
      generation: 5,
      condition: ready,
      current: { conditions: [condition("IsolationApplied", "True"), condition("ControlPlaneReady", "False")] },
      kubeconfigWritten: true,
      externalEndpoint: "https://127.0.0.9:6443",
    });
    expect(status).toEqual({
      phase: "Ready",
      hostNamespace: "tp-acme",
      endpoint: "https://k3s.tp-acme.svc:6443",
      externalEndpoint: "https://127.0.0.9:6443",
      kubeconfigSecretRef: { namespace: "tp-acme", name: "acme-kubeconfig", key: "kubeconfig" },
      observedGeneration: 5,
      conditions: [ready],
    });
    expect(TenantClusterStatusSchema.safeParse(status).success).toBe(true);
  });

  it("leaves out the kubeconfig reference and external endpoint until they exist", () => {
    const waiting = controlPlaneReadyCondition({ state: "waiting-for-load-balancer" }, { generation: 1, now: T0 });
    const status = provisionerStatus({ tenant: "acme", generation: 1, condition: waiting });
    expect(status.phase).toBe("Provisioning");
    expect("kubeconfigSecretRef" in status).toBe(false);
    expect("externalEndpoint" in status).toBe(false);
  });

  it("judges the phase with the new condition, not the stale one", () => {
    const failed = controlPlaneReadyCondition(
      { state: "immutable-change", reasons: ["storage"] },
      { generation: 2, now: T0 },
    );
    const status = provisionerStatus({
      tenant: "acme",
      generation: 2,
      condition: failed,
      current: { conditions: [condition("ControlPlaneReady", "True"), condition("IsolationApplied", "True")] },
    });
    expect(status.phase).toBe("Failed");
    expect(findCondition(status.conditions, "ControlPlaneReady")).toBe(failed);
  });

  it("reports Terminating while the tenant is being deleted", () => {
    expect(provisionerStatus({ tenant: "acme", generation: 1, condition: ready, deleting: true }).phase).toBe(
      "Terminating",
    );
  });
});
