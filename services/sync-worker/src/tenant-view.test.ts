import type { RawObject } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { planTenant, syncerIdentity } from "./tenant-directory.js";
import { othersView, restartReason } from "./tenant-view.js";

const ready = {
  type: "ControlPlaneReady",
  status: "True",
  reason: "Ready",
  message: "ok",
  lastTransitionTime: "2026-01-01T00:00:00Z",
};
const secretRef = { namespace: "tp-a", name: "a-kubeconfig", key: "kubeconfig" };

function tc(spec: Record<string, unknown>, status: Record<string, unknown> = {}): RawObject {
  return {
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: "a", generation: 2 },
    spec,
    status: { conditions: [ready], kubeconfigSecretRef: secretRef, ...status },
  };
}

const dedicated = { isolation: { mode: "Dedicated", dedicated: { nodeSelector: { pool: "a" } } } };
const migration = {
  from: "Shared",
  to: "Dedicated",
  phase: "Moving",
  moved: 1,
  left: 2,
  startedAt: "2026-01-01T00:00:00Z",
};

describe("othersView", () => {
  it("ignores what the sync worker writes: status.sync, Synced, and the migration driver's status.isolation", () => {
    const before = othersView(tc(dedicated, { isolation: { mode: "Shared", migration } }));
    const synced = { type: "Synced", status: "True", reason: "Synced", message: "3 objects" };
    expect(
      othersView(
        tc(dedicated, {
          conditions: [ready, synced],
          sync: { inSync: 3 },
          isolation: { mode: "Dedicated", dedicatedNodes: ["n1"], migration: { ...migration, phase: "Complete" } },
        }),
      ),
    ).toBe(before);
  });

  it("sees what a syncer is built from: spec.isolation, the kubeconfig Secret reference, other conditions", () => {
    const before = othersView(tc({}));
    expect(othersView(tc(dedicated))).not.toBe(before);
    expect(othersView(tc({}, { kubeconfigSecretRef: { ...secretRef, name: "b" } }))).not.toBe(before);
    expect(othersView(tc({}, { conditions: [{ ...ready, status: "False" }] }))).not.toBe(before);
  });
});

describe("restartReason", () => {
  const plan = (spec: Record<string, unknown>) => {
    const p = planTenant(tc(spec), () => undefined);
    if (!p.run) throw new Error("not run");
    return p;
  };
  const started = (spec: Record<string, unknown>, hash: string) => ({
    identity: syncerIdentity(plan(spec), hash),
    kubeconfigHash: hash,
  });

  it("names a change of mode or dedicated selector, with the old and new placement", () => {
    expect(restartReason(started({}, "h1"), plan(dedicated), "h1")).toBe(
      "isolation mode/selector changed (Shared → Dedicated pool=a)",
    );
    const other = { isolation: { mode: "Dedicated", dedicated: { nodeSelector: { pool: "b" } } } };
    expect(restartReason(started(dedicated, "h1"), plan(other), "h1")).toBe(
      "isolation mode/selector changed (Dedicated pool=a → Dedicated pool=b)",
    );
    expect(restartReason(started(dedicated, "h1"), plan({}), "h1")).toBe(
      "isolation mode/selector changed (Dedicated pool=a → Shared)",
    );
  });

  it("names a new kubeconfig, a SyncPolicy change and other host rules apart", () => {
    expect(restartReason(started({}, "h1"), plan({}), "h2")).toBe("kubeconfig changed");
    const p = plan({});
    const policy = { ...p, policyName: "only-pods", policy: { toHost: [{ kind: "Pod" as const }] } };
    expect(restartReason(started({}, "h1"), policy as typeof p, "h1")).toBe("SyncPolicy changed");
    const rules = { ...p, rules: { ...p.rules, allowedPriorityClasses: ["high"] } };
    expect(restartReason(started({}, "h1"), rules, "h2")).toBe(
      "kubeconfig changed; host rules changed (IsolationProfile or the host's default StorageClass)",
    );
  });
});
