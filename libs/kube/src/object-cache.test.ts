import { describe, expect, it } from "vitest";
import { matchesSelector } from "./object-cache.js";

describe("matchesSelector", () => {
  const labels = { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "a" };

  it("understands equality, inequality, existence and absence", () => {
    expect(matchesSelector(labels, "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/tenant==a")).toBe(true);
    expect(matchesSelector(labels, "tenantplane.io/tenant!=a")).toBe(false);
    expect(matchesSelector(labels, "tenantplane.io/tenant")).toBe(true);
    expect(matchesSelector(labels, "!tenantplane.io/virtual-namespace")).toBe(true);
    expect(matchesSelector(labels, "!tenantplane.io/tenant")).toBe(false);
  });

  it("matches everything with an empty selector and nothing on a missing label", () => {
    expect(matchesSelector(undefined, "")).toBe(true);
    expect(matchesSelector(undefined, "a=b")).toBe(false);
  });
});
