import { matchesSelector } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { hostKinds, scopeByAccess, tenantToWake } from "./host-cache.js";

const sts = {
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "k3s", namespace: "tp-a", labels: { "tenantplane.io/tenant": "a" } },
};

describe("tenantToWake", () => {
  it("wakes the tenant named by the label for a change someone else made", () => {
    expect(tenantToWake({ type: "update", object: sts, ours: false }, ["StatefulSet"])).toBe("a");
  });

  it("wakes nothing for the answer to the service's own write", () => {
    expect(tenantToWake({ type: "update", object: sts, ours: true }, ["StatefulSet"])).toBeUndefined();
  });

  it("wakes nothing for a kind it was not asked to watch, and a TenantCluster by its name", () => {
    expect(tenantToWake({ type: "update", object: sts, ours: false }, ["Service"])).toBeUndefined();
    const tc = { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name: "b" } };
    expect(tenantToWake({ type: "add", object: tc, ours: false }, ["TenantCluster"])).toBe("b");
  });

  it("wakes nothing when only a quota's usage changed, and wakes for its first count and a change to its spec", () => {
    const quota = (rv: string, pods: string, used: string) => ({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: {
        name: "tenantplane-quota",
        namespace: "tp-a",
        resourceVersion: rv,
        labels: { "tenantplane.io/tenant": "a" },
      },
      spec: { hard: { pods } },
      status: { hard: { pods }, used: { pods: used } },
    });
    const usage = {
      type: "update" as const,
      object: quota("2", "10", "3"),
      previous: quota("1", "10", "2"),
      ours: false,
    };
    expect(tenantToWake(usage, ["ResourceQuota"])).toBeUndefined();
    const edited = {
      type: "update" as const,
      object: quota("2", "20", "2"),
      previous: quota("1", "10", "2"),
      ours: false,
    };
    expect(tenantToWake(edited, ["ResourceQuota"])).toBe("a");
    // The quota controller's first count, which the isolation pass waits for, wakes it.
    const { status: _uncounted, ...created } = quota("1", "10", "0");
    const counted = { type: "update" as const, object: quota("2", "10", "0"), previous: created, ours: false };
    expect(tenantToWake(counted, ["ResourceQuota"])).toBe("a");
    // A StatefulSet's status is what the provisioner waits on: it still wakes.
    const withStatus = (rv: string, ready: number) => ({
      ...sts,
      metadata: { ...sts.metadata, resourceVersion: rv },
      status: { readyReplicas: ready },
    });
    expect(
      tenantToWake({ type: "update", object: withStatus("2", 1), previous: withStatus("1", 0), ours: false }, [
        "StatefulSet",
      ]),
    ).toBe("a");
  });

  it("wakes nothing when a StatefulSet's status changed but not its ready count", () => {
    const at = (rv: string, status: Record<string, unknown>, replicas = 1) => ({
      ...sts,
      metadata: { ...sts.metadata, resourceVersion: rv },
      spec: { replicas },
      status,
    });
    const counting = {
      type: "update" as const,
      object: at("3", { replicas: 1, currentReplicas: 1, updateRevision: "k3s-1" }),
      previous: at("2", { replicas: 1 }),
      ours: false,
    };
    expect(tenantToWake(counting, ["StatefulSet"])).toBeUndefined();
    const lostReady = {
      type: "update" as const,
      object: at("4", { replicas: 1 }),
      previous: at("3", { replicas: 1, readyReplicas: 1 }),
      ours: false,
    };
    expect(tenantToWake(lostReady, ["StatefulSet"])).toBe("a");
    // Someone scaled it by hand: a change to the spec always wakes.
    const scaled = {
      type: "update" as const,
      object: at("5", { replicas: 1 }, 0),
      previous: at("4", { replicas: 1 }),
      ours: false,
    };
    expect(tenantToWake(scaled, ["StatefulSet"])).toBe("a");
  });

  it("wakes nothing when only the sync workers' progress changed, and wakes for anything else", () => {
    const tc = (rv: string, status: Record<string, unknown>) => ({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: "b", resourceVersion: rv, generation: 1 },
      spec: { syncPolicyRef: { name: "workloads" } },
      status,
    });
    const synced = (message: string, status = "True", reason = "Synced") => ({
      type: "Synced",
      status,
      reason,
      message,
    });
    const ready = { type: "IsolationApplied", status: "True", reason: "Applied", message: "9 objects" };
    const before = tc("1", { phase: "Ready", sync: { inSync: 10 }, conditions: [ready, synced("10 in sync")] });
    const wake = (object: ReturnType<typeof tc>) =>
      tenantToWake({ type: "update", object, previous: before, ours: false }, ["TenantCluster"]);

    expect(wake(tc("2", { phase: "Ready", sync: { inSync: 20 }, conditions: [ready, synced("20 in sync")] }))).toBe(
      undefined,
    );
    expect(
      wake(
        tc("2", {
          phase: "Ready",
          sync: { inSync: 20 },
          conditions: [ready, synced("1 failed", "False", "SyncErrors")],
        }),
      ),
    ).toBe("b");
    expect(
      wake(
        tc("2", {
          phase: "Ready",
          sync: { inSync: 10 },
          conditions: [{ ...ready, status: "False" }, synced("10 in sync")],
        }),
      ),
    ).toBe("b");
    expect(wake({ ...before, metadata: { ...before.metadata, resourceVersion: "2", generation: 2 } })).toBe("b");
    // Without the state it replaced, a change cannot be judged: it wakes.
    expect(tenantToWake({ type: "update", object: before, ours: false }, ["TenantCluster"])).toBe("b");
  });
});

describe("scopeByAccess", () => {
  it("caches per namespace the namespaced kinds the service may not watch everywhere, and when it cannot tell", async () => {
    const kinds = hostKinds(["Namespace", "Secret", "Service", "RoleBinding"]);
    const asked: string[] = [];
    const scoped = await scopeByAccess(kinds, async (kind) => {
      asked.push(kind.kind);
      if (kind.kind === "RoleBinding") throw new Error("connection refused");
      return kind.kind === "Secret";
    });
    expect(asked.sort()).toEqual(["RoleBinding", "Secret", "Service"]);
    expect(scoped.map((k) => `${k.kind} ${k.perNamespace ? "per namespace" : "cluster-wide"}`)).toEqual([
      "Namespace cluster-wide",
      "Secret cluster-wide",
      "Service per namespace",
      "RoleBinding per namespace",
    ]);
  });
});

describe("hostKinds Secret", () => {
  // The selector goes to the API server; matchesSelector reads it the same way.
  const [secrets] = hostKinds(["Secret"]);
  const own = { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "a" };

  it("holds tenantplane's own Secrets of a tenant (its kubeconfig, PKI, join credential)", () => {
    expect(matchesSelector(own, secrets!.labelSelector!)).toBe(true);
  });

  it("leaves out the token Secrets of host Pod copies and every synced copy: they grow with the tenant's Pods", () => {
    expect(matchesSelector({ ...own, "tenantplane.io/token-for-pod": "web-x-shop-x-a" }, secrets!.labelSelector!)).toBe(
      false,
    );
    expect(matchesSelector({ ...own, "tenantplane.io/virtual-namespace": "shop" }, secrets!.labelSelector!)).toBe(
      false,
    );
  });
});
