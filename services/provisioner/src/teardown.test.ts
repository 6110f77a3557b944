import { describe, expect, it } from "vitest";
import { bindingsLastOf } from "./teardown.js";

describe("bindingsLastOf", () => {
  const binding = (name: string, sa: { namespace: string; name: string }) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name },
    subjects: [{ kind: "ServiceAccount", ...sa }],
  });
  const own = binding("provisioner-tenant", { namespace: "tenantplane", name: "provisioner" });
  const others = [
    binding("isolation-tenant", { namespace: "tenantplane", name: "isolation" }),
    binding("sync-tenant", { namespace: "tenantplane", name: "sync-worker" }),
  ];

  it("puts the binding that names the caller last, keeping the others' order", () => {
    const order = bindingsLastOf([own, ...others], "system:serviceaccount:tenantplane:provisioner");
    expect(order.map((b) => b.metadata?.name)).toEqual(["isolation-tenant", "sync-tenant", "provisioner-tenant"]);
  });

  it("keeps the order when the caller is unknown or bound by none of them", () => {
    expect(bindingsLastOf([own, ...others], undefined)).toEqual([own, ...others]);
    expect(bindingsLastOf([own, ...others], "kubernetes-admin")).toEqual([own, ...others]);
    // Another namespace's service account of the same name is someone else.
    expect(bindingsLastOf([own, ...others], "system:serviceaccount:other:provisioner")).toEqual([own, ...others]);
  });
});
