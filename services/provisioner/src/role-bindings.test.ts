import { describe, expect, it } from "vitest";
import { planRoleBindings, parseTenantRoleGrants, tenantRoleBinding, type RoleBinding } from "./role-bindings.js";

const grants = [
  { clusterRole: "tp-provisioner-tenant", serviceAccount: { namespace: "tp-system", name: "tp-provisioner" } },
  { clusterRole: "tp-isolation-tenant", serviceAccount: { namespace: "tp-system", name: "tp-isolation" } },
];

describe("parseTenantRoleGrants", () => {
  it("reads comma-separated <clusterRole>=<namespace>/<serviceAccount> entries; empty is none", () => {
    expect(
      parseTenantRoleGrants(
        " tp-provisioner-tenant=tp-system/tp-provisioner, tp-isolation-tenant=tp-system/tp-isolation,",
      ),
    ).toEqual(grants);
    expect(parseTenantRoleGrants("")).toEqual([]);
    expect(parseTenantRoleGrants(" , ")).toEqual([]);
  });

  it("names the first bad entry", () => {
    expect(parseTenantRoleGrants("a=b")).toMatch(/^entry "a=b" is not <clusterRole>=<namespace>\/<serviceAccount>$/);
    expect(parseTenantRoleGrants("Admin=ns/sa")).toMatch(/Admin is not a valid ClusterRole name/);
    expect(parseTenantRoleGrants("r=kube.system/sa")).toMatch(/kube.system is not a valid namespace name/);
    expect(parseTenantRoleGrants("r=ns/-sa")).toMatch(/-sa is not a valid ServiceAccount name/);
    expect(parseTenantRoleGrants("r=ns/a,r=ns/b")).toMatch(/ClusterRole r is named twice/);
  });
});

describe("tenantRoleBinding", () => {
  it("binds the ServiceAccount to the ClusterRole in the tenant's host namespace, labelled as the tenant's", () => {
    expect(tenantRoleBinding("dev", grants[0]!)).toEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: {
        name: "tp-provisioner-tenant",
        namespace: "tp-dev",
        labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "dev" },
      },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "tp-provisioner-tenant" },
      subjects: [{ kind: "ServiceAccount", namespace: "tp-system", name: "tp-provisioner" }],
    });
  });
});

describe("planRoleBindings", () => {
  // As the API server returns it: ServiceAccount subjects gain an empty apiGroup.
  const stored = (rb: RoleBinding, changes: Partial<RoleBinding> = {}): RoleBinding => ({
    ...rb,
    metadata: { ...rb.metadata, uid: `uid-${rb.metadata?.name}`, resourceVersion: "7" },
    subjects: rb.subjects?.map((s) => ({ ...s, apiGroup: "" })),
    ...changes,
  });
  const mine = grants.map((g) => tenantRoleBinding("dev", g));

  it("creates every grant when the namespace cannot be listed yet, and deletes nothing", () => {
    expect(planRoleBindings("dev", grants, undefined).map((s) => s.do)).toEqual(["create", "create"]);
  });

  it("costs nothing in a steady state, creates what is missing and ignores others' bindings", () => {
    const foreignOther: RoleBinding = { ...stored(mine[1]!), metadata: { name: "team-access", namespace: "tp-dev" } };
    const steps = planRoleBindings("dev", grants, [stored(mine[0]!), foreignOther]);
    expect(steps.map((s) => s.do)).toEqual(["keep", "create"]);
  });

  it("updates other subjects, replaces another roleRef, deletes bindings no grant names", () => {
    const otherSubject = stored(mine[0]!, { subjects: [{ kind: "ServiceAccount", namespace: "x", name: "y" }] });
    const otherRole = stored(mine[1]!, {
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
    });
    const stale = stored(
      tenantRoleBinding("dev", {
        clusterRole: "tp-recorder-tenant",
        serviceAccount: { namespace: "tp-system", name: "tp-recorder" },
      }),
    );
    const steps = planRoleBindings("dev", grants, [otherSubject, otherRole, stale]);
    expect(steps.map((s) => s.do)).toEqual(["update", "replace", "delete"]);
    expect(planRoleBindings("dev", [], [stale]).map((s) => s.do)).toEqual(["delete"]);
  });

  it("halts on a binding of a configured name that another tenant or nobody in tenantplane made", () => {
    const squatted: RoleBinding = {
      ...stored(mine[0]!),
      metadata: { name: "tp-provisioner-tenant", namespace: "tp-dev" },
    };
    const steps = planRoleBindings("dev", grants, [squatted]);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ do: "halt" });
    expect(steps[0]?.do === "halt" && steps[0].message).toContain("RoleBinding tp-provisioner-tenant");
    const otherTenant = stored(tenantRoleBinding("prod", grants[0]!), {});
    otherTenant.metadata = { ...otherTenant.metadata, namespace: "tp-dev" };
    expect(planRoleBindings("dev", grants, [otherTenant])[0]).toMatchObject({ do: "halt" });
  });
});
