import { describe, expect, it } from "vitest";
import { nextCondition, statusUpToDate } from "./tenant-status.js";

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

describe("statusUpToDate", () => {
  const manager = "tenantplane-provisioner";
  const current = {
    metadata: {
      managedFields: [
        { manager, subresource: "status", fieldsV1: { "f:status": { "f:phase": {}, "f:externalEndpoint": {} } } },
      ],
    },
    status: {
      phase: "Provisioning" as const,
      externalEndpoint: "https://10.0.0.1:6443",
      conditions: [{ ...earlier, observedGeneration: 2 }],
    },
  };
  const input = { ...earlier, observedGeneration: 2 };

  it("is true when the condition and every owned field already hold", () => {
    expect(
      statusUpToDate(current, manager, input, { phase: "Provisioning", externalEndpoint: "https://10.0.0.1:6443" }),
    ).toBe(true);
  });

  it("is false when the condition's message or generation moved", () => {
    expect(statusUpToDate(current, manager, { ...input, message: "other" }, { phase: "Provisioning" })).toBe(false);
    expect(statusUpToDate(current, manager, { ...input, observedGeneration: 3 }, { phase: "Provisioning" })).toBe(
      false,
    );
  });

  it("is false when an owned field would be removed", () => {
    expect(statusUpToDate(current, manager, input, { phase: "Provisioning" })).toBe(false);
  });
});
