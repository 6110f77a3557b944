import { describe, expect, it } from "vitest";
import { tenantToWake } from "./host-cache.js";

const sts = {
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "k3s", namespace: "tp-a", labels: { "tenantplane.io/tenant": "a" } },
};

describe("tenantToWake", () => {
  it("wakes the tenant named by the label for a change someone else made", () => {
    expect(tenantToWake({ type: "update", object: sts, ours: false }, ["StatefulSet"])).toBe("a");
  });

  it("wakes nothing for the answer to the service's own write", () => {
    expect(tenantToWake({ type: "update", object: sts, ours: true }, ["StatefulSet"])).toBeUndefined();
  });

  it("wakes nothing for a kind it was not asked to watch, and a TenantCluster by its name", () => {
    expect(tenantToWake({ type: "update", object: sts, ours: false }, ["Service"])).toBeUndefined();
    const tc = { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name: "b" } };
    expect(tenantToWake({ type: "add", object: tc, ours: false }, ["TenantCluster"])).toBe("b");
  });
});
