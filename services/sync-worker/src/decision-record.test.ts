import type { RawObject } from "@tenantplane/kube";
import type { PlannedDecision } from "@tenantplane/messaging";
import type { HostObject } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import { ANNOTATION_DECISION } from "@tenantplane/mapping";
import { REPUBLISH_WITHIN_MS, deleteId, newRecord, recordOf, republishable, withRecord } from "./decision-record.js";

const copy: HostObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "web-x-shop-x-acme", namespace: "tp-acme", labels: {}, annotations: { a: "1" } },
  data: { k: "v" },
} as HostObject;

const planned = (reason: string): PlannedDecision => ({
  tenant: "acme",
  action: "Delete",
  kind: "ConfigMap",
  tenantRef: { namespace: "shop", name: "web" },
  hostRef: { namespace: "tp-acme", name: "web-x-shop-x-acme" },
  reason,
});

describe("recorded Decisions on host copies", () => {
  it("round-trips through the annotation without touching the object it was given", () => {
    const record = newRecord({ action: "Update", reason: "host copy differs from the desired object" });
    const stamped = withRecord(copy, record);
    expect(copy.metadata.annotations).toEqual({ a: "1" });
    expect(stamped.metadata.annotations?.["a"]).toBe("1");
    expect(recordOf(stamped as unknown as RawObject)).toEqual(record);
  });

  it("gives two writes for the same reason two ids, so neither is dropped as a duplicate", () => {
    const reason = "host copy differs from the desired object";
    expect(newRecord({ action: "Update", reason }).id).not.toBe(newRecord({ action: "Update", reason }).id);
  });

  it("records only writes", () => {
    expect(() => newRecord({ action: "Delete", reason: "gone" })).toThrow(/only writes/);
  });

  it("reads nothing from a missing, malformed or foreign-shaped annotation", () => {
    const withText = (text: string) =>
      ({ ...copy, metadata: { ...copy.metadata, annotations: { [ANNOTATION_DECISION]: text } } }) as RawObject;
    expect(recordOf(copy as unknown as RawObject)).toBeUndefined();
    expect(recordOf(withText("{not json"))).toBeUndefined();
    expect(
      recordOf(withText(JSON.stringify({ id: "x", action: "Delete", reason: "r", time: new Date().toISOString() }))),
    ).toBeUndefined();
  });

  it("republishes only inside the stream's duplicate window", () => {
    const now = Date.parse("2026-01-01T00:10:00Z");
    const at = (ms: number) => ({ ...newRecord({ action: "Create", reason: "r" }), time: new Date(ms).toISOString() });
    expect(republishable(at(now - 1_000), now)).toBe(true);
    expect(republishable(at(now - REPUBLISH_WITHIN_MS + 1), now)).toBe(true);
    expect(republishable(at(now - REPUBLISH_WITHIN_MS), now)).toBe(false);
    // A clock that ran ahead on the writer must not make an old record look fresh forever.
    expect(republishable(at(now + 60_000), now)).toBe(false);
    expect(REPUBLISH_WITHIN_MS).toBeLessThan(120_000);
    // A duplicate window shortened by an operator shortens the republish window with it.
    expect(republishable(at(now - 40_000), now, 60_000)).toBe(true);
    expect(republishable(at(now - 60_000), now, 60_000)).toBe(false);
  });

  it("derives a Delete's id from the host uid alone, whatever the reason's wording", () => {
    expect(deleteId(planned("source deleted"), "sync-worker", "u1")).toBe(
      deleteId(planned("namespace shop deleted"), "sync-worker", "u1"),
    );
    expect(deleteId(planned("source deleted"), "sync-worker", "u1")).not.toBe(
      deleteId(planned("source deleted"), "sync-worker", "u2"),
    );
  });
});
