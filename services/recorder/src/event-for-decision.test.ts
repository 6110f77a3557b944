import { describe, expect, it } from "vitest";
import { eventForDecision, hostEventForDecision } from "./event-for-decision.js";

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

  it("makes a Fail a Warning that names the refused write and keeps the host's words", () => {
    const error = { code: 403, reason: "Forbidden", message: "exceeded quota: q", attempted: "Create" as const };
    const event = eventForDecision({ ...decision, action: "Fail", reason: "Forbidden: exceeded quota: q", error }, tc);
    expect(event).toMatchObject({ type: "Warning", reason: "FailPod", action: "Fail" });
    expect(event.message).toBe(
      "host refused to create Pod tp-dev/web-x-default-x-dev from tenant Pod default/web: Forbidden: exceeded quota: q",
    );
    expect(eventForDecision({ ...decision, action: "Fail" }, tc, { deleting: true }).message).toMatch(
      /^host refused to write/,
    );
    expect(
      hostEventForDecision({ ...decision, action: "Fail", hostRef: { ...decision.hostRef, uid: "u" } }),
    ).toBeUndefined();
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
    expect(eventForDecision({ ...decision, action: "Delete" }, regarding, { gone: true }).message).toMatch(
      /\(tenant dev: its TenantCluster no longer exists\)$/,
    );
  });

  it("makes the deletes of a tenant's own teardown Normal", () => {
    const namespaceDelete = {
      ...decision,
      service: "provisioner",
      action: "Delete" as const,
      kind: "Namespace",
      tenantRef: { namespace: "", name: "dev" },
      hostRef: { namespace: "", name: "tp-dev" },
      reason: "TenantCluster dev is being deleted",
    };
    expect(eventForDecision(namespaceDelete, tc).type).toBe("Warning");
    expect(eventForDecision(namespaceDelete, tc, { deleting: true }).type).toBe("Normal");
    expect(eventForDecision(namespaceDelete, tc, { gone: true }).type).toBe("Warning");
  });
});

describe("hostEventForDecision", () => {
  const synced = {
    ...decision,
    action: "Create" as const,
    kind: "ConfigMap",
    tenantRef: { namespace: "shop", name: "web-config" },
    hostRef: { namespace: "tp-dev", name: "web-config-x-shop-x-dev", uid: "cm-uid" },
    reason: "host ConfigMap tp-dev/web-config-x-shop-x-dev absent",
  };

  it("puts an Event on the host object a Decision created, saying where it comes from and why", () => {
    expect(hostEventForDecision(synced)).toEqual({
      regarding: {
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "web-config-x-shop-x-dev",
        namespace: "tp-dev",
        uid: "cm-uid",
      },
      type: "Normal",
      reason: "CreateConfigMap",
      action: "Create",
      reportingComponent: "sync-worker",
      message:
        "created for tenant dev from tenant ConfigMap shop/web-config: host ConfigMap tp-dev/web-config-x-shop-x-dev absent",
    });
  });

  it("names the API group of the provisioner's StatefulSet", () => {
    const event = hostEventForDecision({
      ...synced,
      service: "provisioner",
      action: "Update",
      kind: "StatefulSet",
      tenantRef: { namespace: "", name: "dev" },
      hostRef: { namespace: "tp-dev", name: "k3s", uid: "sts-uid" },
      reason: "k3s control plane",
    });
    expect(event?.regarding.apiVersion).toBe("apps/v1");
    expect(event?.message).toBe("updated for tenant dev: k3s control plane");
  });

  it("has nothing to attach to for deletes, skips, cluster-scoped objects, unknown uids or kinds", () => {
    expect(hostEventForDecision({ ...synced, action: "Delete" })).toBeUndefined();
    expect(hostEventForDecision({ ...synced, action: "Skip" })).toBeUndefined();
    expect(hostEventForDecision({ ...synced, hostRef: { namespace: "tp-dev", name: "x" } })).toBeUndefined();
    expect(
      hostEventForDecision({ ...synced, kind: "Namespace", hostRef: { namespace: "", name: "tp-dev", uid: "u" } }),
    ).toBeUndefined();
    expect(hostEventForDecision({ ...synced, kind: "Widget" })).toBeUndefined();
  });
});
