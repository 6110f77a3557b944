import { describe, expect, it } from "vitest";
import { POD_LOOK_AFTER_MS, podChangeMatters } from "./pod-wake.js";

const sts = (createdAt: number) => ({
  metadata: { name: "k3s", creationTimestamp: new Date(createdAt).toISOString() },
});

describe("podChangeMatters", () => {
  const now = Date.parse("2026-11-30T12:00:00Z");

  it("ignores a starting pod's steps while its StatefulSet is young", () => {
    expect(podChangeMatters("add", sts(now - 1_000), now)).toBe(false);
    expect(podChangeMatters("update", sts(now - POD_LOOK_AFTER_MS + 1), now)).toBe(false);
  });

  it("wakes for a pod of a StatefulSet old enough to be described", () => {
    expect(podChangeMatters("update", sts(now - POD_LOOK_AFTER_MS), now)).toBe(true);
    expect(podChangeMatters("add", sts(now - 3_600_000), now)).toBe(true);
  });

  it("always wakes for a deleted pod, or one whose StatefulSet is not known", () => {
    expect(podChangeMatters("delete", sts(now), now)).toBe(true);
    expect(podChangeMatters("update", null, now)).toBe(true);
    expect(podChangeMatters("update", undefined, now)).toBe(true);
    expect(podChangeMatters("update", { metadata: {} }, now)).toBe(true);
  });
});
