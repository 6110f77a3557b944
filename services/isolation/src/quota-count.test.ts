import { describe, expect, it } from "vitest";
import { quotaUncounted } from "./quota-count.js";

const quota = (spec?: Record<string, string>, status?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ResourceQuota",
  metadata: { name: "tenantplane-quota", namespace: "tp-a" },
  ...(spec ? { spec: { hard: spec } } : {}),
  ...(status ? { status: { hard: status, used: {} } } : {}),
});

describe("quotaUncounted", () => {
  it("is true for a quota the controller has not counted, or one not in the cache yet", () => {
    expect(quotaUncounted(quota({ pods: "2" }))).toBe(true);
    expect(quotaUncounted(quota({ pods: "2" }, {}))).toBe(true);
    expect(quotaUncounted(undefined)).toBe(true);
  });

  it("is false once counted, also while a later spec change waits for its count", () => {
    expect(quotaUncounted(quota({ pods: "2" }, { pods: "2" }))).toBe(false);
    expect(quotaUncounted(quota({ pods: "3", services: "1" }, { pods: "2" }))).toBe(false);
  });

  it("is false for a quota without limits, which the controller leaves uncounted", () => {
    expect(quotaUncounted(quota({}))).toBe(false);
    expect(quotaUncounted(quota())).toBe(false);
  });
});
