import { describe, expect, it } from "vitest";
import { LABEL_VIRTUAL_NODE, planNodes, virtualNode, type NodeInput, type NodeLike } from "./nodes.js";
import type { PodLike } from "./pods.js";

const hostNode: NodeLike = {
  metadata: {
    name: "node-a",
    labels: {
      "kubernetes.io/hostname": "node-a",
      "kubernetes.io/arch": "amd64",
      "topology.kubernetes.io/zone": "z1",
      "team.example.com/secret-project": "x",
      "node-role.kubernetes.io/control-plane": "",
    },
  },
  status: {
    capacity: { cpu: "32", memory: "256Gi", pods: "110" },
    allocatable: { cpu: "31", memory: "250Gi", pods: "110" },
    conditions: [
      { type: "MemoryPressure", status: "False" },
      {
        type: "Ready",
        status: "True",
        reason: "KubeletReady",
        message: "ok",
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ],
    addresses: [
      { type: "InternalIP", address: "10.0.0.7" },
      { type: "ExternalIP", address: "203.0.113.9" },
    ],
    nodeInfo: { kubeletVersion: "v1.34.0", machineID: "abc", kernelVersion: "6.1" },
  },
};

const notReady: NodeLike = {
  ...hostNode,
  status: { ...hostNode.status, conditions: [{ type: "Ready", status: "False", reason: "KubeletNotReady" }] },
};

const bound = (name: string, node: string, phase = "Running"): PodLike => ({
  metadata: { name },
  spec: { nodeName: node },
  status: { phase },
});

describe("virtualNode", () => {
  it("shows safe labels, capacity, allocatable, Ready and the internal address, tainted against the tenant scheduler", () => {
    const v = virtualNode(hostNode);
    expect(v.metadata.labels).toEqual({
      "kubernetes.io/hostname": "node-a",
      "kubernetes.io/arch": "amd64",
      "topology.kubernetes.io/zone": "z1",
      "app.kubernetes.io/managed-by": "tenantplane",
      [LABEL_VIRTUAL_NODE]: "true",
    });
    expect(v.spec).toEqual({ taints: [{ key: LABEL_VIRTUAL_NODE, value: "true", effect: "NoSchedule" }] });
    expect(v.status).toMatchObject({
      capacity: { cpu: "32", memory: "256Gi", pods: "110" },
      allocatable: { cpu: "31", memory: "250Gi", pods: "110" },
      addresses: [{ type: "InternalIP", address: "10.0.0.7" }],
      nodeInfo: { kubeletVersion: "v1.34.0" },
    });
    const conditions = (v.status as { conditions: { type: string; status: string }[] }).conditions;
    expect(conditions.map((c) => [c.type, c.status])).toEqual([["Ready", "True"]]);
    expect(JSON.stringify(v)).not.toMatch(/machineID|secret-project|203\.0\.113/);
  });
});

describe("planNodes", () => {
  const hostNodes = (name: string) => (name === "node-a" ? hostNode : undefined);

  it("creates a virtual node for a host copy scheduled there, before its tenant pod is bound", () => {
    const plan = planNodes({ hostNode: hostNodes, tenantNodes: [], tenantPods: [], hostPods: [bound("p", "node-a")] });
    expect(plan.create.map((n) => n.metadata.name)).toEqual(["node-a"]);
    expect(plan.delete).toEqual([]);
  });

  it("keeps an in-use virtual node that matches, and deletes one whose last live pod is gone", () => {
    const existing = virtualNode(hostNode);
    const stale = {
      ...virtualNode({ metadata: { name: "node-b" } }),
      metadata: { name: "node-b", labels: { [LABEL_VIRTUAL_NODE]: "true" } },
    };
    const plan = planNodes({
      hostNode: hostNodes,
      tenantNodes: [existing, stale],
      tenantPods: [bound("p", "node-a"), bound("done", "node-b", "Failed")],
      hostPods: [],
    });
    expect(plan).toEqual({ create: [], updateStatus: [], delete: [stale] });
  });

  it("follows the host node's Ready condition", () => {
    const existing = virtualNode(hostNode);
    const plan = planNodes({
      hostNode: () => notReady,
      tenantNodes: [existing],
      tenantPods: [bound("p", "node-a")],
      hostPods: [bound("p-x-web-x-dev", "node-a")],
    });
    expect(plan.updateStatus).toHaveLength(1);
    expect(JSON.stringify(plan.updateStatus[0]!.status)).toContain('"status":"False"');
  });

  it("never touches a tenant node it did not make", () => {
    const own: NodeLike = { metadata: { name: "node-a", labels: {} } };
    const plan = planNodes({
      hostNode: hostNodes,
      tenantNodes: [own],
      tenantPods: [bound("p", "node-a")],
      hostPods: [],
    });
    expect(plan).toEqual({ create: [], updateStatus: [], delete: [] });
  });

  // A tenant writes its own Pods' spec.nodeName (and may make Node objects labelled as ours):
  // none of that may make back-sync read a host node out to it.
  describe("a node name the tenant chose", () => {
    const otherHostNode: NodeLike = { ...hostNode, metadata: { ...hostNode.metadata, name: "node-b" } };
    const byName = (name: string) => ({ "node-a": hostNode, "node-b": otherHostNode })[name];
    const seen = (
      hostNode: NodeInput["hostNode"],
      tenantNodes: NodeLike[],
      tenantPods: PodLike[],
      hostPods: PodLike[],
    ) => planNodes({ hostNode, tenantNodes, tenantPods, hostPods });

    it("mirrors nothing when a tenant Pod names a host node and no host copy runs there", () => {
      const plan = seen(byName, [], [bound("p", "node-a")], []);
      expect(plan).toEqual({ create: [], updateStatus: [], delete: [] });
    });

    it("mirrors the node the host placed the copy on, not the one the tenant Pod names", () => {
      const plan = seen(byName, [], [bound("p", "node-b")], [bound("p-x-web-x-dev", "node-a")]);
      expect(plan.create.map((n) => n.metadata.name)).toEqual(["node-a"]);
      expect(JSON.stringify(plan)).not.toContain("node-b");
    });

    it("never fills a Node the tenant made and labelled as ours with a host node's status", () => {
      const forged: NodeLike = { metadata: { name: "node-a", labels: { [LABEL_VIRTUAL_NODE]: "true" } }, status: {} };
      const plan = seen(byName, [forged], [bound("p", "node-a")], []);
      expect(plan).toEqual({ create: [], updateStatus: [], delete: [] });
    });

    it("keeps a virtual node under a bound Pod whose copy just vanished, without refreshing it, and drops it once no Pod is left", () => {
      const existing = virtualNode(hostNode);
      const kept = seen(() => notReady, [existing], [bound("p", "node-a")], []);
      expect(kept).toEqual({ create: [], updateStatus: [], delete: [] });
      const gone = seen(() => notReady, [existing], [bound("p", "node-a", "Failed")], []);
      expect(gone.delete).toEqual([existing]);
    });
  });
});

describe("planNodes and the tenant's own nodes", () => {
  it("never deletes, updates or shadows a Node without the virtual-node label, even with nothing on it", () => {
    const own: NodeLike = { metadata: { name: "own-1", labels: { "kubernetes.io/hostname": "own-1" } }, status: {} };
    const plan = planNodes({
      hostNode: () => undefined,
      tenantNodes: [own],
      tenantPods: [
        { metadata: { name: "p", namespace: "shop" }, spec: { nodeName: "own-1" }, status: { phase: "Running" } },
      ],
      hostPods: [],
    });
    expect(plan).toEqual({ create: [], updateStatus: [], delete: [] });
    // A host copy placed on a host node of the same name does not take it over either.
    const same = planNodes({
      hostNode: () => hostNode,
      tenantNodes: [own],
      tenantPods: [],
      hostPods: [{ metadata: { name: "c", namespace: "tp-t" }, spec: { nodeName: "own-1" } }],
    });
    expect(same).toEqual({ create: [], updateStatus: [], delete: [] });
  });
});
