import { KubeApiError } from "@tenantplane/kube";
import { TerminalError } from "@tenantplane/runtime";
import { describe, expect, it } from "vitest";
import { accessDenialOf, apiRefusalOf, describeRefusal } from "./api-refusal.js";

const invalid = (method = "PATCH") =>
  new KubeApiError(
    method,
    "/api/v1/namespaces/tp-a/limitranges/tenantplane-limits",
    422,
    {
      kind: "Status",
      reason: "Invalid",
      message:
        'LimitRange "tenantplane-limits" is invalid: spec.limits[0].min[cpu]: Invalid value: "2": min must be <= max',
      details: {
        causes: [
          { field: "spec.limits[0].min[cpu]", message: "min must be <= max" },
          { field: "spec.limits[0].min[cpu]", message: "again" },
        ],
      },
    },
    { kind: "LimitRange", name: "tenantplane-limits", namespace: "tp-a" },
  );

describe("apiRefusalOf", () => {
  it("names the refused object and each field once", () => {
    expect(apiRefusalOf(invalid())).toEqual({
      code: 422,
      object: "LimitRange tp-a/tenantplane-limits",
      fields: ["spec.limits[0].min[cpu]"],
      message:
        'LimitRange "tenantplane-limits" is invalid: spec.limits[0].min[cpu]: Invalid value: "2": min must be <= max',
    });
  });

  it("finds a refusal wrapped as the cause of another error", () => {
    expect(apiRefusalOf(new TerminalError("apply failed", { cause: invalid() }))?.code).toBe(422);
  });

  it("ignores reads, retryable statuses and terminating namespaces", () => {
    expect(apiRefusalOf(invalid("GET"))).toBeUndefined();
    for (const code of [404, 409, 429, 500]) {
      expect(apiRefusalOf(new KubeApiError("PATCH", "/x", code, {}))).toBeUndefined();
    }
    const terminating = new KubeApiError("POST", "/x", 403, {
      message: "namespace tp-a is being terminated",
      details: { causes: [{ reason: "NamespaceTerminating" }] },
    });
    expect(apiRefusalOf(terminating)).toBeUndefined();
    expect(apiRefusalOf(new Error("boom"))).toBeUndefined();
  });

  it("treats 400, 403 and 413 on a write as refusals", () => {
    for (const code of [400, 403, 413]) {
      expect(apiRefusalOf(new KubeApiError("POST", "/x", code, { message: "no" }))?.code).toBe(code);
    }
  });
});

describe("describeRefusal", () => {
  it("points a quota refusal at the IsolationProfile's quota", () => {
    const quota = new KubeApiError(
      "PATCH",
      "/api/v1/namespaces/tp-a/services/k3s",
      403,
      {
        message:
          'services "k3s" is forbidden: exceeded quota: tenantplane-quota, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0',
      },
      { kind: "Service", name: "k3s", namespace: "tp-a" },
    );
    expect(describeRefusal(apiRefusalOf(quota)!, "Fix it.")).toMatch(
      /^the API server refused Service tp-a\/k3s: services "k3s" is forbidden: exceeded quota: .*\. Fix it\. The quota comes from spec\.resourceQuota\.hard of the tenant's IsolationProfile/,
    );
  });

  it("points another quota of the namespace at the host's operators, not at the profile", () => {
    const quota = new KubeApiError(
      "POST",
      "/apis/apps/v1/namespaces/tp-a/statefulsets",
      403,
      {
        message:
          'statefulsets.apps "k3s" is forbidden: exceeded quota: ops, requested: count/statefulsets.apps=1, used: count/statefulsets.apps=0, limited: count/statefulsets.apps=0',
      },
      { kind: "StatefulSet", name: "k3s", namespace: "tp-a" },
    );
    const text = describeRefusal(apiRefusalOf(quota)!, "Fix it.");
    expect(text).toMatch(
      /Fix it\. ResourceQuota ops is not tenantplane's but the host's own: ask the cluster's operators/,
    );
    expect(text).not.toContain("spec.resourceQuota.hard");
  });

  it("says which object and field, what the server said, and where to fix it", () => {
    expect(describeRefusal(apiRefusalOf(invalid())!, "Fix the IsolationProfile.")).toBe(
      'the API server refused LimitRange tp-a/tenantplane-limits (field spec.limits[0].min[cpu]): LimitRange "tenantplane-limits" is invalid: spec.limits[0].min[cpu]: Invalid value: "2": min must be <= max. Fix the IsolationProfile.',
    );
  });
});

describe("accessDenialOf", () => {
  const forbidden = (method: string, message: string) =>
    new KubeApiError(method, "/api/v1/namespaces/tp-a/secrets", 403, { kind: "Status", reason: "Forbidden", message });
  const rbac =
    'secrets "a-pki" is forbidden: User "system:serviceaccount:tenantplane-system:tenantplane-provisioner" ' +
    'cannot get resource "secrets" in API group "" in the namespace "tp-a"';

  it("recognises the authorizer's 403 on reads and writes, with its namespace, and it is no refusal", () => {
    for (const method of ["GET", "POST", "PATCH"]) {
      expect(accessDenialOf(forbidden(method, rbac))).toEqual({ namespace: "tp-a", message: rbac });
    }
    expect(apiRefusalOf(forbidden("POST", rbac))).toBeUndefined();
    expect(accessDenialOf(new TerminalError("wrapped", { cause: forbidden("GET", rbac) }))?.namespace).toBe("tp-a");
  });

  it("leaves admission refusals, cluster-scoped denials and other statuses alone", () => {
    const admission = [
      'resourcequotas "q" is forbidden: exceeded quota: tenantplane-quota, requested: pods=1, used: pods=1, limited: pods=1',
      'pods "p" is forbidden: violates PodSecurity "restricted:latest": privileged',
      "rolebindings.rbac.authorization.k8s.io \"x\" is forbidden: ValidatingAdmissionPolicy 'tp-rolebindings' with binding 'tp-rolebindings' denied request: no",
      'rolebindings.rbac.authorization.k8s.io "x" is forbidden: user "u" (groups=["g"]) is attempting to grant RBAC permissions not currently held',
    ];
    for (const message of admission) {
      expect(accessDenialOf(forbidden("POST", message)), message).toBeUndefined();
      expect(apiRefusalOf(forbidden("POST", message))?.code, message).toBe(403);
    }
    const clusterWide =
      'namespaces is forbidden: User "u" cannot list resource "namespaces" in API group "" at the cluster scope';
    expect(accessDenialOf(forbidden("GET", clusterWide))).toBeUndefined();
    expect(accessDenialOf(new KubeApiError("GET", "/x", 404, { message: rbac }))).toBeUndefined();
    expect(accessDenialOf(new Error(rbac))).toBeUndefined();
  });
});
