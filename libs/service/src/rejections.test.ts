import { describe, expect, it } from "vitest";
import { tenantOfSubject } from "./rejections.js";

describe("tenantOfSubject", () => {
  it("reads the tenant token of a tenant-change subject", () => {
    expect(tenantOfSubject("tenantplane.tenants.dev.changed")).toBe("dev");
  });
  it("ignores other subjects", () => {
    expect(tenantOfSubject("tenantplane.decisions.dev.Pod.Create")).toBeUndefined();
    expect(tenantOfSubject("other.tenants.dev.changed")).toBeUndefined();
  });
});
