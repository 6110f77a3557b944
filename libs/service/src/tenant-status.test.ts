import { describe, expect, it } from "vitest";
import { nextCondition } from "./tenant-status.js";

const earlier = {
  type: "ControlPlaneReady",
  status: "False" as const,
  reason: "WaitingForPod",
  message: "pod not ready",
  lastTransitionTime: "2026-01-01T00:00:00.000Z",
};

describe("nextCondition", () => {
  const now = new Date("2026-02-02T00:00:00.000Z");

  it("keeps the transition time while the status holds", () => {
    const next = nextCondition(
      [earlier],
      { type: "ControlPlaneReady", status: "False", reason: "APIUnreachable", message: "m", observedGeneration: 3 },
      now,
    );
    expect(next).toEqual({
      type: "ControlPlaneReady",
      status: "False",
      reason: "APIUnreachable",
      message: "m",
      observedGeneration: 3,
      lastTransitionTime: earlier.lastTransitionTime,
    });
  });

  it("moves the transition time when the status flips or the condition is new", () => {
    expect(
      nextCondition([earlier], { type: "ControlPlaneReady", status: "True", reason: "Ready", message: "" }, now)
        .lastTransitionTime,
    ).toBe(now.toISOString());
    expect(
      nextCondition(undefined, { type: "IsolationApplied", status: "True", reason: "Applied", message: "" }, now)
        .lastTransitionTime,
    ).toBe(now.toISOString());
  });
});
