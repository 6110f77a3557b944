import { defaultIsolationProfileSpec, defaultSyncPolicySpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { compileHostRules, withPlacement } from "./host-rules.js";
import { KubeObjectSchema } from "./kube-object.js";
import { plan, planKey } from "./plan.js";
import { ANNOTATION_PLACEMENT, parsePlacement, placementText, SHARED_PLACEMENT, type Placement } from "./placement.js";
import { transform } from "./transform.js";

const tenant = "dev";
const dedicated: Placement = { mode: "Dedicated", nodeSelector: { "tenantplane.io/pool": "team-a", zone: "b" } };
const ownToleration = { key: "tenantplane.io/dedicated", operator: "Equal", value: "dev", effect: "NoSchedule" };

function pod(spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "shop" },
    spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
  };
}

function rulesWith(placement: Placement, profile: Record<string, unknown> = {}) {
  const workloads = { ...defaultIsolationProfileSpec.workloads, ...profile };
  return withPlacement(compileHostRules({ ...defaultIsolationProfileSpec, workloads }), placement);
}

function copyOf(source: ReturnType<typeof pod>, placement: Placement) {
  return transform(KubeObjectSchema.parse(source), tenant, { rules: rulesWith(placement) });
}

function planPod(source: ReturnType<typeof pod>, placement: Placement, hostObjects: unknown[] = []) {
  return plan({
    tenant,
    policy: defaultSyncPolicySpec,
    tenantObjects: [source],
    hostObjects,
    rules: rulesWith(placement),
  });
}

describe("placement text", () => {
  it("writes Dedicated with the sorted selector and reads it back; Shared has no annotation", () => {
    expect(placementText(dedicated)).toBe("Dedicated tenantplane.io/pool=team-a,zone=b");
    expect(parsePlacement(placementText(dedicated))).toEqual(dedicated);
    expect(placementText(SHARED_PLACEMENT)).toBeUndefined();
    expect(parsePlacement(undefined)).toEqual(SHARED_PLACEMENT);
    expect(parsePlacement("Exclusive")).toBeUndefined();
    expect(parsePlacement("Dedicated =x")).toBeUndefined();
  });
});

describe("Pod placement", () => {
  it("in Dedicated merges the dedicated selector into the tenant's and adds the tenant's own toleration", () => {
    const copy = copyOf(pod({ nodeSelector: { disk: "ssd" } }), dedicated);
    expect(copy["spec"]).toMatchObject({
      nodeSelector: { disk: "ssd", "tenantplane.io/pool": "team-a", zone: "b" },
      tolerations: [ownToleration],
    });
    expect(copy.metadata.annotations[ANNOTATION_PLACEMENT]).toBe("Dedicated tenantplane.io/pool=team-a,zone=b");
  });

  it("in Shared adds neither, and no placement annotation", () => {
    const copy = copyOf(pod(), SHARED_PLACEMENT);
    expect((copy["spec"] as Record<string, unknown>)["nodeSelector"]).toBeUndefined();
    expect((copy["spec"] as Record<string, unknown>)["tolerations"]).toBeUndefined();
    expect(copy.metadata.annotations[ANNOTATION_PLACEMENT]).toBeUndefined();
  });

  it("lets the dedicated selector win over the profile's on the same key and keeps the profile's others", () => {
    const rules = rulesWith(dedicated, { nodeSelector: { zone: "shared", "kubernetes.io/os": "linux" } });
    const copy = transform(KubeObjectSchema.parse(pod()), tenant, { rules });
    expect((copy["spec"] as Record<string, unknown>)["nodeSelector"]).toEqual({
      "kubernetes.io/os": "linux",
      "tenantplane.io/pool": "team-a",
      zone: "b",
    });
  });

  it("refuses a tenant selector that contradicts the dedicated one, naming the field and the rule", () => {
    const { decisions } = planPod(pod({ nodeSelector: { zone: "a" } }), dedicated);
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ action: "Skip" });
    expect(decisions[0]?.reason).toContain(
      "spec.nodeSelector[zone]: a conflicts with TenantCluster spec.isolation.dedicated.nodeSelector, which enforces b",
    );
    // The same Pod is fine in Shared.
    expect(planPod(pod({ nodeSelector: { zone: "a" } }), SHARED_PLACEMENT).decisions[0]?.action).toBe("Create");
  });

  it("drops a tenant toleration of the dedicated-node key (another tenant's value too) with a reason", () => {
    const stolen = { key: "tenantplane.io/dedicated", operator: "Equal", value: "other", effect: "NoSchedule" };
    for (const placement of [SHARED_PLACEMENT, dedicated]) {
      const [decision] = planPod(pod({ tolerations: [stolen] }), placement).decisions;
      expect(decision?.action).toBe("Create");
      const tolerations = (decision?.object?.["spec"] as Record<string, unknown>)["tolerations"];
      expect(tolerations).toEqual(placement.mode === "Dedicated" ? [ownToleration] : []);
      expect(decision?.reason).toContain(
        "toleration tenantplane.io/dedicated Equal (NoSchedule) removed: tenantplane alone tolerates its dedicated-node taint",
      );
    }
  });

  it("never adds a profile's toleration of the dedicated-node key", () => {
    const profile = { tolerations: [{ key: "tenantplane.io/dedicated", operator: "Exists" }] };
    const copy = transform(KubeObjectSchema.parse(pod()), tenant, { rules: rulesWith(SHARED_PLACEMENT, profile) });
    expect((copy["spec"] as Record<string, unknown>)["tolerations"]).toEqual([]);
  });

  it("keeps a copy made for the other placement in sync with it, and updates it in that placement", () => {
    const source = pod();
    const shared = copyOf(source, SHARED_PLACEMENT);
    // Now Dedicated: the Shared copy is in sync (its placement cannot change on a scheduled Pod).
    const still = planPod(source, dedicated, [shared]);
    expect(still.decisions).toEqual([]);
    expect(still.inSync).toHaveLength(1);
    // A change of the tenant Pod (its image) still reaches the copy, in the copy's own placement.
    const changed = pod({ containers: [{ name: "c", image: "nginx:2" }] });
    const [update] = planPod(changed, dedicated, [shared]).decisions;
    expect(update).toMatchObject({ action: "Update", object: copyOf(changed, SHARED_PLACEMENT) });
    expect(update?.reason).toContain("the host Pod stays on the shared nodes it was placed for");
    // And back: a Dedicated copy stays Dedicated while the tenant is Shared again.
    const moved = copyOf(source, dedicated);
    expect(planPod(source, SHARED_PLACEMENT, [moved]).decisions).toEqual([]);
    // A new Pod (no copy) gets the placement asked for.
    expect(planPod(source, dedicated).decisions[0]?.object).toEqual(moved);
  });

  it("plans one key (the sync worker's path) like the full pass: the copy stays in its placement", () => {
    const source = pod();
    const shared = copyOf(source, SHARED_PLACEMENT);
    const input = {
      tenant,
      policy: defaultSyncPolicySpec,
      tenantObjects: [source],
      hostObjects: [shared],
      rules: rulesWith(dedicated),
    };
    const result = planKey(input, { kind: "Pod", namespace: "shop", name: "web" });
    expect(result.decisions).toEqual([]);
    expect(result.inSync).toHaveLength(1);
  });

  it("treats a change of the dedicated selector like a change of mode", () => {
    const source = pod();
    const before = copyOf(source, dedicated);
    const other: Placement = { mode: "Dedicated", nodeSelector: { "tenantplane.io/pool": "team-b" } };
    expect(planPod(source, other, [before]).decisions).toEqual([]);
    expect(planPod(source, other).decisions[0]?.object?.["spec"]).toMatchObject({
      nodeSelector: { "tenantplane.io/pool": "team-b" },
    });
  });
});
