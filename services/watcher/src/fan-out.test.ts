import { describe, expect, it } from "vitest";
import { InitialListGate, isMeaningfulUpdate, referencingChanges, tenantKeyOf } from "./fan-out.js";

const tc = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, generation: 1 },
  spec: { isolationProfileRef: { name: "strict" }, syncPolicyRef: { name: "default" } },
  ...extra,
});

describe("tenantKeyOf", () => {
  it("extracts the key fields", () => {
    expect(tenantKeyOf(tc("dev"))).toEqual({
      name: "dev",
      generation: 1,
      deletionTimestamp: undefined,
      isolationProfileRef: "strict",
      syncPolicyRef: "default",
    });
  });

  it("tolerates malformed objects", () => {
    expect(tenantKeyOf(undefined)).toBeUndefined();
    expect(tenantKeyOf({ metadata: {} })).toBeUndefined();
    expect(
      tenantKeyOf({ metadata: { name: "x" }, spec: { isolationProfileRef: "oops" } })?.isolationProfileRef,
    ).toBeUndefined();
  });
});

describe("isMeaningfulUpdate", () => {
  const base = tenantKeyOf(tc("dev"))!;
  it("ignores status writes, conditions included", () => {
    expect(isMeaningfulUpdate(base, { ...base })).toBe(false);
    const ready = tenantKeyOf(tc("dev", { status: { conditions: [{ type: "ControlPlaneReady", status: "True" }] } }))!;
    expect(isMeaningfulUpdate(base, ready)).toBe(false);
  });
  it("reacts to spec and deletion changes", () => {
    expect(isMeaningfulUpdate(base, { ...base, generation: 2 })).toBe(true);
    expect(isMeaningfulUpdate(base, { ...base, deletionTimestamp: "2026-01-01T00:00:00Z" })).toBe(true);
    expect(isMeaningfulUpdate(undefined, base)).toBe(true);
  });
});

describe("referencingChanges", () => {
  it("publishes one change per referencing tenant, sorted", () => {
    const tenants = [tc("b"), tc("a"), tc("c", { spec: { isolationProfileRef: { name: "other" } } })].map(
      (o) => tenantKeyOf(o)!,
    );
    expect(referencingChanges("IsolationProfile", "strict", tenants)).toEqual([
      { tenant: "a", generation: 1, reason: "IsolationProfileChanged" },
      { tenant: "b", generation: 1, reason: "IsolationProfileChanged" },
    ]);
    expect(referencingChanges("SyncPolicy", "default", tenants).map((c) => c.tenant)).toEqual(["a", "b"]);
    expect(referencingChanges("SyncPolicy", "missing", tenants)).toEqual([]);
  });
});

describe("InitialListGate", () => {
  it("drops the initial list's adds and lets everything after it through", () => {
    const gate = new InitialListGate();
    expect([gate.accepts("add"), gate.accepts("update"), gate.accepts("delete")]).toEqual([false, true, true]);
    gate.open();
    expect(gate.accepts("add")).toBe(true);
  });
});
