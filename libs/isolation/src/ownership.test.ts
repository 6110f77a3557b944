import { describe, expect, it } from "vitest";
import { describeForeign, namespaceOwnership, objectOwnership } from "./ownership.js";

const ours = { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "dev" };

describe("objectOwnership", () => {
  it("is ours only with both the managed-by and the tenant label", () => {
    expect(objectOwnership({ metadata: { labels: ours } }, "dev")).toEqual({ owner: "ours" });
    expect(objectOwnership({ metadata: {} }, "dev")).toMatchObject({ owner: "foreign" });
    expect(
      objectOwnership(
        { metadata: { labels: { "app.kubernetes.io/managed-by": "helm", "tenantplane.io/tenant": "dev" } } },
        "dev",
      ),
    ).toMatchObject({ owner: "foreign", why: expect.stringContaining("managed-by") });
    expect(objectOwnership({ metadata: { labels: { ...ours, "tenantplane.io/tenant": "other" } } }, "dev")).toEqual({
      owner: "foreign",
      why: "it belongs to tenant other",
    });
  });
});

describe("namespaceOwnership", () => {
  const ns = (annotations?: Record<string, string>) => ({ metadata: { name: "tp-dev", labels: ours, annotations } });

  it("is ours when the labels match and the uid annotation names this TenantCluster", () => {
    expect(namespaceOwnership(ns({ "tenantplane.io/tenant-uid": "u1" }), "dev", "u1")).toEqual({ owner: "ours" });
  });

  it("treats a namespace of an earlier TenantCluster of the same name as foreign", () => {
    expect(namespaceOwnership(ns({ "tenantplane.io/tenant-uid": "u0" }), "dev", "u1")).toEqual({
      owner: "foreign",
      why: expect.stringContaining("earlier TenantCluster"),
    });
  });

  it("treats a namespace without the uid annotation as foreign and says how to hand it over", () => {
    const verdict = namespaceOwnership(ns(), "dev", "u1");
    expect(verdict).toMatchObject({ owner: "foreign" });
    expect(verdict.owner === "foreign" && verdict.why).toContain("tenantplane.io/tenant-uid=u1");
  });

  it("treats an unlabelled namespace as foreign whatever its annotations", () => {
    expect(
      namespaceOwnership({ metadata: { annotations: { "tenantplane.io/tenant-uid": "u1" } } }, "dev", "u1"),
    ).toMatchObject({ owner: "foreign" });
  });
});

describe("describeForeign", () => {
  it("names the object, where it is and why it is not ours", () => {
    expect(describeForeign({ kind: "Secret", name: "dev-pki", namespace: "tp-dev" }, "it is not labelled x")).toMatch(
      /^Secret dev-pki in namespace tp-dev already exists .*\(it is not labelled x\)/,
    );
  });
});
