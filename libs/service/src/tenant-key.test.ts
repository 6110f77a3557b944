import { describe, expect, it } from "vitest";
import type { CacheEvent, RawObject } from "@tenantplane/kube";
import { isMeaningfulUpdate, profileReferrersOf, tenantKeyOf, tenantSpecChangeOf } from "./tenant-key.js";

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

const raw = (name: string, extra: Record<string, unknown> = {}): RawObject =>
  ({ apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", ...tc(name, extra) }) as RawObject;
const event = (type: CacheEvent["type"], object: RawObject, previous?: RawObject, ours = false): CacheEvent => ({
  type,
  object,
  ...(previous ? { previous } : {}),
  ours,
});

describe("tenantSpecChangeOf", () => {
  it("wakes a new, respecified, deleting or removed TenantCluster", () => {
    expect(tenantSpecChangeOf(event("add", raw("dev")))).toBe("dev");
    const respecified = raw("dev", { metadata: { name: "dev", generation: 2 } });
    expect(tenantSpecChangeOf(event("update", respecified, raw("dev")))).toBe("dev");
    const deleting = raw("dev", {
      metadata: { name: "dev", generation: 1, deletionTimestamp: "2026-12-01T00:00:00Z" },
    });
    expect(tenantSpecChangeOf(event("update", deleting, raw("dev")))).toBe("dev");
    expect(tenantSpecChangeOf(event("delete", raw("dev")))).toBe("dev");
  });

  it("leaves status writes, the service's own writes and other kinds alone", () => {
    const ready = raw("dev", { status: { conditions: [{ type: "ControlPlaneReady", status: "True" }] } });
    expect(tenantSpecChangeOf(event("update", ready, raw("dev")))).toBeUndefined();
    expect(tenantSpecChangeOf(event("add", raw("dev"), undefined, true))).toBeUndefined();
    const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "tp-dev" } } as RawObject;
    expect(tenantSpecChangeOf(event("add", ns))).toBeUndefined();
  });
});

describe("profileReferrersOf", () => {
  const profile = (name: string) =>
    ({ apiVersion: "tenantplane.io/v1alpha1", kind: "IsolationProfile", metadata: { name } }) as RawObject;
  const tenants = [
    raw("a"),
    raw("b", { spec: { isolationProfileRef: { name: "open" } } }),
    raw("c"),
    raw("d", { spec: {} }),
  ];

  it("names every tenant that references the changed profile", () => {
    expect(profileReferrersOf(event("update", profile("strict"), profile("strict")), () => tenants)).toEqual([
      "a",
      "c",
    ]);
    expect(profileReferrersOf(event("add", profile("open")), () => tenants)).toEqual(["b"]);
    expect(profileReferrersOf(event("delete", profile("gone")), () => tenants)).toEqual([]);
  });

  it("ignores other kinds", () => {
    expect(profileReferrersOf(event("add", raw("strict")), () => tenants)).toEqual([]);
  });
});
