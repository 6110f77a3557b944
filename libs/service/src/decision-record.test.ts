import { describe, expect, it } from "vitest";
import { DecisionRecords, decisionRecordAnnotation, recordedDecisionOf, withRecord } from "./decision-record.js";

const RECORD = decisionRecordAnnotation("tenantplane-isolation");

describe("recordedDecisionOf", () => {
  const annotated = (value: string) => ({ metadata: { annotations: { [RECORD]: value } } });
  it("reads a recorded decision, as withRecord writes it", () => {
    const recorded = { id: "i", time: "2026-01-01T00:00:00.000Z", action: "Create" as const, reason: "r" };
    expect(recordedDecisionOf(annotated(JSON.stringify(recorded)))).toEqual(recorded);
    const written = withRecord({ metadata: { name: "q", annotations: { a: "b" } } }, recorded, "tenantplane-isolation");
    expect(written.metadata.annotations).toEqual({ a: "b", [RECORD]: JSON.stringify(recorded) });
    expect(recordedDecisionOf(written, "tenantplane-isolation")).toEqual(recorded);
  });
  it("ignores anything else", () => {
    expect(recordedDecisionOf({ metadata: {} })).toBeUndefined();
    expect(recordedDecisionOf(annotated("not json"))).toBeUndefined();
    expect(recordedDecisionOf(annotated(JSON.stringify({ id: "i", action: "Explode" })))).toBeUndefined();
    // The sync worker's record (one key, no service suffix) is not a control-plane service's.
    expect(recordedDecisionOf({ metadata: { annotations: { "tenantplane.io/decision": "{}" } } })).toBeUndefined();
  });
  it("leaves a Decision another service recorded on a shared object to that service", () => {
    const recorded = {
      id: "i",
      time: "2026-01-01T00:00:00.000Z",
      action: "Update",
      reason: "Pod Security labels",
      manager: "tenantplane-isolation",
    };
    const namespace = annotated(JSON.stringify(recorded));
    expect(RECORD).toBe("tenantplane.io/decision.isolation");
    expect(recordedDecisionOf(namespace, "tenantplane-provisioner")).toBeUndefined();
    expect(recordedDecisionOf(namespace, "tenantplane-isolation")).toEqual(recorded);
    expect(recordedDecisionOf(namespace)).toEqual(recorded);
  });
});

describe("DecisionRecords", () => {
  const start = Date.parse("2026-11-30T00:00:00.000Z");
  const at = (ms: number) => ({ id: `d-${ms}`, time: new Date(start + ms).toISOString() });

  it("republishes a record younger than the server's duplicate window less a margin, once per process", () => {
    let now = start;
    const records = new DecisionRecords(() => now);
    records.useDuplicateWindow(600_000);
    expect(records.windowMs).toBe(570_000);
    now = start + 569_999;
    expect(records.shouldRepublish(at(0))).toBe(true);
    now = start + 570_000;
    expect(records.shouldRepublish(at(0))).toBe(false);
    // Published here already: the stream has it, nothing to send.
    records.markPublished(at(1_000).id);
    expect(records.shouldRepublish(at(1_000))).toBe(false);
    expect(records.shouldRepublish(at(2_000))).toBe(true);
  });

  it("follows a shorter window an operator set, and never republishes a record from the future or without a time", () => {
    let now = start;
    const records = new DecisionRecords(() => now);
    records.useDuplicateWindow(120_000);
    now = start + 91_000;
    expect(records.shouldRepublish(at(0))).toBe(false);
    expect(records.shouldRepublish(at(2_000))).toBe(true);
    expect(records.shouldRepublish(at(200_000))).toBe(false);
    expect(records.shouldRepublish({ id: "x", time: "not a time" })).toBe(false);
    records.useDuplicateWindow(10_000);
    expect(records.windowMs).toBe(0);
    expect(records.shouldRepublish(at(91_000))).toBe(false);
  });

  it("forgets ids once their window has passed, so memory stays bounded", () => {
    let now = start;
    const records = new DecisionRecords(() => now);
    records.useDuplicateWindow(60_000);
    records.markPublished("old");
    now = start + 31_000;
    records.markPublished("new");
    // "old" is past the window: forgotten (and too old to republish anyway).
    expect(records.shouldRepublish({ id: "new", time: new Date(now).toISOString() })).toBe(false);
    expect(records.shouldRepublish({ id: "old", time: new Date(now).toISOString() })).toBe(true);
  });
});
