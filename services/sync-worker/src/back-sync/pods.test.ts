import { describe, expect, it } from "vitest";
import { lostPodStatus, planPod, statusPatch, type PodLike } from "./pods.js";

const running = {
  phase: "Running",
  hostIP: "10.0.0.7",
  podIP: "10.244.1.5",
  podIPs: [{ ip: "10.244.1.5" }],
  startTime: "2026-01-01T00:00:00Z",
  qosClass: "Guaranteed",
  conditions: [{ type: "Ready", status: "True" }],
  containerStatuses: [{ name: "app", ready: true, state: { running: { startedAt: "2026-01-01T00:00:01Z" } } }],
};

function tenantPod(extra: Partial<PodLike> = {}, nodeName?: string): PodLike {
  return {
    metadata: { name: "web-1", namespace: "shop", uid: "t-uid" },
    spec: nodeName === undefined ? {} : { nodeName },
    status: { phase: "Pending", qosClass: "BestEffort" },
    ...extra,
  };
}

function hostPod(nodeName = "node-a", status: Record<string, unknown> = running): PodLike {
  return { metadata: { name: "web-1-x-shop-x-t", namespace: "tp-t" }, spec: { nodeName }, status };
}

describe("planPod", () => {
  it("binds an unbound tenant pod to its host node and mirrors the status, keeping the tenant's qosClass", () => {
    const steps = planPod({ tenant: tenantPod(), host: hostPod(), hostListed: true });
    expect(steps[0]).toEqual({ action: "Bind", node: "node-a" });
    expect(steps[1]).toMatchObject({
      action: "Status",
      patch: { phase: "Running", podIP: "10.244.1.5", hostIP: "10.0.0.7", podIPs: [{ ip: "10.244.1.5" }] },
    });
    const second = steps[1]!;
    expect(second.action === "Status" && "qosClass" in second.patch).toBe(false);
  });

  it("does nothing once the tenant shows what the host has, whatever the key order", () => {
    const mirrored = Object.fromEntries(Object.entries(running).reverse());
    const pod = tenantPod({ status: { ...mirrored, qosClass: "BestEffort" } }, "node-a");
    expect(planPod({ tenant: pod, host: hostPod(), hostListed: true })).toEqual([]);
  });

  it("does not bind a host pod that is not scheduled yet, but shows its Pending status", () => {
    const pending = {
      phase: "Pending",
      conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable" }],
    };
    const steps = planPod({ tenant: tenantPod(), host: hostPod("", pending), hostListed: true });
    expect(steps.map((s) => s.action)).toEqual(["Status"]);
  });

  it("clears fields the host no longer reports", () => {
    const pod = tenantPod({ status: { ...running, nominatedNodeName: "x" } }, "node-a");
    expect(statusPatch(pod.status!, running)).toEqual({ nominatedNodeName: null });
  });

  it("marks a bound pod whose host copy vanished Failed, never Running", () => {
    const pod = tenantPod({ status: running }, "node-a");
    const [step] = planPod({ tenant: pod, host: undefined, hostListed: true });
    expect(step?.action).toBe("Status");
    const patch = step!.action === "Status" ? step!.patch : {};
    expect(patch).toMatchObject({ phase: "Failed", reason: "HostPodDeleted" });
    expect(JSON.stringify(patch["conditions"])).toContain('"type":"Ready","status":"False"');
    expect(JSON.stringify(patch["containerStatuses"])).toContain("ContainerStatusUnknown");
  });

  it("names an eviction when the host copy's last state carried one", () => {
    const evicted = hostPod("node-a", {
      ...running,
      conditions: [
        {
          type: "DisruptionTarget",
          status: "True",
          reason: "EvictionByEvictionAPI",
          message: "Eviction API: evicting",
        },
      ],
    });
    const patch = lostPodStatus(tenantPod({ status: running }, "node-a"), evicted);
    expect(patch).toMatchObject({ phase: "Failed", reason: "Evicted" });
    expect(patch["message"]).toContain("Eviction API");
  });

  it("says nothing while the host listing is not current, and nothing for an unbound or finished pod", () => {
    expect(planPod({ tenant: tenantPod({ status: running }, "node-a"), host: undefined, hostListed: false })).toEqual(
      [],
    );
    expect(planPod({ tenant: tenantPod(), host: undefined, hostListed: true })).toEqual([]);
    const failed = tenantPod({ status: { phase: "Failed" } }, "node-a");
    expect(planPod({ tenant: failed, host: undefined, hostListed: true })).toEqual([]);
  });

  it("finishes the deletion of a terminating tenant pod once the host copy is gone, and not before", () => {
    const deleting = tenantPod({}, "node-a");
    deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    expect(planPod({ tenant: deleting, host: undefined, hostListed: true })).toEqual([
      { action: "Delete", reason: "host copy deleted" },
    ]);
    const terminating = hostPod();
    expect(planPod({ tenant: deleting, host: terminating, hostListed: true }).map((s) => s.action)).toEqual(["Status"]);
  });
});
