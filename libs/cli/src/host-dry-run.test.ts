import { ApiError } from "@tenantplane/kube";
import type { PlannedDecisionWithObject } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import { dryRunRequest, failedEntry, judgeRefusal, refusedForPlannedObject, statusOf } from "./host-dry-run.js";

const object = (kind: string, name: string) => ({
  apiVersion: "v1",
  kind,
  metadata: { name, namespace: "tp-dev", labels: {}, annotations: {} },
});

const entry = (action: "Create" | "Update", kind: string, name: string): PlannedDecisionWithObject => ({
  tenant: "dev",
  action,
  kind,
  tenantRef: { namespace: "shop", name },
  hostRef: { namespace: "tp-dev", name: `${name}-x-shop-x-dev` },
  hashed: false,
  reason: "host copy absent",
  object: object(kind, `${name}-x-shop-x-dev`) as never,
});

const current = { kind: "Pod", metadata: { name: "app-x-shop-x-dev", resourceVersion: "42", uid: "u-1" } };

describe("dryRunRequest", () => {
  it("is the sync worker's own request with dryRun=All: POST to create, apply a Pod or claim, PUT the rest", () => {
    expect(dryRunRequest(entry("Create", "Pod", "app"), undefined)).toEqual({
      method: "POST",
      path: "/api/v1/namespaces/tp-dev/pods",
      query: { fieldManager: "tenantplane-sync-worker", dryRun: "All" },
      body: object("Pod", "app-x-shop-x-dev"),
    });
    const applied = dryRunRequest(entry("Update", "Pod", "app"), current);
    expect(applied).toMatchObject({
      method: "PATCH",
      path: "/api/v1/namespaces/tp-dev/pods/app-x-shop-x-dev",
      query: { fieldManager: "tenantplane-sync-worker", force: true, dryRun: "All" },
      contentType: "application/apply-patch+yaml",
      body: { metadata: { name: "app-x-shop-x-dev", resourceVersion: "42", uid: "u-1" } },
    });
    expect(dryRunRequest(entry("Update", "Service", "web"), current)).toMatchObject({
      method: "PUT",
      path: "/api/v1/namespaces/tp-dev/services/web-x-shop-x-dev",
      body: { metadata: { resourceVersion: "42", uid: "u-1" } },
    });
  });

  it("sends nothing for an Update whose host object was not listed, or an entry without a desired object", () => {
    expect(dryRunRequest(entry("Update", "Pod", "app"), undefined)).toBeUndefined();
    const { object: _dropped, ...skip } = entry("Create", "Pod", "app");
    expect(dryRunRequest({ ...skip, action: "Skip" }, undefined)).toBeUndefined();
  });
});

describe("judging a refusal", () => {
  it("predicts a Fail for admission and validation refusals, not for the CLI's own permissions or passing trouble", () => {
    const quota =
      'pods "app-x-shop-x-dev" is forbidden: exceeded quota: tenantplane-quota, requested: limits.cpu=1, used: limits.cpu=7200m, limited: limits.cpu=8';
    expect(judgeRefusal({ code: 403, reason: "Forbidden", message: quota })).toBe("fail");
    expect(judgeRefusal({ code: 422, reason: "Invalid", message: "spec.externalTrafficPolicy: Invalid value" })).toBe(
      "fail",
    );
    expect(judgeRefusal({ code: 400, reason: "BadRequest", message: "admission webhook denied" })).toBe("fail");
    expect(
      judgeRefusal({
        code: 403,
        message:
          'pods is forbidden: User "dev" cannot create resource "pods" in API group "" in the namespace "tp-dev"',
      }),
    ).toBe("permission");
    for (const code of [0, 408, 409, 425, 429, 500, 503]) expect(judgeRefusal({ code })).toBe("unchecked");
  });

  it("does not blame a Pod for a ServiceAccount the same plan creates", () => {
    const status = {
      code: 403,
      message:
        'pods "app-x-shop-x-dev" is forbidden: error looking up service account tp-dev/web-x-shop-x-dev: serviceaccount "web-x-shop-x-dev" not found',
    };
    const pod = entry("Create", "Pod", "app");
    expect(refusedForPlannedObject(pod, status, new Set(["ServiceAccount/web-x-shop-x-dev"]))).toBe(true);
    expect(refusedForPlannedObject(pod, status, new Set(["ConfigMap/web-x-shop-x-dev"]))).toBe(false);
  });

  it("turns the entry into a Fail carrying the Status and no desired object", () => {
    const failed = failedEntry(entry("Update", "Service", "web"), {
      code: 422,
      reason: "Invalid",
      message: 'Service "web-x-shop-x-dev" is invalid: spec.externalTrafficPolicy: Invalid value: "Cluster"',
    });
    expect(failed).toMatchObject({
      action: "Fail",
      error: { code: 422, reason: "Invalid", attempted: "Update" },
      reason: 'Invalid: Service "web-x-shop-x-dev" is invalid: spec.externalTrafficPolicy: Invalid value: "Cluster"',
    });
    expect(failed.object).toBeUndefined();
  });

  it("reads the Status from an API error, and nothing from other errors", () => {
    expect(statusOf(new ApiError(403, JSON.stringify({ reason: "Forbidden", message: "no" }), "POST /x"))).toEqual({
      code: 403,
      reason: "Forbidden",
      message: "no",
    });
    expect(statusOf(new ApiError(502, "<html>bad gateway</html>", "POST /x"))).toEqual({
      code: 502,
      message: "<html>bad gateway</html>",
    });
    expect(statusOf(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }))).toBeUndefined();
  });
});
