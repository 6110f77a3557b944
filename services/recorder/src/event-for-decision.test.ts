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
      reportingComponent: "sync-worker",
      message: "created Pod tp-dev/web-x-default-x-dev from tenant Pod default/web: host Pod absent",
    });
  });

  it("makes deletes Warnings and skips Normal", () => {
    expect(eventForDecision({ ...decision, action: "Delete" }, tc).type).toBe("Warning");
    expect(eventForDecision({ ...decision, action: "Skip" }, tc).type).toBe("Normal");
  });

  it("says what happened to which host object first, and leaves out a source that is the TenantCluster itself", () => {
    const event = eventForDecision(
      {
        ...decision,
        service: "provisioner",
        action: "Update",
        kind: "Secret",
        tenantRef: { namespace: "", name: "dev" },
        hostRef: { namespace: "tp-dev", name: "dev-kubeconfig" },
        reason: "admin kubeconfig for https://127.0.0.2:6443",
      },
      tc,
    );
    expect(event.message).toBe("updated Secret tp-dev/dev-kubeconfig: admin kubeconfig for https://127.0.0.2:6443");
    expect(event.reportingComponent).toBe("provisioner");
  });

  it("omits the namespace of cluster-scoped host objects", () => {
    const event = eventForDecision(
      {
        ...decision,
        service: "provisioner",
        action: "Create",
        kind: "Namespace",
        tenantRef: { namespace: "", name: "dev" },
        hostRef: { namespace: "", name: "tp-dev" },
        reason: "host namespace for TenantCluster dev",
      },
      tc,
    );
    expect(event.message).toBe("created Namespace tp-dev: host namespace for TenantCluster dev");
  });

  it("says skipped, with the reason that names the holder", () => {
    const event = eventForDecision({ ...decision, action: "Skip", reason: "name held by a foreign object" }, tc);
    expect(event.message).toBe(
      "skipped Pod tp-dev/web-x-default-x-dev from tenant Pod default/web: name held by a foreign object",
    );
  });

  it("names the tenant when its TenantCluster is gone", () => {
    const regarding = { apiVersion: tc.apiVersion, kind: tc.kind, name: "dev" };
    expect(eventForDecision({ ...decision, action: "Delete" }, regarding, true).message).toMatch(
      /\(tenant dev: its TenantCluster no longer exists\)$/,
    );
  });
});
