import { describe, expect, it } from "vitest";
import { API_VERSION } from "./constants.js";
import {
  DEFAULT_CONTROL_PLANE_IMAGE,
  isValidTenantName,
  parseTenantCluster,
  parseTenantClusterSpec,
  TenantClusterStatusSchema,
} from "./tenant-cluster.js";
import { ValidationError } from "./validation-error.js";

const tenant = (name: string, spec?: unknown, status?: unknown) => ({
  apiVersion: API_VERSION,
  kind: "TenantCluster",
  metadata: { name, uid: "u-1", generation: 3, labels: { team: "a" }, managedFields: [] },
  ...(spec === undefined ? {} : { spec }),
  ...(status === undefined ? {} : { status }),
});

function issuesOf(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    if (e instanceof ValidationError) return e.issues.map((i) => `${i.path}: ${i.message}`);
    throw e;
  }
  throw new Error("expected a ValidationError");
}

describe("parseTenantCluster", () => {
  it("accepts timestamps revived as Dates by the Kubernetes client", () => {
    const created = new Date("2026-01-02T03:04:05Z");
    const tc = { ...tenant("dev"), metadata: { name: "dev", creationTimestamp: created, deletionTimestamp: created } };
    expect(parseTenantCluster(tc).metadata).toMatchObject({
      creationTimestamp: "2026-01-02T03:04:05.000Z",
      deletionTimestamp: "2026-01-02T03:04:05.000Z",
    });
  });

  it("fills every default into a missing spec", () => {
    expect(parseTenantCluster(tenant("dev")).spec).toEqual({
      controlPlane: {
        image: DEFAULT_CONTROL_PLANE_IMAGE,
        resources: { requests: { cpu: "100m", memory: "256Mi" } },
        storage: { size: "5Gi" },
        expose: { loadBalancer: { enabled: false, annotations: {} } },
      },
    });
  });

  it("fills defaults beside fields that are set", () => {
    const spec = parseTenantCluster(
      tenant("dev", { controlPlane: { resources: { requests: { cpu: 2 } }, storage: { storageClassName: "ssd" } } }),
    ).spec;
    expect(spec.controlPlane.resources.requests).toEqual({ cpu: "2", memory: "256Mi" });
    expect(spec.controlPlane.storage).toEqual({ storageClassName: "ssd", size: "5Gi" });
  });

  it("keeps references and metadata it does not model", () => {
    const parsed = parseTenantCluster(tenant("dev", { isolationProfileRef: { name: "strict" } }));
    expect(parsed.spec.isolationProfileRef).toEqual({ name: "strict" });
    expect(parsed.spec.syncPolicyRef).toBeUndefined();
    expect(parsed.metadata).toMatchObject({ name: "dev", uid: "u-1", generation: 3, managedFields: [] });
  });

  it("rejects a wrong apiVersion or kind", () => {
    expect(issuesOf(() => parseTenantCluster({ ...tenant("dev"), apiVersion: "v1" }))[0]).toMatch(/^apiVersion: /);
    expect(issuesOf(() => parseTenantCluster({ ...tenant("dev"), kind: "Namespace" }))[0]).toMatch(/^kind: /);
  });

  it("names every bad field with its fix", () => {
    const issues = issuesOf(() =>
      parseTenantCluster(
        tenant("dev", {
          isolationProfileRef: { name: "" },
          controlPlane: { image: "", storage: { size: "5 GB" }, expose: { loadBalancer: { annotations: { a: 1 } } } },
        }),
      ),
    );
    expect(issues.map((i) => i.split(":")[0])).toEqual([
      "spec.isolationProfileRef.name",
      "spec.controlPlane.image",
      "spec.controlPlane.storage.size",
      "spec.controlPlane.expose.loadBalancer.annotations.a",
    ]);
    expect(issues[2]).toBe("spec.controlPlane.storage.size: must be a quantity like 10Gi, 500m or 2");
  });

  it("parses a status written by the services", () => {
    const parsed = parseTenantCluster(
      tenant(
        "dev",
        {},
        {
          phase: "Ready",
          hostNamespace: "tp-dev",
          kubeconfigSecretRef: { namespace: "tp-dev", name: "dev-kubeconfig", key: "kubeconfig" },
          observedGeneration: 3,
          conditions: [
            {
              type: "ControlPlaneReady",
              status: "True",
              observedGeneration: 3,
              lastTransitionTime: "2026-01-02T15:04:05Z",
              reason: "Ready",
              message: "",
            },
          ],
        },
      ),
    );
    expect(parsed.status?.phase).toBe("Ready");
    expect(parsed.status?.conditions?.[0]?.type).toBe("ControlPlaneReady");
  });
});

describe("tenant names", () => {
  it("accept DNS-1123 labels up to 60 characters", () => {
    expect(isValidTenantName("a")).toBe(true);
    expect(isValidTenantName("team-1")).toBe(true);
    expect(isValidTenantName("a".repeat(60))).toBe(true);
  });

  it.each([["a".repeat(61)], ["Dev"], ["-dev"], ["dev-"], ["team.dev"], ["team_dev"], [""]])("reject %j", (name) => {
    expect(isValidTenantName(name)).toBe(false);
    const issues = issuesOf(() => parseTenantCluster(tenant(name)));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^metadata\.name: must be a DNS-1123 label of at most 60 characters .*tp-<name>/);
  });
});

describe("TenantClusterStatusSchema", () => {
  const condition = (type: string) => ({
    type,
    status: "False",
    lastTransitionTime: "2026-01-02T15:04:05Z",
    reason: "Pending",
    message: "waiting",
  });

  it("refuses an unknown phase, a bad condition status and a repeated condition type", () => {
    expect(TenantClusterStatusSchema.safeParse({ phase: "Running" }).success).toBe(false);
    expect(
      TenantClusterStatusSchema.safeParse({ conditions: [{ ...condition("Synced"), status: "yes" }] }).success,
    ).toBe(false);
    expect(
      TenantClusterStatusSchema.safeParse({ conditions: [condition("Synced"), condition("Synced")] }).success,
    ).toBe(false);
    expect(
      TenantClusterStatusSchema.safeParse({ conditions: [condition("Synced"), condition("IsolationApplied")] }).success,
    ).toBe(true);
  });

  it("requires a CamelCase reason and an RFC 3339 time", () => {
    expect(
      TenantClusterStatusSchema.safeParse({ conditions: [{ ...condition("Synced"), reason: "not ok" }] }).success,
    ).toBe(false);
    expect(
      TenantClusterStatusSchema.safeParse({ conditions: [{ ...condition("Synced"), lastTransitionTime: "yesterday" }] })
        .success,
    ).toBe(false);
  });
});

describe("parseTenantClusterSpec", () => {
  it("parses a bare spec", () => {
    expect(parseTenantClusterSpec({}).controlPlane.storage.size).toBe("5Gi");
    expect(() => parseTenantClusterSpec({ controlPlane: { storage: { size: "x" } } })).toThrow(
      "TenantCluster spec is invalid: spec.controlPlane.storage.size",
    );
  });
});

describe("status.sync", () => {
  it("holds the sync workers' counts and last full pass, and refuses negative counts or a bad time", () => {
    const sync = { inSync: 3, skipped: 1, failed: 0, lastFullPass: "2026-11-29T15:00:00.000Z" };
    expect(TenantClusterStatusSchema.parse({ sync }).sync).toEqual(sync);
    expect(TenantClusterStatusSchema.safeParse({ sync: { ...sync, failed: -1 } }).success).toBe(false);
    expect(TenantClusterStatusSchema.safeParse({ sync: { ...sync, lastFullPass: "yesterday" } }).success).toBe(false);
    expect(TenantClusterStatusSchema.safeParse({ sync: { inSync: 1 } }).success).toBe(false);
  });
});
