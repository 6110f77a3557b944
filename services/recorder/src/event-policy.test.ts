import type { Decision } from "@tenantplane/messaging";
import { describe, expect, it } from "vitest";
import { isRoutine, planEvents, ROUTINE_EVENTS } from "./event-policy.js";

const tc = { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", name: "dev", uid: "u-1" };
const base = {
  id: "1",
  time: "2026-01-01T00:00:00Z",
  tenant: "dev",
  service: "sync-worker",
  kind: "ConfigMap",
  tenantRef: { namespace: "default", name: "web" },
  hostRef: { namespace: "tp-dev", name: "web-x-default-x-dev", uid: "h-1" },
  reason: "host ConfigMap absent",
};
const of = (action: Decision["action"]) => ({ ...base, action }) as Decision;
const ATTENTION = ["Skip", "Delete", "Fail"] as const;

describe("planEvents", () => {
  it("counts routine Creates and Updates in their series by default, with no Event on the host object", () => {
    for (const action of ["Create", "Update"] as const) {
      const plan = planEvents(of(action), tc, {}, "aggregated");
      expect(plan.tenant?.write).toBe("series");
      expect(plan.tenant?.event).toMatchObject({ regarding: tc, type: "Normal", reason: `${action}ConfigMap` });
      expect(plan.host).toBeUndefined();
    }
  });

  it("writes Skip, Delete and Fail as Events of their own under every setting", () => {
    for (const routine of ROUTINE_EVENTS) {
      for (const action of ATTENTION) {
        const plan = planEvents(of(action), tc, {}, routine);
        expect(plan.tenant?.write, `${action} under ${routine}`).toBe("event");
        expect(plan.tenant?.event.reason).toBe(`${action}ConfigMap`);
        // Nothing to attach it to: the copy was not written (or is going away).
        expect(plan.host).toBeUndefined();
      }
    }
    // The ones a person should look at stay Warnings.
    expect(planEvents(of("Delete"), tc, {}, "aggregated").tenant?.event.type).toBe("Warning");
    expect(planEvents(of("Fail"), tc, {}, "none").tenant?.event.type).toBe("Warning");
    // Teardown of a TenantCluster being deleted is routine, but still its own Normal Event.
    expect(planEvents(of("Delete"), tc, { deleting: true }, "aggregated").tenant).toMatchObject({
      write: "event",
      event: { type: "Normal" },
    });
  });

  it("under each, writes an Event per Decision and its copy on the host object", () => {
    const plan = planEvents(of("Create"), tc, {}, "each");
    expect(plan.tenant?.write).toBe("event");
    expect(plan.host).toMatchObject({
      regarding: { kind: "ConfigMap", namespace: "tp-dev", name: "web-x-default-x-dev", uid: "h-1" },
      reason: "CreateConfigMap",
    });
  });

  it("under none, leaves routine Decisions to the stream and the host objects' annotations", () => {
    expect(planEvents(of("Create"), tc, {}, "none")).toEqual({ tenant: undefined, host: undefined });
    expect(planEvents(of("Update"), tc, {}, "none")).toEqual({ tenant: undefined, host: undefined });
  });

  it("calls only Creates and Updates of tenant objects' copies routine", () => {
    const all: Decision["action"][] = ["Create", "Update", ...ATTENTION];
    expect(all.filter((action) => isRoutine({ ...base, action }))).toEqual(["Create", "Update"]);
    const own = { ...base, service: "provisioner", tenantRef: { namespace: "", name: "dev" } };
    expect(all.filter((action) => isRoutine({ ...own, action }))).toEqual([]);
  });

  it("keeps an Event each, on the TenantCluster and on the object, for a tenant's own objects", () => {
    const own = {
      ...base,
      service: "provisioner",
      kind: "StatefulSet",
      action: "Create",
      tenantRef: { namespace: "", name: "dev" },
      hostRef: { namespace: "tp-dev", name: "k3s", uid: "h-2" },
      reason: "k3s control plane",
    } as Decision;
    for (const routine of ROUTINE_EVENTS) {
      const plan = planEvents(own, tc, {}, routine);
      expect(plan.tenant?.write, routine).toBe("event");
      expect(plan.host?.regarding).toMatchObject({ kind: "StatefulSet", name: "k3s", uid: "h-2" });
    }
  });
});
