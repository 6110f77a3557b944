import type { V1ContainerStatus, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { describePodWait } from "./pod-wait.js";

const pod = (overrides: { spec?: V1Pod["spec"]; status?: V1Pod["status"]; deleting?: boolean } = {}): V1Pod => ({
  metadata: { name: "k3s-0", ...(overrides.deleting ? { deletionTimestamp: new Date() } : {}) },
  spec: { containers: [{ name: "k3s" }], ...overrides.spec },
  status: overrides.status ?? { phase: "Pending" },
});

/** The pod on node-a, its one container k3s in `state`. */
const scheduledWith = (phase: string, state: NonNullable<V1ContainerStatus["state"]>, restartCount = 0): V1Pod =>
  pod({
    spec: { nodeName: "node-a", containers: [{ name: "k3s" }] },
    status: {
      phase,
      containerStatuses: [{ name: "k3s", image: "rancher/k3s", imageID: "", ready: false, restartCount, state }],
    },
  });

describe("describePodWait", () => {
  it("says the pod was never created and where to look", () => {
    expect(describePodWait([], "k3s-0")).toMatch(/^pod k3s-0 does not exist: .*FailedCreate Events/);
  });

  it("quotes the scheduler's reason for an unscheduled pod", () => {
    const unscheduled = pod({
      status: {
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            message: "0/3 nodes are available: 3 Insufficient memory.",
          },
        ],
      },
    });
    expect(describePodWait([unscheduled], "k3s-0")).toBe(
      "pod k3s-0 is not scheduled: Unschedulable: 0/3 nodes are available: 3 Insufficient memory.",
    );
    expect(describePodWait([pod()], "k3s-0")).toBe("pod k3s-0 is waiting to be scheduled");
  });

  it("names a waiting or failed container, but not one that is merely being created", () => {
    const waiting = scheduledWith("Pending", {
      waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" },
    });
    expect(describePodWait([waiting], "k3s-0")).toBe(
      "pod k3s-0 on node node-a: container k3s is waiting: ImagePullBackOff: Back-off pulling image",
    );
    const crashed = scheduledWith("Running", { terminated: { exitCode: 1, reason: "Error" } }, 3);
    expect(describePodWait([crashed], "k3s-0")).toBe("pod k3s-0 on node node-a: container k3s exited 1: Error");
    const creating = scheduledWith("Pending", { waiting: { reason: "ContainerCreating" } });
    expect(describePodWait([creating], "k3s-0")).toBe("pod k3s-0 on node node-a is Pending, not Ready yet");
  });

  it("gives the Ready condition's reason for a running pod that is not Ready, and says when it is going", () => {
    const running = pod({
      spec: { nodeName: "node-a", containers: [{ name: "k3s" }] },
      status: {
        phase: "Running",
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "ContainersNotReady",
            message: "containers with unready status: [k3s]",
          },
        ],
      },
    });
    expect(describePodWait([running], "k3s-0")).toBe(
      "pod k3s-0 on node node-a is Running, not Ready yet (ContainersNotReady: containers with unready status: [k3s])",
    );
    expect(describePodWait([pod({ deleting: true })], "k3s-0")).toBe("pod k3s-0 is being deleted");
  });
});
