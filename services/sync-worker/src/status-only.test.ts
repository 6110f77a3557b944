import type { RawObject } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { boundNodeOnlyChange, statusOnlyChange } from "./status-only.js";

const pod = (
  over: { rv?: string; phase?: string; labels?: Record<string, string>; image?: string } = {},
): RawObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web",
    namespace: "shop",
    resourceVersion: over.rv ?? "1",
    labels: over.labels ?? { app: "web" },
    managedFields: [{ manager: over.rv ?? "1" }],
  },
  spec: { containers: [{ name: "c", image: over.image ?? "nginx" }] },
  status: { phase: over.phase ?? "Pending" },
});

describe("statusOnlyChange", () => {
  it("is true when only the status (and the write's version and managed fields) changed", () => {
    expect(statusOnlyChange(pod(), pod({ rv: "2", phase: "Running" }))).toBe(true);
  });

  it("is false when the spec, a label or the deletion changed beside the status", () => {
    expect(statusOnlyChange(pod(), pod({ rv: "2", phase: "Running", image: "nginx:2" }))).toBe(false);
    expect(statusOnlyChange(pod(), pod({ rv: "2", phase: "Running", labels: { app: "api" } }))).toBe(false);
    const deleting = pod({ rv: "2", phase: "Running" });
    deleting.metadata.deletionTimestamp = "2026-12-02T00:00:00Z";
    expect(statusOnlyChange(pod(), deleting)).toBe(false);
  });

  it("is false when the status did not change: a new version with the same status is planned as before", () => {
    expect(statusOnlyChange(pod(), pod({ rv: "2" }))).toBe(false);
    const stub = (rv: string): RawObject => ({ kind: "ConfigMap", metadata: { name: "big", resourceVersion: rv } });
    expect(statusOnlyChange(stub("1"), stub("2"))).toBe(false);
  });

  it("is false when a field appears or goes away", () => {
    const withData = { ...pod({ rv: "2", phase: "Running" }), data: { a: "1" } };
    expect(statusOnlyChange(pod(), withData)).toBe(false);
  });
});

describe("boundNodeOnlyChange", () => {
  const bound = (p: RawObject, node: string, scheduled = true): RawObject => ({
    ...p,
    metadata: { ...p.metadata, resourceVersion: "2" },
    spec: { ...(p["spec"] as object), nodeName: node },
    ...(scheduled ? { status: { phase: "Pending", conditions: [{ type: "PodScheduled", status: "True" }] } } : {}),
  });

  it("names the node when the binding (and the status) is all that changed", () => {
    expect(boundNodeOnlyChange(pod(), bound(pod(), "node-a"))).toBe("node-a");
    expect(boundNodeOnlyChange(pod(), bound(pod(), "node-a", false))).toBe("node-a");
  });

  it("is undefined for a Pod already bound, or unbound, or changed beside its binding", () => {
    expect(boundNodeOnlyChange(bound(pod(), "node-a"), bound(pod(), "node-b"))).toBeUndefined();
    expect(boundNodeOnlyChange(pod(), pod({ rv: "2", phase: "Running" }))).toBeUndefined();
    expect(boundNodeOnlyChange(pod(), bound(pod({ image: "nginx:2" }), "node-a"))).toBeUndefined();
    expect(boundNodeOnlyChange(pod(), bound(pod({ labels: { app: "api" } }), "node-a"))).toBeUndefined();
    const service = { ...pod(), kind: "Service" };
    expect(boundNodeOnlyChange(service, bound(service, "node-a"))).toBeUndefined();
  });
});
