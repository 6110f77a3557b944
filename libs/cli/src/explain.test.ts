import { OBJECT_NAMES } from "@tenantplane/isolation";
import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";
import { parseExplainTarget } from "./explain.js";
import {
  formatExplanationData,
  formatObjectExplanation,
  formatTenantExplanation,
  isolationField,
  type ObjectExplanation,
  type TenantExplanation,
} from "./explain-format.js";
import { memoryIo } from "./memory-io.js";

describe("explain command line", () => {
  it("reads <kind>/<name> with kubectl's names, and tc/<tenant>", () => {
    expect(parseExplainTarget("cm/a-x-b-x-dev", "tp-dev")).toEqual({
      kind: "ConfigMap",
      name: "a-x-b-x-dev",
      namespace: "tp-dev",
    });
    expect(parseExplainTarget("Pods/web", "tp-dev")).toEqual({ kind: "Pod", name: "web", namespace: "tp-dev" });
    expect(parseExplainTarget("tc/payments-dev", undefined)).toEqual({ tenant: "payments-dev" });
    expect(parseExplainTarget("tenantcluster/payments-dev", "ignored")).toEqual({ tenant: "payments-dev" });
  });

  it("reads a tenant-side reference with --tenant: <kind>/<namespace>/<name>, or <kind>/<name> with -n or in default", () => {
    const web = { tenant: "payments-dev", kind: "Pod", namespace: "shop", name: "web" };
    expect(parseExplainTarget("pod/shop/web", undefined, "payments-dev")).toEqual({ tenantObject: web });
    expect(parseExplainTarget("po/web", "shop", "payments-dev")).toEqual({ tenantObject: web });
    expect(parseExplainTarget("pod/shop/web", "shop", "payments-dev")).toEqual({ tenantObject: web });
    expect(parseExplainTarget("cm/settings", undefined, "dev")).toEqual({
      tenantObject: { tenant: "dev", kind: "ConfigMap", namespace: "default", name: "settings" },
    });
  });

  it.each([
    [["pod/shop/web"], 2, "<kind>/<namespace>/<name> is a tenant object's reference: add --tenant <tenant>"],
    [["pod/shop/web", "--tenant", "dev", "-n", "other"], 2, "names namespace shop but -n says other"],
    [["pod/a/b/c", "--tenant", "dev"], 2, "write <kind>/<name>"],
    [["pod/web", "--tenant", "Bad_Name"], 1, '--tenant "Bad_Name": a tenant name must be'],
    [["tc/dev", "--tenant", "dev"], 2, "tc/<tenant> needs none"],
    [[], 2, "missing <kind>/<name> or tc/<tenant>"],
    [["configmap"], 2, "write <kind>/<name>"],
    [["configmap/"], 2, "write <kind>/<name>"],
    [["configmap/x"], 2, "missing -n <host namespace> for ConfigMap x"],
    [["deployment/x", "-n", "tp-dev"], 1, '<kind> "deployment": explain knows tc and the synced kinds'],
    [["tc/Not_A_Tenant"], 1, 'tc/<tenant> "Not_A_Tenant": a tenant name must be'],
    [["tc/dev", "-o", "wide"], 2, "-o wide: use one of table, json, yaml"],
    [["tc/dev", "extra"], 2, "Unexpected argument 'extra'"],
  ])("refuses %j with exit %i", async (args, code, message) => {
    const { io, out } = memoryIo();
    expect(await runCli(["explain", ...args], io)).toBe(code);
    expect(out.stderr).toContain(message);
    expect(out.stdout).toBe("");
  });

  it("prints help with examples and exit codes", async () => {
    const { io, out } = memoryIo();
    expect(await runCli(["explain", "-h"], io)).toBe(0);
    expect(out.stdout).toMatch(/^Usage: tenantplane explain <kind>\/<name> -n <host namespace>/);
    expect(out.stdout).toContain("  tenantplane explain tc/payments-dev\n");
    expect(out.stdout).toContain("Exit status: 0 ok");
  });
});

const copy: ObjectExplanation = {
  kind: "ConfigMap",
  namespace: "tp-dev",
  name: "settings-x-shop-x-dev",
  owner: "sync-copy",
  summary: "a sync copy of tenant dev's ConfigMap shop/settings (reverse-mapping labels and annotations)",
  source: { tenant: "dev", kind: "ConfigMap", namespace: "shop", name: "settings" },
  rule: "SyncPolicy workloads spec.toHost[1] (kind: ConfigMap)",
  contentHash: {
    state: "drifted",
    recorded: "aaaa",
    desired: "bbbb",
    detail: "recorded aaaa, the tenant object now gives bbbb",
  },
  decisions: [
    {
      id: "1",
      time: "2026-05-01T11:00:00.000Z",
      tenant: "dev",
      service: "sync-worker",
      action: "Create",
      kind: "ConfigMap",
      tenantRef: { namespace: "shop", name: "settings" },
      hostRef: { namespace: "tp-dev", name: "settings-x-shop-x-dev" },
      reason: "host ConfigMap tp-dev/settings-x-shop-x-dev absent",
    },
  ],
};

describe("explain output", () => {
  it("prints a sync copy's source, rule, content hash and Decisions", () => {
    expect(formatObjectExplanation(copy)).toBe(
      [
        "ConfigMap tp-dev/settings-x-shop-x-dev",
        "  owner:        a sync copy of tenant dev's ConfigMap shop/settings (reverse-mapping labels and annotations)",
        "  source:       tenant dev, ConfigMap shop/settings",
        "  rule:         SyncPolicy workloads spec.toHost[1] (kind: ConfigMap)",
        "  content hash: drifted: recorded aaaa, the tenant object now gives bbbb",
        "  decisions:",
        "    2026-05-01T11:00:00.000Z  Create  sync-worker: host ConfigMap tp-dev/settings-x-shop-x-dev absent",
        "",
      ].join("\n"),
    );
    expect(formatObjectExplanation({ ...copy, decisions: [] })).toContain(
      "    none recorded in the DECISIONS stream\n",
    );
    const noNats = formatObjectExplanation({
      ...copy,
      decisions: undefined,
      decisionsNote: "not read: pass --nats-url or set NATS_URL",
    });
    expect(noNats).toContain("  decisions:\n    not read: pass --nats-url or set NATS_URL\n");
    const recorded = formatObjectExplanation({
      ...copy,
      madeBy: { id: "d-1", time: "2026-05-01T11:00:00.000Z", action: "Update", reason: "host copy differs" },
    });
    expect(recorded).toContain(
      "  rule:         SyncPolicy workloads spec.toHost[1] (kind: ConfigMap)\n  made by:      Update at 2026-05-01T11:00:00.000Z (Decision d-1): host copy differs\n",
    );
  });

  it("prints a foreign object as only whose it is not", () => {
    const foreign: ObjectExplanation = {
      kind: "ConfigMap",
      namespace: "tp-dev",
      name: "x",
      owner: "foreign",
      summary: "not tenantplane's: ...",
    };
    expect(formatObjectExplanation(foreign)).toBe("ConfigMap tp-dev/x\n  owner:        not tenantplane's: ...\n");
  });

  it("maps every isolation object name to the profile field that produces it", () => {
    for (const name of Object.values(OBJECT_NAMES)) expect(isolationField(name)).toMatch(/^spec\./);
    expect(isolationField("tenantplane-allow-dns")).toBe("spec.network.allow.dns");
    expect(isolationField("tenantplane-quota")).toBe("spec.resourceQuota");
    expect(isolationField("something-else")).toMatch(/^no field of the current compiler/);
  });

  const tenant: TenantExplanation = {
    name: "dev",
    phase: "Ready",
    endpoint: "https://10.0.0.1:6443",
    hostNamespace: "tp-dev",
    profile: "IsolationProfile standard",
    policy: "SyncPolicy workloads",
    conditions: [{ type: "ControlPlaneReady", status: "True", reason: "Ready", message: "answers" }],
    isolation: [
      {
        kind: "NetworkPolicy",
        name: "tenantplane-default-deny",
        field: "spec.network.defaultDeny",
        profile: "standard",
      },
    ],
    podSecurity: { "pod-security.kubernetes.io/enforce": "baseline" },
    sync: { inSync: 3, skipped: 1, failed: 0 },
    notes: [],
  };

  it("prints a tenant's phase, conditions, isolation objects with their fields, and sync counts", () => {
    const text = formatTenantExplanation(tenant);
    expect(text).toContain("  sync:           3 in sync, 1 skipped, 0 failed\n");
    expect(text).toMatch(/^ {2}TYPE +STATUS +REASON +MESSAGE\n {2}ControlPlaneReady +True +Ready +answers$/m);
    expect(text).toMatch(/^ {2}Namespace +tp-dev +standard +spec\.podSecurity \(labels enforce=baseline\)$/m);
    expect(text).toMatch(/^ {2}NetworkPolicy +tenantplane-default-deny +standard +spec\.network\.defaultDeny$/m);
    const { sync: _sync, ...noCounts } = tenant;
    expect(formatTenantExplanation({ ...noCounts, conditions: [] })).toMatch(
      /no counts yet[\s\S]*Conditions:\n {2}none yet\n/,
    );
    expect(formatTenantExplanation(tenant, { color: true })).toContain("\u001b[32mTrue");
  });

  it("lists every object not synced with its latest Decision, or says why the Decisions were not read", () => {
    const text = formatTenantExplanation({
      ...tenant,
      notSynced: [
        {
          kind: "Pod",
          tenantRef: { namespace: "shop", name: "web" },
          hostRef: { namespace: "tp-dev", name: "web-x-shop-x-dev" },
          action: "Fail",
          reason: "Forbidden: exceeded quota",
          time: "2026-05-01T12:00:00.000Z",
          service: "sync-worker",
        },
      ],
    });
    expect(text).toMatch(
      /^Not synced \(each object's latest Decision is a Skip or a Fail\):\n {2}KIND +OBJECT +ACTION +SINCE +REASON\n {2}Pod +shop\/web +Fail +2026-05-01T12:00:00.000Z +Forbidden: exceeded quota$/m,
    );
    expect(formatTenantExplanation({ ...tenant, notSynced: [] })).toContain(
      "  none: every object's latest Decision is a write\n",
    );
    expect(
      formatTenantExplanation({ ...tenant, notSyncedNote: "not read: pass --nats-url or set NATS_URL" }),
    ).toContain("  Decisions not read: pass --nats-url or set NATS_URL\n");
  });

  it("prints a tenant object without a host copy with what is planned for it now", () => {
    const text = formatObjectExplanation({
      kind: "Pod",
      namespace: "tp-dev",
      name: "web-x-shop-x-dev",
      owner: "none",
      summary: "no host copy: tenant dev's Pod shop/web maps to tp-dev/web-x-shop-x-dev, which does not exist",
      source: { tenant: "dev", kind: "Pod", namespace: "shop", name: "web" },
      plannedNow: "Fail: Forbidden: exceeded quota",
      decisions: [],
    });
    expect(text).toContain("  owner:        no host copy: tenant dev's Pod shop/web maps to");
    expect(text).toContain("  planned now:  Fail: Forbidden: exceeded quota");
  });

  it("prints explanations as JSON and YAML", () => {
    expect(JSON.parse(formatExplanationData(copy, "json"))).toEqual(copy);
    expect(formatExplanationData(tenant, "yaml")).toContain("phase: Ready\n");
  });
});
