import type { Condition } from "@tenantplane/api";
import { ConditionSchema, TenantClusterStatusSchema } from "@tenantplane/api";
import { nextCondition } from "@tenantplane/service";
import { describe, expect, it } from "vitest";
import {
  CONTROL_PLANE_REASONS,
  controlPlaneReadyInput,
  describeControlPlane,
  findCondition,
  firstReportHoldMs,
  heldUnreachableCondition,
  ISOLATION_REPORT_GRACE_MS,
  namespaceDeletionProgress,
  outcomeWithoutNamespace,
  phaseFor,
  provisionerStatusFields,
  teardownStatus,
  UNREACHABLE_REWORDING_HOLD_MS,
  type ControlPlaneObservation,
} from "./plan-status.js";

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
    expect(phaseFor([condition("ControlPlaneReady", "True"), condition("IsolationApplied", "Unknown")])).toBe(
      "Provisioning",
    );
  });

  it("is Ready when the control plane and isolation are True, whatever Synced says", () => {
    const ready = [condition("ControlPlaneReady", "True"), condition("IsolationApplied", "True")];
    expect(phaseFor(ready)).toBe("Ready");
    expect(phaseFor([...ready, condition("Synced", "False", "ObjectErrors")])).toBe("Ready");
  });

  it("is not Ready while isolation was applied for an older generation only", () => {
    const stale = [
      { ...condition("ControlPlaneReady", "True"), observedGeneration: 4 },
      { ...condition("IsolationApplied", "True"), observedGeneration: 3 },
    ];
    expect(phaseFor(stale, { generation: 4 })).toBe("Provisioning");
    expect(
      phaseFor(
        stale.map((c) => ({ ...c, observedGeneration: 4 })),
        { generation: 4 },
      ),
    ).toBe("Ready");
  });

  it("is not Ready while the tenant is held in lockdown for a missing profile", () => {
    expect(
      phaseFor([condition("ControlPlaneReady", "True"), condition("IsolationApplied", "False", "ProfileNotFound")]),
    ).toBe("Provisioning");
  });

  it("is Failed when a name is held by a foreign object or the profile blocks the control plane", () => {
    expect(phaseFor([condition("ControlPlaneReady", "False", "NameHeldByForeignObject")])).toBe("Failed");
    expect(phaseFor([condition("ControlPlaneReady", "False", "BlockedByIsolationProfile")])).toBe("Failed");
  });

  it("is Failed when any condition is False for a terminal reason", () => {
    expect(phaseFor([condition("ControlPlaneReady", "False", "ImmutableFieldChanged")])).toBe("Failed");
    expect(phaseFor([condition("ControlPlaneReady", "False", "InvalidPkiSecret")])).toBe("Failed");
    // A write refused by the API server, whichever service made it.
    expect(
      phaseFor([condition("ControlPlaneReady", "True"), condition("IsolationApplied", "False", "RejectedByApiServer")]),
    ).toBe("Failed");
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

describe("controlPlaneReadyInput", () => {
  const observations: Array<[ControlPlaneObservation, string, string, RegExp]> = [
    [{ state: "ready", server: "https://k3s.tp-acme.svc:6443" }, "True", "Ready", /ready at https:\/\/k3s\.tp-acme/],
    [
      {
        state: "ready",
        server: "https://k3s.tp-acme.svc:6443",
        join: "bootstrap token abc123 is not in the tenant API yet",
      },
      "True",
      "Ready",
      /ready at https:\/\/k3s\.tp-acme\.svc:6443; bootstrap token abc123 is not in the tenant API yet$/,
    ],
    [{ state: "waiting-for-pod", readyReplicas: 0 }, "False", "WaitingForPod", /StatefulSet k3s: 0\/1 pods ready/],
    [
      { state: "waiting-for-pod", readyReplicas: 0, pod: "pod k3s-0 is not scheduled: Unschedulable: 0/1 nodes" },
      "False",
      "WaitingForPod",
      /^waiting for StatefulSet k3s: 0\/1 pods ready; pod k3s-0 is not scheduled: Unschedulable: 0\/1 nodes$/,
    ],
    [{ state: "waiting-for-load-balancer" }, "False", "WaitingForLoadBalancer", /Service k3s/],
    [{ state: "api-unreachable", error: "ECONNREFUSED" }, "False", "ApiServerUnreachable", /ECONNREFUSED/],
    [{ state: "immutable-change", reasons: ["a", "b"] }, "False", "ImmutableFieldChanged", /^a; b$/],
    [{ state: "invalid-pki", error: "PKI Secret is missing service.key" }, "False", "InvalidPkiSecret", /service\.key/],
    [
      { state: "foreign-object", message: "Secret acme-pki in namespace tp-acme already exists" },
      "False",
      "NameHeldByForeignObject",
      /^Secret acme-pki in namespace tp-acme/,
    ],
    [
      { state: "waiting-for-isolation", detail: "ProfileNotFound: IsolationProfile late does not exist" },
      "False",
      "WaitingForIsolation",
      /IsolationApplied=True.*ProfileNotFound/,
    ],
    [
      { state: "blocked-by-isolation", source: "IsolationProfile tight", rules: ["resourceQuota.hard[pods] is 0"] },
      "False",
      "BlockedByIsolationProfile",
      /^IsolationProfile tight would refuse the control plane: resourceQuota\.hard\[pods\] is 0$/,
    ],
  ];

  it.each(observations)("maps %o to %s/%s", (observation, status, reason, message) => {
    const input = controlPlaneReadyInput(observation, 3);
    expect(input.type).toBe("ControlPlaneReady");
    expect(input.status).toBe(status);
    expect(input.reason).toBe(reason);
    expect(input.message).toMatch(message);
    expect(input.observedGeneration).toBe(3);
    expect(ConditionSchema.safeParse(nextCondition(undefined, input)).success).toBe(true);
  });

  it("uses only reasons the provisioner documents", () => {
    const documented = new Set<string>(Object.values(CONTROL_PLANE_REASONS));
    for (const [observation] of observations) {
      expect(documented.has(describeControlPlane(observation).reason)).toBe(true);
    }
  });
});

describe("provisionerStatusFields", () => {
  const ready = controlPlaneReadyInput({ state: "ready", server: "https://127.0.0.9:6443" }, 5);

  it("returns the provisioner's own fields with the phase judged from every service's conditions", () => {
    const fields = provisionerStatusFields({
      tenant: "acme",
      generation: 5,
      condition: ready,
      current: { conditions: [condition("IsolationApplied", "True"), condition("ControlPlaneReady", "False")] },
      kubeconfigWritten: true,
      externalEndpoint: "https://127.0.0.9:6443",
    });
    expect(fields).toEqual({
      phase: "Ready",
      hostNamespace: "tp-acme",
      endpoint: "https://k3s.tp-acme.svc:6443",
      externalEndpoint: "https://127.0.0.9:6443",
      kubeconfigSecretRef: { namespace: "tp-acme", name: "acme-kubeconfig", key: "kubeconfig" },
      observedGeneration: 5,
    });
    expect(TenantClusterStatusSchema.safeParse(fields).success).toBe(true);
  });

  it("shows when the admin kubeconfig's certificate expires", () => {
    const fields = provisionerStatusFields({
      tenant: "acme",
      generation: 5,
      condition: ready,
      kubeconfigWritten: true,
      kubeconfigExpiresAt: new Date("2027-01-01T00:00:00Z"),
    });
    expect(fields.kubeconfigExpiresAt).toBe("2027-01-01T00:00:00.000Z");
    expect(TenantClusterStatusSchema.safeParse(fields).success).toBe(true);
  });

  it("leaves out the kubeconfig reference and external endpoint until they exist", () => {
    const waiting = controlPlaneReadyInput({ state: "waiting-for-load-balancer" }, 1);
    const fields = provisionerStatusFields({ tenant: "acme", generation: 1, condition: waiting });
    expect(fields.phase).toBe("Provisioning");
    expect("kubeconfigSecretRef" in fields).toBe(false);
    expect("externalEndpoint" in fields).toBe(false);
  });

  it("judges the phase with the new condition, not the stale one", () => {
    const failed = controlPlaneReadyInput({ state: "immutable-change", reasons: ["storage"] }, 2);
    const fields = provisionerStatusFields({
      tenant: "acme",
      generation: 2,
      condition: failed,
      current: { conditions: [condition("ControlPlaneReady", "True"), condition("IsolationApplied", "True")] },
    });
    expect(fields.phase).toBe("Failed");
  });

  it("reports Terminating while the tenant is being deleted", () => {
    expect(provisionerStatusFields({ tenant: "acme", generation: 1, condition: ready, deleting: true }).phase).toBe(
      "Terminating",
    );
  });
});

describe("findCondition", () => {
  it("finds a condition by type", () => {
    const list = [condition("Synced", "True"), condition("ControlPlaneReady", "False")];
    expect(findCondition(list, "ControlPlaneReady")).toBe(list[1]);
    expect(findCondition(list, "IsolationApplied")).toBeUndefined();
    expect(findCondition(undefined, "Synced")).toBeUndefined();
  });
});

describe("teardownStatus", () => {
  const current = {
    phase: "Ready" as const,
    hostNamespace: "tp-dev",
    endpoint: "https://k3s.tp-dev.svc:6443",
    externalEndpoint: "https://127.0.0.60:6443",
    kubeconfigSecretRef: { namespace: "tp-dev", name: "dev-kubeconfig", key: "kubeconfig" },
    kubeconfigExpiresAt: "2027-01-01T00:00:00.000Z",
  };

  it("keeps the namespace, endpoints and kubeconfig while the namespace exists, and says what it waits for", () => {
    const { condition, fields } = teardownStatus({
      tenant: "dev",
      generation: 3,
      current,
      observation: { state: "deleting-namespace", namespace: "tp-dev", progress: "pods. has 1 resource instances" },
    });
    expect(fields).toEqual({ ...current, phase: "Terminating", observedGeneration: 3 });
    expect(condition).toMatchObject({ status: "False", reason: CONTROL_PLANE_REASONS.terminating });
    expect(condition.message).toBe("waiting for host namespace tp-dev to be deleted: pods. has 1 resource instances");
    expect(TenantClusterStatusSchema.parse({ ...fields, conditions: [] })).toBeDefined();
  });

  it("releases them once the teardown has finished", () => {
    const { condition, fields } = teardownStatus({
      tenant: "dev",
      generation: 3,
      current,
      observation: { state: "finished", namespace: "tp-dev", outcome: "deleted" },
    });
    expect(fields).toEqual({ phase: "Terminating", observedGeneration: 3 });
    expect(condition.reason).toBe(CONTROL_PLANE_REASONS.teardownFinished);
    expect(condition.message).toBe("host namespace tp-dev and everything in it are deleted");
  });
});

describe("namespaceDeletionProgress", () => {
  it("repeats what the namespace controller reports as remaining", () => {
    expect(
      namespaceDeletionProgress({
        status: {
          conditions: [
            {
              type: "NamespaceDeletionDiscoveryFailure",
              status: "False",
              message: "All resources successfully discovered",
            },
            {
              type: "NamespaceContentRemaining",
              status: "True",
              message: "Some resources are remaining: pods. has 1 resource instances",
            },
            {
              type: "NamespaceFinalizersRemaining",
              status: "True",
              message:
                "Some content in the namespace has finalizers remaining: kubernetes.io/pvc-protection in 1 resource instances",
            },
          ],
        },
      }),
    ).toBe(
      "Some resources are remaining: pods. has 1 resource instances; Some content in the namespace has finalizers remaining: kubernetes.io/pvc-protection in 1 resource instances",
    );
  });

  it("says the controller is at work before it has reported", () => {
    expect(namespaceDeletionProgress({})).toBe("the namespace controller is removing its content");
  });
});

describe("outcomeWithoutNamespace", () => {
  it("is deleted after a pass waited for the deletion, the reported outcome after a finished one, else absent", () => {
    expect(outcomeWithoutNamespace("tp-dev", { reason: "Terminating", message: "waiting" })).toBe("deleted");
    const kept = teardownStatus({
      tenant: "dev",
      generation: 1,
      observation: { state: "finished", namespace: "tp-dev", outcome: "kept" },
    }).condition;
    expect(outcomeWithoutNamespace("tp-dev", kept)).toBe("kept");
    expect(outcomeWithoutNamespace("tp-dev", { reason: "Ready", message: "ready" })).toBe("absent");
    expect(outcomeWithoutNamespace("tp-dev", undefined)).toBe("absent");
  });
});

describe("firstReportHoldMs", () => {
  const created = "2026-03-01T12:00:00Z";
  const at = (seconds: number) => Date.parse(created) + seconds * 1000;
  const waiting: ControlPlaneObservation = {
    state: "waiting-for-isolation",
    detail: "the isolation service has not reported yet",
  };
  const fresh = { metadata: { creationTimestamp: created } };

  it("holds a new tenant's wait for isolation for the rest of the grace", () => {
    expect(firstReportHoldMs(waiting, fresh, at(0))).toBe(ISOLATION_REPORT_GRACE_MS);
    expect(firstReportHoldMs(waiting, fresh, at(3))).toBe(ISOLATION_REPORT_GRACE_MS - 3000);
    expect(firstReportHoldMs(waiting, { metadata: { creationTimestamp: new Date(created) } }, at(3))).toBe(
      ISOLATION_REPORT_GRACE_MS - 3000,
    );
  });

  it("writes once the grace is over, or when the clocks disagree or the age is unknown", () => {
    expect(firstReportHoldMs(waiting, fresh, at(ISOLATION_REPORT_GRACE_MS / 1000))).toBe(0);
    expect(firstReportHoldMs(waiting, fresh, at(-5))).toBe(0);
    expect(firstReportHoldMs(waiting, {}, at(1))).toBe(0);
  });

  it("writes at once when either service has reported, so isolation's problem is named", () => {
    for (const type of ["IsolationApplied", "ControlPlaneReady"]) {
      const status = { conditions: [condition(type, "False", "ProfileNotFound")] };
      expect(firstReportHoldMs(waiting, { ...fresh, status }, at(1))).toBe(0);
    }
  });

  it("never holds any other observation", () => {
    const others: ControlPlaneObservation[] = [
      { state: "waiting-for-pod", readyReplicas: 0 },
      { state: "waiting-for-load-balancer" },
      { state: "blocked-by-isolation", source: "the built-in isolation profile", rules: ["quota"] },
    ];
    for (const observation of others) expect(firstReportHoldMs(observation, fresh, at(1))).toBe(0);
  });
});

describe("heldUnreachableCondition", () => {
  const now = Date.parse("2026-12-01T12:00:00Z");
  const manager = "tenantplane-provisioner";
  const unreachable = (error: string, generation = 3) =>
    controlPlaneReadyInput({ state: "api-unreachable", error }, generation);
  const stored = (error: string, writtenAgoMs: number, extra: { generation?: number; subresource?: string } = {}) => {
    const input = unreachable(error, extra.generation ?? 3);
    return {
      metadata: {
        managedFields: [
          { manager: "e2e", time: new Date(now - 1_000).toISOString() },
          { manager, subresource: extra.subresource ?? "status", time: new Date(now - writtenAgoMs).toISOString() },
        ],
      },
      status: { conditions: [{ ...nextCondition(undefined, input), lastTransitionTime: "2026-12-01T11:00:00Z" }] },
    };
  };

  it("keeps the stored wording of the same failure while the last status write is recent", () => {
    const held = heldUnreachableCondition(
      unreachable("no answer within 5000 ms"),
      stored("getaddrinfo ENOTFOUND k3s.tp-a.svc", 60_000),
      manager,
      now,
    );
    expect(held.message).toBe(unreachable("getaddrinfo ENOTFOUND k3s.tp-a.svc").message);
    expect(held.reason).toBe(CONTROL_PLANE_REASONS.apiServerUnreachable);
  });

  it("writes the new wording once the last status write is UNREACHABLE_REWORDING_HOLD_MS old", () => {
    const next = unreachable("no answer within 5000 ms");
    expect(heldUnreachableCondition(next, stored("ECONNREFUSED", UNREACHABLE_REWORDING_HOLD_MS), manager, now)).toBe(
      next,
    );
  });

  it("never holds a new reason, status or generation", () => {
    const ready = controlPlaneReadyInput({ state: "ready", server: "https://k3s.tp-a.svc:6443" }, 3);
    expect(heldUnreachableCondition(ready, stored("ECONNREFUSED", 1_000), manager, now)).toBe(ready);
    const newer = unreachable("timeout", 4);
    expect(heldUnreachableCondition(newer, stored("ECONNREFUSED", 1_000), manager, now)).toBe(newer);
    const waiting = controlPlaneReadyInput({ state: "waiting-for-pod", readyReplicas: 0 }, 3);
    const pod = {
      ...stored("x", 1_000),
      status: { conditions: [{ ...nextCondition(undefined, waiting), lastTransitionTime: "2026-12-01T11:00:00Z" }] },
    };
    const next = unreachable("ECONNREFUSED");
    expect(heldUnreachableCondition(next, pod, manager, now)).toBe(next);
  });

  it("writes the new wording when no status write of this manager is on record", () => {
    const next = unreachable("timeout");
    expect(heldUnreachableCondition(next, stored("ECONNREFUSED", 1_000, { subresource: "" }), manager, now)).toBe(next);
    expect(heldUnreachableCondition(next, stored("ECONNREFUSED", 1_000), "tenantplane-isolation", now)).toBe(next);
  });
});
