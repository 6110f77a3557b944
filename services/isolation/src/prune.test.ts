import { describe, expect, it } from "vitest";
import { describeIsolationObject, objectKey, staleObjects } from "./prune.js";

const np = (name: string) => ({ apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name } });

describe("staleObjects", () => {
  it("returns what exists but is no longer wanted, sorted", () => {
    const wanted = new Set([
      objectKey("NetworkPolicy", "tenantplane-default-deny"),
      objectKey("ResourceQuota", "tenantplane-allow-dns"),
    ]);
    const existing = [
      np("tenantplane-default-deny"),
      np("tenantplane-allow-namespaces"),
      np("tenantplane-allow-dns"),
      { metadata: {} },
    ];
    expect(staleObjects("NetworkPolicy", existing, wanted)).toEqual([
      "tenantplane-allow-dns",
      "tenantplane-allow-namespaces",
    ]);
  });

  it("keeps everything that is still wanted", () => {
    expect(staleObjects("NetworkPolicy", [np("a")], new Set([objectKey("NetworkPolicy", "a")]))).toEqual([]);
  });
});

describe("describeIsolationObject", () => {
  it("names the default deny and the allowances", () => {
    expect(describeIsolationObject("NetworkPolicy", "tenantplane-default-deny")).toBe("default-deny NetworkPolicy");
    expect(describeIsolationObject("NetworkPolicy", "tenantplane-allow-dns")).toBe(
      "NetworkPolicy allowance tenantplane-allow-dns",
    );
    expect(describeIsolationObject("ResourceQuota", "tenantplane-quota")).toBe("ResourceQuota tenantplane-quota");
  });
});
