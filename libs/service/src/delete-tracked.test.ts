import { describe, expect, it } from "vitest";
import { PENDING_DELETE_PREFIX, parseRecordedDelete, pendingDeleteKey } from "./delete-tracked.js";

const recorded = {
  id: "0123abcd-4567-89ab-cdef-0123456789ab",
  time: "2026-01-01T00:00:00.000Z",
  action: "Delete",
  reason: "profile no longer produces it",
  target: { apiVersion: "v1", kind: "ResourceQuota", name: "q", namespace: "tp-dev", uid: "u-1" },
};

describe("pending deletes", () => {
  it("keys each pending Delete with a valid annotation name", () => {
    const key = pendingDeleteKey(recorded.id);
    expect(key.startsWith(PENDING_DELETE_PREFIX)).toBe(true);
    const name = key.split("/")[1]!;
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/);
  });

  it("reads back what deleteTracked records, and nothing else", () => {
    expect(parseRecordedDelete(JSON.stringify(recorded))).toEqual(recorded);
    expect(parseRecordedDelete(JSON.stringify({ ...recorded, action: "Create" }))).toBeUndefined();
    expect(parseRecordedDelete(JSON.stringify({ ...recorded, target: { kind: "X" } }))).toBeUndefined();
    expect(parseRecordedDelete("{")).toBeUndefined();
  });
});
