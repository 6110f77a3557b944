import { describe, expect, it } from "vitest";
import { FailureMemory, type FailedAttempt } from "./failure-memory.js";

const quota = { code: 403, reason: "Forbidden", message: "exceeded quota: q, used: pods=2, limited: pods=2" };
const attempt = (over: Partial<FailedAttempt> = {}): FailedAttempt => ({
  kind: "Pod",
  tenantRef: { namespace: "shop", name: "web" },
  hostRef: { namespace: "tp-dev", name: "web-x-shop-x-dev" },
  error: quota,
  transient: false,
  hostWrite: true,
  ...over,
});

describe("FailureMemory", () => {
  it("publishes a refusal once per error, not on every retry", () => {
    const m = new FailureMemory();
    expect(m.note("k", attempt(), 0)).toBe(true);
    expect(m.note("k", attempt(), 30_000)).toBe(false);
    expect(m.note("k", attempt({ error: { ...quota, message: "used: pods=3" } }), 60_000)).toBe(true);
    expect(m.get("k")).toMatchObject({ since: 0, published: true, sequence: 2, error: { message: "used: pods=3" } });
    // Back to the first answer: a change again, and a Fail of its own.
    expect(m.note("k", attempt(), 90_000)).toBe(true);
    expect(m.get("k")?.sequence).toBe(3);
  });

  it("keeps transient failures quiet until they persisted, then publishes them once", () => {
    const m = new FailureMemory(60_000);
    const busy = attempt({ transient: true, error: { code: 503, reason: "ServiceUnavailable", message: "busy" } });
    expect(m.note("k", busy, 0)).toBe(false);
    expect(m.note("k", busy, 59_999)).toBe(false);
    expect(m.get("k")?.published).toBe(false);
    expect(m.note("k", busy, 60_000)).toBe(true);
    expect(m.note("k", busy, 120_000)).toBe(false);
  });

  it("counts a transient run from its own start, not from an earlier refusal", () => {
    const m = new FailureMemory(60_000);
    expect(m.note("k", attempt(), 0)).toBe(true);
    const busy = attempt({ transient: true, error: { code: 500, reason: "InternalError", message: "etcd" } });
    expect(m.note("k", busy, 90_000)).toBe(false);
    expect(m.note("k", busy, 150_000)).toBe(true);
  });

  it("starts afresh after a success, and never publishes what no host write answered", () => {
    const m = new FailureMemory();
    m.note("k", attempt(), 0);
    expect(m.forget("k")?.published).toBe(true);
    expect(m.get("k")).toBeUndefined();
    expect(m.note("k", attempt(), 10)).toBe(true);
    expect(m.note("other", attempt({ hostWrite: false }), 10)).toBe(false);
    expect(m.list().map((f) => f.since)).toEqual([10, 10]);
  });

  it("lists the oldest standing failure first", () => {
    const m = new FailureMemory();
    m.note("a", attempt(), 0);
    m.note("b", attempt({ tenantRef: { namespace: "shop", name: "b" } }), 1);
    m.note("a", attempt(), 2);
    expect(m.list().map((f) => f.tenantRef.name)).toEqual(["web", "b"]);
  });
});
