import { describe, expect, it } from "vitest";
import { decisionRecordAnnotation } from "./decision-record.js";
import { changeOf, createEntryAsApply, tenantDecider } from "./object-change.js";

const RECORD = decisionRecordAnnotation("tenantplane-isolation");

const ours = (fieldsV1: unknown) => ({ manager: "tenantplane-isolation", operation: "Apply", fieldsV1 });
const theirs = (fieldsV1: unknown) => ({ manager: "kubectl-label", operation: "Update", fieldsV1 });

function quota(resourceVersion: string, hard: Record<string, string>, extra: Record<string, string> = {}) {
  return {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: {
      name: "q",
      resourceVersion,
      labels: { "app.kubernetes.io/managed-by": "tenantplane", ...extra },
      managedFields: [
        ours({
          "f:metadata": { "f:labels": { "f:app.kubernetes.io/managed-by": {} } },
          "f:spec": { "f:hard": Object.fromEntries(Object.keys(hard).map((k) => [`f:${k}`, {}])) },
        }),
        ...(Object.keys(extra).length
          ? [
              theirs({
                "f:metadata": { "f:labels": Object.fromEntries(Object.keys(extra).map((k) => [`f:${k}`, {}])) },
              }),
            ]
          : []),
      ],
    },
    spec: { hard },
  };
}

describe("changeOf", () => {
  it("is Create when nothing was there", () => {
    expect(changeOf(undefined, quota("1", { pods: "10" }), "tenantplane-isolation")).toBe("Create");
  });

  it("ignores a concurrent writer's fields and resourceVersion bumps", () => {
    const before = quota("5", { pods: "10" });
    const after = quota("9", { pods: "10" }, { touched: "by-someone-else" });
    expect(changeOf(before, after, "tenantplane-isolation")).toBeUndefined();
    expect(changeOf(before, after)).toBeUndefined();
  });

  it("is Update when a field this manager owns changed, was added or was dropped", () => {
    expect(changeOf(quota("5", { pods: "10" }), quota("6", { pods: "20" }), "tenantplane-isolation")).toBe("Update");
    expect(changeOf(quota("5", { pods: "10" }), quota("6", { pods: "10", cpu: "2" }), "tenantplane-isolation")).toBe(
      "Update",
    );
    expect(changeOf(quota("5", { pods: "10", cpu: "2" }), quota("6", { pods: "10" }), "tenantplane-isolation")).toBe(
      "Update",
    );
  });

  it("does not count the decision record as a change", () => {
    const before = quota("5", { pods: "10" });
    const after = quota("6", { pods: "10" });
    const annotated = {
      ...after,
      metadata: {
        ...after.metadata,
        annotations: { [RECORD]: "{}" },
        managedFields: [
          ours({
            "f:metadata": {
              "f:labels": { "f:app.kubernetes.io/managed-by": {} },
              "f:annotations": { [`f:${RECORD}`]: {} },
            },
            "f:spec": { "f:hard": { "f:pods": {} } },
          }),
        ],
      },
    };
    expect(changeOf(before, annotated, "tenantplane-isolation")).toBeUndefined();
  });
});

describe("tenantDecider", () => {
  it("publishes a change against the TenantCluster, and nothing for a no-op", async () => {
    const published: unknown[] = [];
    const decide = tenantDecider("dev", async (d) => {
      published.push(d);
    });
    await decide(undefined, "Service", "k3s", "tp-dev", "unchanged");
    await decide("Create", "Service", "k3s", "tp-dev", "tenant API");
    await decide("Update", "Service", "k3s", "tp-dev", "again", { id: "x", time: "2026-01-01T00:00:00.000Z" });
    expect(published).toEqual([
      {
        tenant: "dev",
        action: "Create",
        kind: "Service",
        tenantRef: { namespace: "", name: "dev" },
        hostRef: { namespace: "tp-dev", name: "k3s" },
        reason: "tenant API",
      },
      {
        tenant: "dev",
        action: "Update",
        kind: "Service",
        tenantRef: { namespace: "", name: "dev" },
        hostRef: { namespace: "tp-dev", name: "k3s" },
        reason: "again",
        id: "x",
        time: "2026-01-01T00:00:00.000Z",
      },
    ]);
  });
});

describe("createEntryAsApply", () => {
  const fields = { "f:spec": { "f:type": {} } };
  const entry = (manager: string, operation: string, subresource?: string) => ({
    manager,
    operation,
    fieldsV1: fields,
    ...(subresource ? { subresource } : {}),
  });

  it("turns the manager's create entry into its apply entry and keeps every other entry", () => {
    const status = entry("kube-controller-manager", "Update", "status");
    const own = entry("tenantplane-provisioner", "Update");
    expect(createEntryAsApply([own, status, entry("kubectl", "Update")], "tenantplane-provisioner")).toEqual([
      { ...own, operation: "Apply" },
      status,
      entry("kubectl", "Update"),
    ]);
  });

  it("leaves the entries alone without a create entry, or when an apply entry exists already", () => {
    expect(createEntryAsApply([entry("kubectl", "Update")], "tenantplane-provisioner")).toBeUndefined();
    expect(createEntryAsApply(undefined, "tenantplane-provisioner")).toBeUndefined();
    expect(
      createEntryAsApply(
        [entry("tenantplane-provisioner", "Update"), entry("tenantplane-provisioner", "Apply")],
        "tenantplane-provisioner",
      ),
    ).toBeUndefined();
    // A status write of the manager is not its create.
    expect(
      createEntryAsApply([entry("tenantplane-provisioner", "Update", "status")], "tenantplane-provisioner"),
    ).toBeUndefined();
  });
});
