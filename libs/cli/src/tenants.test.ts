import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { runCli } from "./cli.js";
import { memoryIo } from "./memory-io.js";
import { tenantClusterFor } from "./tenants.js";
import { age, endpointOf, formatTenants, syncCountsOf } from "./tenants-format.js";

const NOW = new Date("2026-05-01T12:00:00.000Z");
const ready = {
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "TenantCluster",
  metadata: { name: "payments-dev", creationTimestamp: "2026-05-01T11:45:00Z" },
  spec: {},
  status: {
    phase: "Ready",
    endpoint: "https://k3s.tp-payments-dev.svc:6443",
    externalEndpoint: "https://203.0.113.7:6443",
    conditions: [
      { type: "ControlPlaneReady", status: "True", reason: "Ready", message: "" },
      { type: "Synced", status: "False", reason: "ObjectErrors", message: "" },
    ],
    sync: { inSync: 12, skipped: 2, failed: 1 },
  },
};
const fresh = {
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "TenantCluster",
  metadata: { name: "new", creationTimestamp: "2026-05-01T11:59:30Z" },
};

describe("get tenants output", () => {
  it("prints phase, conditions, the external endpoint and sync counts", () => {
    expect(formatTenants([ready, fresh], "table", NOW)).toBe(
      [
        "NAME          PHASE    CONDITIONS                           ENDPOINT                  SYNC                             AGE",
        "payments-dev  Ready    ControlPlaneReady=True,Synced=False  https://203.0.113.7:6443  12 in sync, 2 skipped, 1 failed  15m",
        "new           Pending  <none>                               <none>                    -                                30s",
        "",
      ].join("\n"),
    );
    expect(formatTenants([ready], "table", NOW, { color: true })).toContain("\u001b[32mReady");
  });

  it("prints a List as JSON or YAML, and kubectl-style names", () => {
    expect(JSON.parse(formatTenants([ready], "json", NOW))).toEqual({ apiVersion: "v1", kind: "List", items: [ready] });
    const managed = { ...ready, metadata: { ...ready.metadata, managedFields: [{ manager: "x" }] } };
    expect(JSON.parse(formatTenants([managed], "json", NOW)).items[0].metadata).toEqual(ready.metadata);
    expect(YAML.parse(formatTenants([ready], "yaml", NOW)).items[0].metadata.name).toBe("payments-dev");
    expect(formatTenants([ready, fresh], "name", NOW)).toBe(
      "tenantcluster.tenantplane.io/payments-dev\ntenantcluster.tenantplane.io/new\n",
    );
  });

  it("prefers the external endpoint, reads counts loosely and gives kubectl-style ages", () => {
    expect(endpointOf({ status: { endpoint: "https://in:6443" } })).toBe("https://in:6443");
    expect(endpointOf(ready)).toBe("https://203.0.113.7:6443");
    expect(syncCountsOf({ status: { sync: { inSync: 1, skipped: "x" } } })).toEqual({
      inSync: 1,
      skipped: 0,
      failed: 0,
    });
    expect(syncCountsOf({ status: {} })).toBeUndefined();
    expect(age("2026-05-01T11:59:01Z", NOW)).toBe("59s");
    expect(age("2026-05-01T09:00:00Z", NOW)).toBe("3h");
    expect(age("2026-04-20T12:00:00Z", NOW)).toBe("11d");
    expect(age(undefined, NOW)).toBe("<unknown>");
  });
});

describe("create tenant", () => {
  it("builds the TenantCluster from the flags, leaving defaults to the server", () => {
    expect(tenantClusterFor("dev", {})).toEqual({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: "dev" },
      spec: {},
    });
    expect(tenantClusterFor("dev", { profile: "standard", policy: "workloads", expose: true }).spec).toEqual({
      isolationProfileRef: { name: "standard" },
      syncPolicyRef: { name: "workloads" },
      controlPlane: { expose: { loadBalancer: { enabled: true } } },
    });
  });

  it.each([
    [["create"], 2, "missing use: create tenant <name>"],
    [["create", "pod", "x"], 2, 'cannot create "pod"; use: create tenant <name>'],
    [["create", "tenant"], 2, "missing <name>"],
    [["create", "tenant", "x".repeat(61)], 1, '<name> "xxxxxxxx'],
    [["create", "tenant", "dev", "--timeout", "soon"], 1, '--timeout "soon": use a duration'],
    [["create", "tenant", "dev", "-o", "wide"], 2, "-o wide: use one of name, table, json, yaml"],
    [["get"], 2, "missing what to get: tenants"],
    [["get", "pods"], 2, 'cannot get "pods": only tenants'],
    [["get", "tenants", "-o", "wide"], 2, "-o wide: use one of table, json, yaml, name"],
    [["get", "tenants", "Bad!"], 1, '<name> "Bad!": a tenant name must be'],
  ])("refuses %j with exit %i", async (argv, code, message) => {
    const { io, out } = memoryIo();
    expect(await runCli(argv, io)).toBe(code);
    expect(out.stderr).toContain(message);
  });

  it("prints help for get and create with examples", async () => {
    for (const command of ["get", "create"]) {
      const { io, out } = memoryIo();
      expect(await runCli([command, "--help"], io)).toBe(0);
      expect(out.stdout).toMatch(new RegExp(`^Usage: tenantplane ${command} tenant`));
      expect(out.stdout).toContain("Examples:");
      expect(out.stdout).toContain("Exit status:");
    }
  });
});
