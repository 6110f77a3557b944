import { ValidationError } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { parseCachedTenantCluster } from "./cached-tenant.js";

const tenant = (size: string) => ({
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "TenantCluster",
  metadata: { name: "a", uid: "u1", resourceVersion: "1" },
  spec: { controlPlane: { storage: { size } } },
});

describe("parseCachedTenantCluster", () => {
  it("parses each cached object once and answers a new version afresh", () => {
    const v1 = tenant("1Gi");
    const first = parseCachedTenantCluster(v1);
    expect(first.spec.controlPlane.storage.size).toBe("1Gi");
    expect(parseCachedTenantCluster(v1)).toBe(first);
    const v2 = tenant("2Gi");
    expect(parseCachedTenantCluster(v2).spec.controlPlane.storage.size).toBe("2Gi");
  });

  it("throws the same validation error again for an invalid version", () => {
    const bad = tenant("lots");
    let thrown: unknown;
    try {
      parseCachedTenantCluster(bad);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect(() => parseCachedTenantCluster(bad)).toThrow(thrown as Error);
  });
});
