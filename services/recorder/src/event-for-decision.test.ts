import { describe, expect, it } from "vitest";
import { eventForDecision } from "./event-for-decision.js";

const tc = { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", name: "dev", uid: "u-1" };
const decision = {
  id: "1",
  time: "2026-01-01T00:00:00Z",
  tenant: "dev",
  service: "sync-worker",
  kind: "Pod",
  tenantRef: { namespace: "default", name: "web" },
  hostRef: { namespace: "tp-dev", name: "web-x-default-x-dev" },
  reason: "host Pod absent",
};

describe("eventForDecision", () => {
  it("explains a Create as a Normal event on the TenantCluster", () => {
    expect(eventForDecision({ ...decision, action: "Create" }, tc)).toEqual({
      regarding: tc,
      type: "Normal",
      reason: "CreatePod",
      action: "Create",
      message: "Pod default/web -> host tp-dev/web-x-default-x-dev: host Pod absent [sync-worker]",
    });
  });

  it("makes deletes Warnings and skips Normal", () => {
    expect(eventForDecision({ ...decision, action: "Delete" }, tc).type).toBe("Warning");
    expect(eventForDecision({ ...decision, action: "Skip" }, tc).type).toBe("Normal");
  });

  it("omits the namespace of cluster-scoped references", () => {
    const event = eventForDecision(
      {
        ...decision,
        action: "Update",
        kind: "Namespace",
        tenantRef: { namespace: "", name: "dev" },
        hostRef: { namespace: "", name: "tp-dev" },
      },
      tc,
    );
    expect(event.message).toBe("Namespace dev -> host tp-dev: host Pod absent [sync-worker]");
  });

  it("names the tenant when its TenantCluster is gone", () => {
    const regarding = { apiVersion: tc.apiVersion, kind: tc.kind, name: "dev" };
    expect(eventForDecision({ ...decision, action: "Delete" }, regarding, true).message).toMatch(
      /\(tenant dev: its TenantCluster no longer exists\)$/,
    );
  });
});
