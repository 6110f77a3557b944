import { describe, expect, it } from "vitest";
import {
  API_PROBE_RETRY_MAX_MS,
  API_PROBE_RETRY_MS,
  POD_LOOK_AFTER_MS,
  apiProbeRetryMs,
  podChangeMatters,
} from "./pod-wake.js";

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

describe("apiProbeRetryMs", () => {
  const now = Date.parse("2026-11-30T12:00:00Z");
  const readySince = (ms: number, status = "True") => ({
    status: {
      conditions: [
        { type: "PodScheduled", status: "True", lastTransitionTime: new Date(now - 3_600_000).toISOString() },
        { type: "Ready", status, lastTransitionTime: new Date(now - ms).toISOString() },
      ],
    },
  });

  it("probes every API_PROBE_RETRY_MS while the pod has just become Ready", () => {
    expect(apiProbeRetryMs(readySince(0), now)).toBe(API_PROBE_RETRY_MS);
    expect(apiProbeRetryMs(readySince(4 * API_PROBE_RETRY_MS), now)).toBe(API_PROBE_RETRY_MS);
  });

  it("waits a quarter of the time the pod has been Ready, up to API_PROBE_RETRY_MAX_MS", () => {
    expect(apiProbeRetryMs(readySince(60_000), now)).toBe(15_000);
    expect(apiProbeRetryMs(readySince(120_000), now)).toBe(30_000);
    expect(apiProbeRetryMs(readySince(4 * API_PROBE_RETRY_MAX_MS), now)).toBe(API_PROBE_RETRY_MAX_MS);
    expect(apiProbeRetryMs(readySince(86_400_000), now)).toBe(API_PROBE_RETRY_MAX_MS);
  });

  it("starts over from API_PROBE_RETRY_MS without a pod, a Ready pod or a readable time", () => {
    expect(apiProbeRetryMs(undefined, now)).toBe(API_PROBE_RETRY_MS);
    expect(apiProbeRetryMs(null, now)).toBe(API_PROBE_RETRY_MS);
    expect(apiProbeRetryMs(readySince(600_000, "False"), now)).toBe(API_PROBE_RETRY_MS);
    expect(apiProbeRetryMs({ status: { conditions: [{ type: "Ready", status: "True" }] } }, now)).toBe(
      API_PROBE_RETRY_MS,
    );
  });

  it("never waits less than API_PROBE_RETRY_MS for a Ready time in the future (clock skew)", () => {
    expect(apiProbeRetryMs(readySince(-600_000), now)).toBe(API_PROBE_RETRY_MS);
  });
});
