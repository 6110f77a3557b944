import type { Objects } from "@tenantplane/kube";
import { TAINT_KEY_DEDICATED } from "@tenantplane/api";
import { planKey } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import type { Cluster } from "./host.js";
import { readPlanContext } from "./tenant-context.js";

/** A host holding one TenantCluster `dev` with `spec`, no policy or profile, no StorageClass. */
function host(spec: Record<string, unknown>): Cluster {
  const objects = {
    get: async (_apiVersion: string, kind: string, name: string) =>
      kind === "TenantCluster" && name === "dev"
        ? { apiVersion: "tenantplane.io/v1alpha1", kind, metadata: { name }, spec }
        : undefined,
    list: async () => [],
  };
  return {
    objects: objects as unknown as Objects,
    client: undefined as never,
    server: "https://127.0.0.1:6443",
    label: "the host cluster",
  };
}

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "shop", uid: "u1" },
  spec: { containers: [{ name: "c", image: "nginx" }] },
};

describe("readPlanContext", () => {
  it("plans a Dedicated tenant's Pods as the sync worker does: dedicated node selector and its own toleration", async () => {
    const context = await readPlanContext(
      host({ isolation: { mode: "Dedicated", dedicated: { nodeSelector: { pool: "dev" } } } }),
      "dev",
    );
    expect(context.rules.placement).toEqual({ mode: "Dedicated", nodeSelector: { pool: "dev" } });
    const result = planKey(
      { tenant: "dev", policy: context.policy, rules: context.rules, tenantObjects: [pod], hostObjects: [] },
      { kind: "Pod", namespace: "shop", name: "web" },
    );
    const created = result.decisions.find((d) => d.action === "Create")?.object as
      | { spec: { nodeSelector?: Record<string, string>; tolerations?: unknown[] } }
      | undefined;
    expect(created?.spec.nodeSelector).toMatchObject({ pool: "dev" });
    expect(created?.spec.tolerations).toContainEqual({
      key: TAINT_KEY_DEDICATED,
      operator: "Equal",
      value: "dev",
      effect: "NoSchedule",
    });
  });

  it("leaves a Shared tenant (or one without spec.isolation) on the shared nodes", async () => {
    expect((await readPlanContext(host({}), "dev")).rules.placement).toBeUndefined();
    const shared = host({ isolation: { mode: "Shared", dedicated: { nodeSelector: { pool: "dev" } } } });
    expect((await readPlanContext(shared, "dev")).rules.placement).toBeUndefined();
  });

  it("refuses a spec.isolation the sync worker would not sync, naming the field", async () => {
    await expect(readPlanContext(host({ isolation: { mode: "Dedicated" } }), "dev")).rejects.toThrow(
      /^TenantCluster dev spec\.isolation\.dedicated\.nodeSelector: .*fix spec\.isolation$/,
    );
  });
});
