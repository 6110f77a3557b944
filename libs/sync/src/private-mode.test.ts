import { defaultIsolationProfileSpec, defaultSyncPolicySpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { compileHostRules, withEffectiveMode, withPlacement, type HostRules } from "./host-rules.js";
import { KubeObjectSchema } from "./kube-object.js";
import { plan, planKey, privateModeReason, privateNodeReason, type PlanInput } from "./plan.js";
import {
  parsePlacement,
  placementOf,
  placementText,
  PRIVATE_PLACEMENT,
  SHARED_PLACEMENT,
  type Placement,
} from "./placement.js";
import { planPodNetwork, PRIVATE_RECORDS_NOTE, type PodNetworkInput } from "./pod-network.js";
import { transform } from "./transform.js";

const tenant = "dev";
const dedicated: Placement = { mode: "Dedicated", nodeSelector: { "tenantplane.io/pool": "team-a" } };
const MODE_PRIVATE = "TenantCluster spec.isolation.mode is Private";

function pod(name = "web", spec: Record<string, unknown> = {}, status?: Record<string, unknown>) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "shop", uid: `uid-${name}` },
    spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
    ...(status === undefined ? {} : { status }),
  };
}

const bound = (name: string, node: string) =>
  pod(name, { nodeName: node }, { phase: "Running", conditions: [{ type: "PodScheduled", status: "True" }] });

function rulesWith(placement: Placement, loadBalancer = false): HostRules {
  const { workloads } = defaultIsolationProfileSpec;
  const services = { ...workloads.services, loadBalancer };
  return withPlacement(
    compileHostRules({ ...defaultIsolationProfileSpec, workloads: { ...workloads, services } }),
    placement,
  );
}

function copyOf(source: unknown, placement: Placement) {
  return transform(KubeObjectSchema.parse(source), tenant, { rules: rulesWith(placement) });
}

function input(tenantObjects: unknown[], hostObjects: unknown[], rules: HostRules, extra: Partial<PlanInput> = {}) {
  return { tenant, policy: defaultSyncPolicySpec, tenantObjects, hostObjects, rules, ...extra };
}

describe("Private placement", () => {
  it("is what a Private spec asks for, and reads back from its text", () => {
    expect(placementOf({ mode: "Private", migration: { evictBarePods: false } })).toEqual(PRIVATE_PLACEMENT);
    expect(placementText(PRIVATE_PLACEMENT)).toBe("Private");
    expect(parsePlacement("Private")).toEqual(PRIVATE_PLACEMENT);
  });
});

describe("plan in Private mode", () => {
  const privateRules = rulesWith(PRIVATE_PLACEMENT);

  it("makes no host copy of a Pod without one: one Skip naming the mode, marked once", () => {
    const result = plan(input([pod()], [], privateRules));
    expect(result.decisions).toEqual([
      expect.objectContaining({ action: "Skip", kind: "Pod", once: true, reason: privateModeReason("shop", "web") }),
    ]);
    expect(result.decisions[0]?.reason).toBe(
      `Pod shop/web has no host copy: ${MODE_PRIVATE}, so the tenant's own scheduler places it on nodes joined to the tenant's API and tenantplane syncs no Pod to the host`,
    );
    // The sync worker's per-key path says the same.
    const one = planKey(input([pod()], [], privateRules), { kind: "Pod", namespace: "shop", name: "web" });
    expect(one.decisions).toEqual(result.decisions);
  });

  it("keeps the host copy of a live Pod in the placement it was made for, updates reaching it", () => {
    for (const placement of [SHARED_PLACEMENT, dedicated]) {
      const copy = copyOf(pod(), placement);
      const steady = plan(input([pod()], [copy], privateRules));
      expect(steady.decisions).toEqual([]);
      expect(steady.inSync).toHaveLength(1);
      const changed = pod("web", { containers: [{ name: "c", image: "nginx:2" }] });
      const [update] = plan(input([changed], [copy], privateRules)).decisions;
      expect(update).toMatchObject({ action: "Update", object: copyOf(changed, placement) });
      expect(update?.reason).toContain("moves when the isolation migration evicts the tenant Pod");
    }
  });

  it("keeps the copy of a Pod bound to the virtual node of its host copy's node", () => {
    const copy = copyOf(pod(), SHARED_PLACEMENT);
    const result = plan(input([bound("web", "host-1")], [copy], privateRules, { privateNodes: new Set(["own-1"]) }));
    expect(result.decisions.filter((d) => d.action !== "Update")).toEqual([]);
  });

  it("deletes the copy of a Pod gone from the tenant, the reason naming the mode", () => {
    const copy = copyOf(pod(), SHARED_PLACEMENT);
    const result = plan(input([], [copy], privateRules));
    expect(result.decisions).toEqual([expect.objectContaining({ action: "Delete", kind: "Pod" })]);
    expect(result.decisions[0]?.reason).toBe(
      `source Pod shop/web gone from tenant dev; ${MODE_PRIVATE}: no host copy is made again, and its token Secret (owned by the host Pod) goes with it`,
    );
    // Shared says nothing of a mode.
    expect(plan(input([], [copy], rulesWith(SHARED_PLACEMENT))).decisions[0]?.reason).toBe(
      "source Pod shop/web gone from tenant dev",
    );
  });

  it("deletes the host copy of a Pod the tenant's own scheduler bound to its own node: a duplicate", () => {
    const copy = copyOf(pod(), SHARED_PLACEMENT);
    const result = plan(input([bound("web", "own-1")], [copy], privateRules, { privateNodes: new Set(["own-1"]) }));
    expect(result.decisions.map((d) => [d.action, d.once])).toEqual([
      ["Delete", undefined],
      ["Skip", true],
    ]);
    expect(result.decisions[0]?.reason).toContain(MODE_PRIVATE);
  });

  it("syncs other kinds as before", () => {
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: "shop" }, data: { a: "1" } };
    expect(plan(input([cm], [], privateRules)).decisions.map((d) => d.action)).toEqual(["Create"]);
  });
});

describe("a Pod on the tenant's own node, in every mode", () => {
  for (const placement of [SHARED_PLACEMENT, dedicated]) {
    it(`is never copied in ${placement.mode}: a Skip naming the node, marked once`, () => {
      const result = plan(
        input([bound("web", "own-1")], [], rulesWith(placement), { privateNodes: new Set(["own-1"]) }),
      );
      expect(result.decisions).toEqual([
        expect.objectContaining({ action: "Skip", once: true, reason: privateNodeReason("shop", "web", "own-1") }),
      ]);
      expect(result.decisions[0]?.reason).toBe(
        "Pod shop/web runs on node own-1, which joined the tenant's own API (not a virtual node of tenantplane): it is never copied to the host",
      );
    });
  }

  it("a Pod bound to a virtual node whose copy is gone is still lost, not the tenant's own", () => {
    const result = plan(
      input([bound("web", "host-1")], [], rulesWith(SHARED_PLACEMENT), { privateNodes: new Set(["own-1"]) }),
    );
    expect(result.decisions).toEqual([]);
    expect(result.ignored[0]?.reason).toContain("is bound to node host-1 but its host Pod is gone");
  });

  it("a pending Pod is copied as before once the mode is Shared again", () => {
    const result = plan(input([pod()], [], rulesWith(SHARED_PLACEMENT), { privateNodes: new Set(["own-1"]) }));
    expect(result.decisions.map((d) => d.action)).toEqual(["Create"]);
  });
});

describe("LoadBalancer Services and the mode in effect", () => {
  const lb = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "front", namespace: "shop" },
    spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
  };
  const sharedRules = rulesWith(SHARED_PLACEMENT, true);

  it("are still made while Private is asked for but not in effect (the Pods have not moved yet)", () => {
    const asked = rulesWith(PRIVATE_PLACEMENT, true);
    expect(plan(input([lb], [], asked)).decisions.map((d) => d.action)).toEqual(["Create"]);
    expect(withEffectiveMode(asked, "Shared")).toEqual(asked);
  });

  it("are refused once Private is in effect, and a copy made before is deleted, each naming the mode", () => {
    const copy = transform(KubeObjectSchema.parse(lb), tenant, { rules: sharedRules });
    const rules = withEffectiveMode(rulesWith(PRIVATE_PLACEMENT, true), "Private");
    const result = plan(input([lb], [copy], rules));
    expect(result.decisions.map((d) => d.action)).toEqual(["Delete", "Skip"]);
    const skip = result.decisions[1]?.reason ?? "";
    expect(skip).toBe(
      "refused by host rules: spec.type: LoadBalancer is not made on the host while TenantCluster status.isolation.mode is Private: a host load balancer cannot reach Pods on the tenant's own nodes; expose the Service on those nodes' own network instead (a NodePort Service on them, or a load balancer in front of them)",
    );
    expect(result.decisions[0]?.reason).toBe(`source Service shop/front is not synced: ${skip}`);
    // A ClusterIP Service is synced as before.
    const plain = { ...lb, metadata: { name: "api", namespace: "shop" }, spec: { ports: [{ port: 80 }] } };
    expect(plan(input([plain], [], rules)).decisions.map((d) => d.action)).toEqual(["Create"]);
  });

  it("only Private is recorded as the mode in effect", () => {
    expect(withEffectiveMode(sharedRules, "Dedicated")).toEqual(sharedRules);
    expect(withEffectiveMode(withEffectiveMode(sharedRules, "Private"), "Shared")).toEqual(sharedRules);
  });
});

describe("planPodNetwork in Private mode", () => {
  const svc = KubeObjectSchema.parse({
    apiVersion: "v1",
    kind: "Service",
    metadata: { namespace: "shop", name: "web" },
    spec: { ports: [{ port: 80 }] },
  });
  const hostSvc = { ...transform(svc, tenant), spec: { ports: [{ port: 80 }], clusterIP: "10.96.1.1" } };
  const base: PodNetworkInput = {
    tenant,
    environment: { apiHost: "10.96.0.10", apiPort: 6443, dnsHost: "10.96.0.53" },
    tenantServices: [svc],
    tenantPods: [],
    hostServices: [hostSvc],
    hostPods: [],
    hostConfigMaps: [],
    complete: true,
  };
  const records = planPodNetwork(base).decisions.flatMap((d) => (d.object === undefined ? [] : [d.object]));

  it("deletes the DNS zone and service links once no host Pod copy is left, naming the mode", () => {
    const result = planPodNetwork({ ...base, hostConfigMaps: records, privateMode: true });
    expect(result.decisions.map((d) => [d.action, d.hostRef.name, d.reason])).toEqual([
      ["Delete", "service-links.shop", `service links of tenant namespace shop: ${PRIVATE_RECORDS_NOTE}`],
      ["Delete", "tenant-dns-records", `tenant DNS zone cluster.local: ${PRIVATE_RECORDS_NOTE}`],
    ]);
    expect(PRIVATE_RECORDS_NOTE).toContain(MODE_PRIVATE);
    // Nothing is written for a tenant that has none.
    expect(planPodNetwork({ ...base, privateMode: true }).decisions).toEqual([]);
  });

  it("keeps them while a host Pod copy is left, and deletes nothing from incomplete listings", () => {
    const hostPod = copyOf(pod(), SHARED_PLACEMENT);
    const kept = planPodNetwork({ ...base, hostConfigMaps: records, hostPods: [hostPod], privateMode: true });
    expect(kept.decisions).toEqual([]);
    expect(kept.inSync).toHaveLength(2);
    const partial = planPodNetwork({ ...base, hostConfigMaps: records, privateMode: true, complete: false });
    expect(partial.decisions.filter((d) => d.action === "Delete")).toEqual([]);
  });
});
