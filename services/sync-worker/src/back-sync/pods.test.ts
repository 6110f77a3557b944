import { describe, expect, it } from "vitest";
import {
  asBound,
  lostPodStatus,
  planPod,
  schedulingProblem,
  statusPatch,
  syncFailedPatch,
  type PodLike,
} from "./pods.js";

const running = {
  phase: "Running",
  hostIP: "10.0.0.7",
  podIP: "10.244.1.5",
  podIPs: [{ ip: "10.244.1.5" }],
  startTime: "2026-01-01T00:00:00Z",
  qosClass: "Guaranteed",
  conditions: [
    { type: "PodScheduled", status: "True" },
    { type: "Ready", status: "True" },
  ],
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

  it("fails a pod the tenant created with its own spec.nodeName (never placed by the host), saying so", () => {
    const chosen = tenantPod({}, "host-node-1");
    const [step] = planPod({ tenant: chosen, host: undefined, hostListed: true });
    const patch = step?.action === "Status" ? step.patch : {};
    expect(patch).toMatchObject({ phase: "Failed", reason: "NodeNameSetInTenant" });
    expect(patch["message"]).toMatch(/^spec\.nodeName was set in the tenant: the host scheduler places every host Pod/);
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

describe("a refused or unschedulable host copy", () => {
  const refused = "the host refused to create this Pod's copy tp-t/web-1-x-shop-x-t (403 Forbidden): exceeded quota";
  it("shows the refusal as PodScheduled=False SyncFailed on the pending tenant Pod, once", () => {
    const steps = planPod({ tenant: tenantPod(), host: undefined, hostListed: true, syncFailure: refused });
    expect(steps).toEqual([
      {
        action: "Status",
        patch: {
          conditions: [
            {
              type: "PodScheduled",
              status: "False",
              reason: "SyncFailed",
              message: refused,
              lastTransitionTime: expect.any(String),
            },
          ],
        },
      },
    ]);
    const step = steps[0];
    const shown = tenantPod({ status: { phase: "Pending", ...(step?.action === "Status" ? step.patch : {}) } });
    expect(planPod({ tenant: shown, host: undefined, hostListed: true, syncFailure: refused })).toEqual([]);
    // The refusal ended (the next write will make the copy): the condition is taken back.
    expect(planPod({ tenant: shown, host: undefined, hostListed: true })).toEqual([
      { action: "Status", patch: { conditions: [] } },
    ]);
  });

  it("leaves other PodScheduled conditions, bound and finished Pods alone", () => {
    const scheduled = { type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/1 nodes" };
    expect(syncFailedPatch(tenantPod({ status: { conditions: [scheduled] } }), undefined)).toBeUndefined();
    expect(
      planPod({ tenant: tenantPod({}, "node-a"), host: undefined, hostListed: false, syncFailure: refused }),
    ).toEqual([]);
    const done = tenantPod({ status: { phase: "Succeeded" } });
    expect(planPod({ tenant: done, host: undefined, hostListed: true, syncFailure: refused })).toEqual([]);
  });

  it("keeps the time the Pod first became unscheduled when the message changes", () => {
    const since = "2026-01-01T00:00:00.000Z";
    const before = {
      type: "PodScheduled",
      status: "False",
      reason: "SyncFailed",
      message: "old",
      lastTransitionTime: since,
    };
    const patch = syncFailedPatch(tenantPod({ status: { conditions: [before] } }), "new");
    expect(patch).toEqual({ conditions: [{ ...before, message: "new" }] });
  });

  it("reads the host scheduler's reason and message from an unschedulable copy", () => {
    const message = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.";
    const pending = hostPod("", {
      phase: "Pending",
      conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message }],
    });
    expect(schedulingProblem(pending)).toEqual({ reason: "Unschedulable", message });
    expect(schedulingProblem(hostPod())).toBeUndefined();
    expect(schedulingProblem(undefined)).toBeUndefined();
    // Its conditions reach the tenant Pod as they are.
    expect(planPod({ tenant: tenantPod(), host: pending, hostListed: true })).toEqual([
      { action: "Status", patch: { conditions: pending.status!["conditions"] } },
    ]);
  });
});

describe("planPod for a Pod on the tenant's own node", () => {
  const onOwn = tenantPod({ status: running }, "own-1");

  it("never marks it Failed nor deletes it: that node's kubelet owns it", () => {
    expect(planPod({ tenant: onOwn, host: undefined, hostListed: true, onOwnNode: true })).toEqual([]);
    const deleting = { ...onOwn, metadata: { ...onOwn.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } };
    expect(planPod({ tenant: deleting, host: undefined, hostListed: true, onOwnNode: true })).toEqual([]);
    // Nor mirrors a host copy's status onto it (a duplicate copy the planner deletes).
    expect(planPod({ tenant: onOwn, host: hostPod("node-a"), hostListed: true, onOwnNode: true })).toEqual([]);
  });

  it("still marks a Pod bound to a virtual node Failed when its copy vanished", () => {
    const steps = planPod({ tenant: tenantPod({ status: running }, "node-a"), host: undefined, hostListed: true });
    expect(steps).toMatchObject([{ action: "Status", patch: { phase: "Failed" } }]);
  });
});

describe("planPod: writes a binding makes needless", () => {
  const scheduledOnly = {
    phase: "Pending",
    conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" }],
  };

  it("binds a copy that is only scheduled without a status write: the binding sets PodScheduled itself", () => {
    const steps = planPod({ tenant: tenantPod(), host: hostPod("node-a", scheduledOnly), hostListed: true });
    expect(steps).toEqual([{ action: "Bind", node: "node-a" }]);
  });

  it("writes no status when the conditions differ only in their times, and the host's list when they differ otherwise", () => {
    const bound = tenantPod(
      {
        status: {
          phase: "Pending",
          qosClass: "BestEffort",
          conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: "2026-01-01T00:00:03Z" }],
        },
      },
      "node-a",
    );
    expect(planPod({ tenant: bound, host: hostPod("node-a", scheduledOnly), hostListed: true })).toEqual([]);
    const ready = {
      ...scheduledOnly,
      conditions: [...scheduledOnly.conditions, { type: "Ready", status: "False", reason: "ContainersNotReady" }],
    };
    const [step] = planPod({ tenant: bound, host: hostPod("node-a", ready), hostListed: true });
    expect(step).toEqual({ action: "Status", patch: { conditions: ready.conditions } });
  });

  it("plans a Pod this worker bound as bound before the tenant cache shows it: no second binding, the same status", () => {
    const unbound = tenantPod();
    const [, status] = planPod({ tenant: unbound, host: hostPod(), hostListed: true });
    const again = planPod({ tenant: asBound(unbound, "node-a"), host: hostPod(), hostListed: true });
    expect(again).toEqual([status]);
    expect(
      planPod({ tenant: asBound(unbound, "node-a"), host: hostPod("node-a", scheduledOnly), hostListed: true }),
    ).toEqual([]);
    expect(unbound.spec).toEqual({});
  });
});
