import { describe, expect, it } from "vitest";
import type { CacheEvent } from "@tenantplane/kube";
import { reservationsToWake } from "./node-events.js";

const KEY = "tenantplane.io/dedicated";
const node = (labels: Record<string, string>, taints: unknown[] = [], status = "Ready") => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: "n1", labels },
  spec: { taints },
  status: { phase: status },
});
const tc = (name: string, isolation?: unknown, deleting = false) => ({
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "TenantCluster",
  metadata: { name, generation: 1, ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
  spec: isolation === undefined ? {} : { isolation },
});
const dedicated = (pool: string) => ({ mode: "Dedicated", dedicated: { nodeSelector: { pool } } });
const tenants = [tc("a", dedicated("a")), tc("b", dedicated("b")), tc("shared")];
const event = (e: Omit<CacheEvent, "ours">): CacheEvent => ({ ours: false, ...e }) as CacheEvent;

describe("reservationsToWake", () => {
  it("wakes the tenants a relabelled node leaves and joins", () => {
    const e = event({ type: "update", previous: node({ pool: "a" }), object: node({ pool: "b" }) });
    expect(reservationsToWake(e, undefined, () => tenants)).toEqual(["a", "b"]);
  });

  it("wakes nobody for a node's status heartbeat, and reads no tenants for it", () => {
    const e = event({
      type: "update",
      previous: node({ pool: "a" }, [], "Ready"),
      object: node({ pool: "a" }, [], "x"),
    });
    expect(
      reservationsToWake(e, undefined, () => {
        throw new Error("tenants read for a heartbeat");
      }),
    ).toEqual([]);
  });

  it("wakes the tenant a new node's taint names, even one that is gone", () => {
    const e = event({ type: "add", object: node({}, [{ key: KEY, value: "old", effect: "NoSchedule" }]) });
    expect(reservationsToWake(e, undefined, () => tenants)).toEqual(["old"]);
  });

  it("wakes every other Dedicated tenant when a Dedicated tenant's spec changes or it goes", () => {
    const change = event({ type: "update", previous: tc("a", dedicated("a")), object: tc("a", { mode: "Shared" }) });
    expect(reservationsToWake(change, "a", () => tenants)).toEqual(["b"]);
    const deleting = event({
      type: "update",
      previous: tc("a", dedicated("a")),
      object: tc("a", dedicated("a"), true),
    });
    expect(reservationsToWake(deleting, "a", () => tenants)).toEqual(["b"]);
  });

  it("wakes a new Dedicated tenant itself, whose namespace may not exist yet", () => {
    const added = event({ type: "add", object: tc("a", dedicated("a")) });
    expect(reservationsToWake(added, "a", () => tenants)).toEqual(["a", "b"]);
    expect(reservationsToWake(event({ type: "add", object: tc("shared") }), "shared", () => tenants)).toEqual([]);
  });

  it("wakes no peer for a tenant that never was Dedicated, or a status write", () => {
    const e = event({ type: "update", previous: tc("shared"), object: tc("shared", { mode: "Shared" }) });
    expect(reservationsToWake(e, "shared", () => tenants)).toEqual([]);
    const status = event({ type: "update", previous: tc("a", dedicated("a")), object: tc("a", dedicated("a")) });
    expect(reservationsToWake(status, undefined, () => tenants)).toEqual([]);
  });
});
