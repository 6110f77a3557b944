import { describe, expect, it } from "vitest";
import { describeFailures, describePacing, syncedCondition, syncStatusField } from "./sync-status.js";

const base = { inSync: 3, skipped: 1, failed: 0, down: undefined, started: true, lastFullPass: new Date(0) };

describe("syncedCondition", () => {
  it("is True with counts when everything converged", () => {
    expect(syncedCondition(base)).toMatchObject({
      status: "True",
      reason: "Synced",
      message: "3 in sync, 1 skipped, 0 failed",
    });
  });
  it("is False naming the cause while the tenant API is down, whatever the counts", () => {
    const c = syncedCondition({ ...base, down: "connect ECONNREFUSED 127.0.0.170:6443" });
    expect(c).toMatchObject({ status: "False", reason: "TenantAPIUnavailable" });
    expect(c.message).toContain("ECONNREFUSED");
    expect(c.message).toContain("nothing is deleted");
  });
  it("is False when objects failed, and Unknown before the first pass", () => {
    expect(syncedCondition({ ...base, failed: 2 })).toMatchObject({ status: "False", reason: "ObjectErrors" });
    expect(syncedCondition({ ...base, started: false })).toMatchObject({ status: "Unknown" });
  });
  it("is False while back-sync writes to the tenant fail, after forward errors", () => {
    const c = syncedCondition({ ...base, backSyncFailed: 1 });
    expect(c).toMatchObject({ status: "False", reason: "BackSyncErrors" });
    expect(c.message).toContain("1 object whose host status cannot be written back");
    expect(syncedCondition({ ...base, failed: 1, backSyncFailed: 1 })).toMatchObject({ reason: "ObjectErrors" });
    expect(syncedCondition({ ...base, backSyncFailed: 0 })).toMatchObject({ status: "True" });
  });
  it("is False while the byte budget holds writes back, after limits and errors", () => {
    const paced = describePacing(12_400, 2 * 1024 * 1024, 37);
    expect(paced).toBe(
      "host writes of this tenant's objects are paced to 2 MiB/s (the worker's TENANT_WRITE_BYTES_PER_SECOND) " +
        "and have waited for it for 12 s; 37 objects waiting their turn",
    );
    const c = syncedCondition({ ...base, paced });
    expect(c).toMatchObject({ status: "False", reason: "WritesPaced" });
    expect(c.message).toContain("(3 in sync, 1 skipped, 0 failed)");
    expect(syncedCondition({ ...base, paced, failed: 1 })).toMatchObject({ reason: "ObjectErrors" });
    expect(syncedCondition({ ...base, paced, limited: "1 ConfigMap over 1.5 MiB" })).toMatchObject({
      reason: "TenantLimitExceeded",
    });
  });
});

describe("describePacing", () => {
  it("says nothing of a brief hold, and names the budget and the queue of a long one", () => {
    expect(describePacing(4_999, 1000, 10)).toBeUndefined();
    expect(describePacing(5_000, 60_000, 1)).toBe(
      "host writes of this tenant's objects are paced to 58.6 KiB/s (the worker's TENANT_WRITE_BYTES_PER_SECOND) " +
        "and have waited for it for 5 s; 1 object waiting their turn",
    );
    expect(describePacing(7_000, 60_000, 0)).not.toContain("waiting their turn");
  });
});

describe("describeFailures", () => {
  const failure = (name: string, message: string) => ({
    kind: "Pod",
    tenantRef: { namespace: "shop", name },
    error: { message },
  });
  it("names each failed object with its error, up to three, and counts the rest", () => {
    const failures = ["a", "b", "c", "d"].map((n) => failure(n, `refused ${n}`));
    expect(describeFailures(failures, 5)).toBe(
      "Pod shop/a: refused a; Pod shop/b: refused b; Pod shop/c: refused c; and 2 more",
    );
    expect(describeFailures(failures.slice(0, 1), 1)).toBe("Pod shop/a: refused a");
    expect(describeFailures([], 2)).toBe("");
  });
  it("keeps each error on one line and cuts a long one", () => {
    const text = describeFailures([failure("web", `line one\n  line two ${"x".repeat(400)}`)], 1);
    expect(text).toMatch(/^Pod shop\/web: line one line two x+…$/);
    expect(text.length).toBeLessThan(260);
  });
  it("puts the names in the ObjectErrors condition", () => {
    const quota =
      'pods "web-x-shop-x-dev" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2';
    const c = syncedCondition({ ...base, failed: 1, failures: [failure("web", quota)] });
    expect(c).toMatchObject({ status: "False", reason: "ObjectErrors" });
    expect(c.message).toBe(`3 in sync, 1 skipped, 1 failed: Pod shop/web: ${quota}`);
  });
});

describe("syncStatusField", () => {
  it("writes the counts and the last full pass as RFC 3339", () => {
    expect(syncStatusField(base)).toEqual({
      inSync: 3,
      skipped: 1,
      failed: 0,
      lastFullPass: "1970-01-01T00:00:00.000Z",
    });
  });
});
