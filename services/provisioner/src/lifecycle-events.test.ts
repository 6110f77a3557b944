import { describe, expect, it } from "vitest";
import { LIFECYCLE_REASONS, readyEvent, teardownFinishedEvent, teardownStartedEvent } from "./lifecycle-events.js";

describe("lifecycle Events", () => {
  it("say the tenant is Ready with the endpoint a client uses, and the in-cluster one when it differs", () => {
    const event = readyEvent("dev", "u", "https://127.0.0.60:6443", "https://k3s.tp-dev.svc:6443");
    expect(event).toMatchObject({
      type: "Normal",
      reason: LIFECYCLE_REASONS.ready,
      regarding: { kind: "TenantCluster", name: "dev", uid: "u" },
    });
    expect(event.message).toBe(
      "tenant is Ready: its API answers at https://127.0.0.60:6443 (in the host cluster: https://k3s.tp-dev.svc:6443) and host namespace tp-dev is isolated",
    );
    expect(readyEvent("dev", "u", "https://k3s.tp-dev.svc:6443", "https://k3s.tp-dev.svc:6443").message).not.toContain(
      "in the host cluster",
    );
  });

  it("say what the teardown removes, and how long it took", () => {
    expect(teardownStartedEvent("dev", "u", "tp-dev", "delete-namespace")).toMatchObject({
      type: "Normal",
      reason: LIFECYCLE_REASONS.teardownStarted,
      message:
        "TenantCluster dev is being deleted: deleting host namespace tp-dev with the control plane and every host object of the tenant",
    });
    const finished = teardownFinishedEvent(
      "dev",
      "u",
      { state: "finished", namespace: "tp-dev", outcome: "deleted" },
      "2026-01-01T00:00:00.000Z",
      new Date("2026-01-01T00:00:25.400Z"),
    );
    expect(finished).toMatchObject({ type: "Normal", reason: LIFECYCLE_REASONS.teardownFinished });
    expect(finished.message).toBe(
      "teardown finished after 25 s: host namespace tp-dev and everything in it are deleted; releasing the finalizer",
    );
  });
});
