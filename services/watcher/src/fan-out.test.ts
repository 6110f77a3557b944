import { describe, expect, it } from "vitest";
import { tenantKeyOf } from "@tenantplane/service";
import { InitialListGate, referencingChanges } from "./fan-out.js";

const tc = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, generation: 1 },
  spec: { isolationProfileRef: { name: "strict" }, syncPolicyRef: { name: "default" } },
  ...extra,
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
