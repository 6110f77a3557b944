import { describe, expect, it } from "vitest";
import { LABEL_VIRTUAL_NODE, planNodes, virtualNode, type NodeLike } from "./nodes.js";
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
    const notReady: NodeLike = {
      ...hostNode,
      status: { ...hostNode.status, conditions: [{ type: "Ready", status: "False", reason: "KubeletNotReady" }] },
    };
    const plan = planNodes({
      hostNode: () => notReady,
      tenantNodes: [existing],
      tenantPods: [bound("p", "node-a")],
      hostPods: [],
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
});
