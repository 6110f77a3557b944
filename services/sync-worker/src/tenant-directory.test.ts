import type { RawObject } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { planTenant, syncerIdentity } from "./tenant-directory.js";

const ready = {
  type: "ControlPlaneReady",
  status: "True",
  reason: "Ready",
  message: "ok",
  lastTransitionTime: "2026-01-01T00:00:00Z",
};
const secret = { namespace: "tp-a", name: "a-kubeconfig", key: "kubeconfig" };

function tc(
  overrides: { spec?: Record<string, unknown>; conditions?: unknown[]; deleting?: boolean; secretRef?: boolean } = {},
): RawObject {
  return {
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: "a", ...(overrides.deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
    spec: overrides.spec ?? {},
    status: {
      conditions: overrides.conditions ?? [ready],
      ...(overrides.secretRef === false ? {} : { kubeconfigSecretRef: secret }),
    },
  };
}

const policy = (spec: unknown): RawObject => ({
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "SyncPolicy",
  metadata: { name: "p" },
  spec,
});

describe("planTenant", () => {
  it("plans Pods in the placement spec.isolation asks for, and a change of it restarts the syncer", () => {
    const shared = planTenant(tc(), () => undefined);
    const dedicated = planTenant(
      tc({ spec: { isolation: { mode: "Dedicated", dedicated: { nodeSelector: { pool: "a" } } } } }),
      () => undefined,
    );
    const other = planTenant(
      tc({ spec: { isolation: { mode: "Dedicated", dedicated: { nodeSelector: { pool: "b" } } } } }),
      () => undefined,
    );
    expect(shared.run && shared.rules.placement).toBeUndefined();
    expect(dedicated.run && dedicated.rules.placement).toEqual({ mode: "Dedicated", nodeSelector: { pool: "a" } });
    const ids = [shared, dedicated, other].map((p) => (p.run ? syncerIdentity(p, "h") : ""));
    expect(new Set(ids).size).toBe(3);
  });

  it("plans Private asked for as Private placement, and the mode in effect only when it is Private", () => {
    const withStatus = (mode: string | undefined): RawObject => {
      const base = tc({ spec: { isolation: { mode: "Private" } } });
      return { ...base, status: { ...(base["status"] as object), ...(mode ? { isolation: { mode } } : {}) } };
    };
    const asked = planTenant(withStatus("Shared"), () => undefined);
    const inEffect = planTenant(withStatus("Private"), () => undefined);
    expect(asked.run && asked.rules.placement).toEqual({ mode: "Private" });
    expect(asked.run && asked.rules.effectiveMode).toBeUndefined();
    expect(inEffect.run && inEffect.rules.effectiveMode).toBe("Private");
    // Private coming into effect restarts the syncer (its LoadBalancer Services leave the host).
    const ids = [asked, inEffect].map((p) => (p.run ? syncerIdentity(p, "h") : ""));
    expect(new Set(ids).size).toBe(2);
    // No status yet: nothing in effect is assumed Private.
    const fresh = planTenant(withStatus(undefined), () => undefined);
    expect(fresh.run && fresh.rules.effectiveMode).toBeUndefined();
  });

  it("runs a Ready tenant with the default policy when it names none", () => {
    const plan = planTenant(tc(), () => undefined);
    expect(plan).toMatchObject({ run: true, secret, policyName: undefined });
    expect(plan.run && plan.policy.toHost.length).toBe(6);
  });

  it("does not run a tenant that is gone, deleting, not Ready or without a kubeconfig", () => {
    expect(planTenant(undefined, () => undefined).run).toBe(false);
    expect(planTenant(tc({ deleting: true }), () => undefined).run).toBe(false);
    expect(planTenant(tc({ conditions: [{ ...ready, status: "False" }] }), () => undefined).run).toBe(false);
    expect(planTenant(tc({ secretRef: false }), () => undefined).run).toBe(false);
  });

  it("names a control plane that turns not Ready under a syncing tenant as a problem, and one never Ready as none", () => {
    const down = tc({ conditions: [{ ...ready, status: "False" }] });
    expect(planTenant(down, () => undefined)).not.toHaveProperty("problem");
    expect(planTenant(down, () => undefined, undefined, true)).toMatchObject({
      run: false,
      problem: { reason: "TenantAPIUnavailable", message: expect.stringContaining("nothing is deleted") },
    });
  });

  it("reads the kubeconfig only from the tenant's own host namespace", () => {
    const elsewhere = tc();
    (elsewhere["status"] as { kubeconfigSecretRef: unknown }).kubeconfigSecretRef = {
      ...secret,
      namespace: "kube-system",
    };
    expect(planTenant(elsewhere, () => undefined)).toMatchObject({
      run: false,
      problem: { reason: "KubeconfigOutsideHostNamespace", message: expect.stringContaining("namespace kube-system") },
    });
  });

  it("reports a missing or invalid SyncPolicy as a problem naming the fix", () => {
    const missing = planTenant(tc({ spec: { syncPolicyRef: { name: "p" } } }), () => undefined);
    expect(missing).toMatchObject({ run: false, problem: { reason: "SyncPolicyNotFound" } });
    const invalid = planTenant(tc({ spec: { syncPolicyRef: { name: "p" } } }), () =>
      policy({ toHost: [{ kind: "Deployment" }] }),
    );
    expect(invalid).toMatchObject({ run: false, problem: { reason: "InvalidSyncPolicy" } });
    const fine = planTenant(tc({ spec: { syncPolicyRef: { name: "p" } } }), () =>
      policy({ toHost: [{ kind: "Pod" }] }),
    );
    expect(fine).toMatchObject({ run: true, policyName: "p", policy: { toHost: [{ kind: "Pod" }] } });
  });
});

describe("planTenant and the IsolationProfile", () => {
  const profile = (spec: unknown): RawObject => ({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "IsolationProfile",
    metadata: { name: "strict" },
    spec,
  });

  it("syncs under the named profile's rules, and not at all while that profile is missing or invalid", () => {
    const named = tc({ spec: { isolationProfileRef: { name: "strict" } } });
    expect(
      planTenant(
        named,
        () => undefined,
        () => undefined,
      ),
    ).toMatchObject({ run: false, problem: { reason: "IsolationProfileUnavailable" } });
    expect(
      planTenant(
        named,
        () => undefined,
        () => profile({ podSecurity: { enforce: "nonsense" } }),
      ),
    ).toMatchObject({ run: false });
    const strict = planTenant(
      named,
      () => undefined,
      () => profile({ podSecurity: { enforce: "restricted" } }),
    );
    expect(strict.run && strict.rules.podSecurity).toBe("restricted");
    const plain = planTenant(tc(), () => undefined);
    expect(plain.run && plain.rules.podSecurity).toBe("baseline");
  });
});

describe("syncerIdentity", () => {
  it("changes with the policy's kinds and the kubeconfig, not with rule order", () => {
    const a = syncerIdentity({ policyName: "p", policy: { toHost: [{ kind: "Pod" }, { kind: "Secret" }] } }, "h1");
    expect(syncerIdentity({ policyName: "p", policy: { toHost: [{ kind: "Secret" }, { kind: "Pod" }] } }, "h1")).toBe(
      a,
    );
    expect(syncerIdentity({ policyName: "p", policy: { toHost: [{ kind: "Pod" }] } }, "h1")).not.toBe(a);
    expect(
      syncerIdentity({ policyName: "p", policy: { toHost: [{ kind: "Pod" }, { kind: "Secret" }] } }, "h2"),
    ).not.toBe(a);
  });

  it("changes with the host rules, so a new host default StorageClass reaches a running syncer", () => {
    const standard = planTenant(tc(), () => undefined, undefined, false, "standard");
    const fast = planTenant(tc(), () => undefined, undefined, false, "fast");
    if (!standard.run || !fast.run) throw new Error("expected both tenants to run");
    expect(standard.rules.storage.hostDefaultClass).toBe("standard");
    expect(syncerIdentity(standard, "h1")).toBe(syncerIdentity({ ...standard }, "h1"));
    expect(syncerIdentity(fast, "h1")).not.toBe(syncerIdentity(standard, "h1"));
  });
});
