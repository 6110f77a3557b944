import { describe, expect, it } from "vitest";
import { DecisionSchema, TenantChangeSchema, compareVersions, decisionId, stampDecision, subjects } from "./index.js";

const planned = {
  tenant: "dev",
  action: "Create" as const,
  kind: "Pod",
  tenantRef: { namespace: "default", name: "web" },
  hostRef: { namespace: "tp-dev", name: "web-x-default-x-dev" },
  reason: "host Pod absent",
};

describe("Decision contract", () => {
  it("stamps id, time and service and stays schema-valid", () => {
    const d = stampDecision(planned, "sync-worker", new Date("2026-01-02T03:04:05Z"));
    expect(d).toMatchObject({ ...planned, service: "sync-worker", time: "2026-01-02T03:04:05.000Z" });
    expect(d.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it("derives the id from what was decided, so a republish after a redelivery keeps it", () => {
    const first = stampDecision(planned, "sync-worker", new Date("2026-01-02T03:04:05Z"));
    const again = stampDecision(planned, "sync-worker", new Date("2026-01-02T03:09:00Z"));
    expect(again.id).toBe(first.id);
    expect(stampDecision({ ...planned, reason: "other" }, "sync-worker").id).not.toBe(first.id);
    expect(stampDecision(planned, "isolation").id).not.toBe(first.id);
    expect(decisionId(planned, "s", "uid-1@7")).not.toBe(decisionId(planned, "s", "uid-1@8"));
  });

  it("keeps the id and time of a recorded Decision", () => {
    const recorded = { ...planned, id: "abc", time: "2026-01-01T00:00:00.000Z" };
    expect(stampDecision(recorded, "s")).toMatchObject({ id: "abc", time: "2026-01-01T00:00:00.000Z" });
  });

  it("rejects unknown actions and missing references, naming the field", () => {
    const bad = DecisionSchema.safeParse({ ...stampDecision(planned, "s"), action: "Patch" });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["action"]);
    const noHost = DecisionSchema.safeParse({ ...stampDecision(planned, "s"), hostRef: { namespace: "x" } });
    expect(noHost.error?.issues[0]?.path).toEqual(["hostRef", "name"]);
  });

  it("carries the host API's answer on a Fail, and the answer is part of the id", () => {
    const error = {
      code: 403,
      reason: "Forbidden",
      message: "exceeded quota: q, requested: pods=1",
      attempted: "Create" as const,
    };
    const fail = stampDecision({ ...planned, action: "Fail", reason: "host refused the Create", error }, "s");
    expect(DecisionSchema.parse(fail).error).toEqual(error);
    const other = { ...planned, action: "Fail" as const, reason: "host refused the Create" };
    expect(stampDecision({ ...other, error: { ...error, message: "used: pods=2" } }, "s").id).not.toBe(fail.id);
    expect(decisionId(planned, "s")).toBe(stampDecision(planned, "s").id);
    const bad = DecisionSchema.safeParse({ ...fail, error: { ...error, code: "403" } });
    expect(bad.error?.issues[0]?.path).toEqual(["error", "code"]);
  });

  it("validates tenant-change keys", () => {
    expect(TenantChangeSchema.parse({ tenant: "dev", reason: "Resync" })).toEqual({ tenant: "dev", reason: "Resync" });
    expect(TenantChangeSchema.safeParse({ tenant: "dev", reason: "Because" }).success).toBe(false);
  });
});

describe("subjects", () => {
  it("builds the documented subjects", () => {
    expect(subjects.tenantChanged("dev")).toBe("tenantplane.tenants.dev.changed");
    expect(subjects.decision("dev", "Pod", "Create")).toBe("tenantplane.decisions.dev.Pod.Create");
    expect(subjects.decision("dev", "Pod", "Fail")).toBe("tenantplane.decisions.dev.Pod.Fail");
  });

  it("refuses tokens that would widen a subscription", () => {
    expect(() => subjects.tenantChanged("a.b")).toThrow(/invalid NATS subject token/);
    expect(() => subjects.decision("dev", "*", "Create")).toThrow();
    expect(() => subjects.decision("dev", "Pod", ">")).toThrow();
  });
});

describe("compareVersions", () => {
  it("orders versions numerically", () => {
    expect(compareVersions("2.9.10", "2.11.0")).toBeLessThan(0);
    expect(compareVersions("2.14.9", "2.11.0")).toBeGreaterThan(0);
    expect(compareVersions("2.11.0-RC.1", "2.11.0")).toBe(0);
  });
});
