import type { Decision } from "@tenantplane/messaging";
import { describe, expect, it } from "vitest";
import { formatIsolationMode, isolationModeOf, migrationSteps } from "./explain-isolation.js";
import { formatTenantExplanation, type TenantExplanation } from "./explain-format.js";

function decision(time: string, reason: string, more: Partial<Decision> = {}): Decision {
  return {
    id: time,
    time,
    tenant: "dev",
    service: "sync-worker",
    action: "Update",
    kind: "TenantCluster",
    tenantRef: { namespace: "", name: "dev" },
    hostRef: { namespace: "", name: "dev" },
    reason,
    ...more,
  };
}

const dedicatedSpec = { isolation: { mode: "Dedicated", dedicated: { nodeSelector: { pool: "dev" } } } };

const history: Decision[] = [
  decision("2026-05-01T09:00:00.000Z", "isolation migration Dedicated → Shared started: an older one"),
  decision("2026-05-01T10:00:00.500Z", "isolation migration Shared → Dedicated started: 4 Pod(s) of 2 workload(s)"),
  decision("2026-05-01T10:00:01.000Z", "host ConfigMap tp-dev/a absent", { action: "Create", kind: "ConfigMap" }),
  decision(
    "2026-05-01T10:00:01.100Z",
    "isolation migration Shared → Dedicated cannot move Pod shop/bare: bare Pod: nobody recreates it",
    { action: "Skip", kind: "Pod", tenantRef: { namespace: "shop", name: "bare" } },
  ),
  decision("2026-05-01T10:00:02.000Z", "isolation migration Shared → Dedicated: moving Deployment shop/web"),
  decision("2026-05-01T10:00:03.000Z", "isolation migration is what another service says", { service: "isolation" }),
  decision("2026-05-01T10:00:09.000Z", "isolation migration Shared → Dedicated: Deployment shop/web moved"),
];

describe("explain tc: isolation mode", () => {
  it("keeps the migration driver's Decisions since the migration started, oldest first", () => {
    expect(migrationSteps(history, "2026-05-01T10:00:00.000Z")).toEqual([
      {
        time: "2026-05-01T10:00:00.500Z",
        action: "Update",
        object: "TenantCluster dev",
        reason: "isolation migration Shared → Dedicated started: 4 Pod(s) of 2 workload(s)",
      },
      {
        time: "2026-05-01T10:00:01.100Z",
        action: "Skip",
        object: "Pod shop/bare",
        reason: "isolation migration Shared → Dedicated cannot move Pod shop/bare: bare Pod: nobody recreates it",
      },
      expect.objectContaining({ reason: "isolation migration Shared → Dedicated: moving Deployment shop/web" }),
      expect.objectContaining({ reason: "isolation migration Shared → Dedicated: Deployment shop/web moved" }),
    ]);
    expect(migrationSteps(history, undefined)).toHaveLength(5);
  });

  it("shows a migration under way: from → to, phase, moved/left, blocked Pods with reasons, and its steps", () => {
    const tc = {
      spec: dedicatedSpec,
      status: {
        isolation: {
          mode: "Shared",
          dedicatedNodes: ["n1", "n2"],
          migration: {
            from: "Shared",
            to: "Dedicated",
            phase: "Moving",
            moved: 1,
            left: 3,
            blocked: [{ namespace: "shop", name: "bare", reason: "bare Pod: nobody recreates it" }],
            startedAt: "2026-05-01T10:00:00.000Z",
          },
        },
      },
    };
    const view = isolationModeOf(tc, history);
    expect(view.effective).toBe("Shared");
    expect(view.spec).toBe("Dedicated");
    expect(view.steps).toHaveLength(4);
    expect(formatIsolationMode(view)).toBe(
      [
        "Isolation mode:",
        "  effective:       Shared",
        "  spec:            Dedicated (dedicated nodeSelector pool=dev)",
        "  dedicated nodes: n1, n2",
        "  migration:       Shared → Dedicated, Moving",
        "    pods:          1 moved (running in the new placement), 3 left",
        "    blocked:",
        "      Pod shop/bare: bare Pod: nobody recreates it",
        "    started:       2026-05-01T10:00:00.000Z",
        "    finished:      not yet",
        "    steps:",
        "      2026-05-01T10:00:00.500Z  Update  TenantCluster dev: isolation migration Shared → Dedicated started: 4 Pod(s) of 2 workload(s)",
        "      2026-05-01T10:00:01.100Z  Skip    Pod shop/bare: isolation migration Shared → Dedicated cannot move Pod shop/bare: bare Pod: nobody recreates it",
        "      2026-05-01T10:00:02.000Z  Update  TenantCluster dev: isolation migration Shared → Dedicated: moving Deployment shop/web",
        "      2026-05-01T10:00:09.000Z  Update  TenantCluster dev: isolation migration Shared → Dedicated: Deployment shop/web moved",
        "",
      ].join("\n"),
    );
  });

  it("shows a finished migration with its finish time, or why its steps were not read", () => {
    const tc = {
      spec: dedicatedSpec,
      status: {
        isolation: {
          mode: "Dedicated",
          migration: {
            from: "Shared",
            to: "Dedicated",
            phase: "Complete",
            moved: 4,
            left: 0,
            startedAt: "2026-05-01T10:00:00.000Z",
            finishedAt: "2026-05-01T10:01:00.000Z",
          },
        },
      },
    };
    const text = formatIsolationMode(isolationModeOf(tc, undefined, "not read: pass --nats-url or set NATS_URL"));
    expect(text).toContain("  effective:       Dedicated\n");
    expect(text).toContain("  dedicated nodes: none\n");
    expect(text).toContain("  migration:       Shared → Dedicated, Complete\n    pods:          4 moved");
    expect(text).toContain("    finished:      2026-05-01T10:01:00.000Z\n");
    expect(text).toContain("    steps:\n      Decisions not read: pass --nats-url or set NATS_URL\n");
    expect(text).not.toContain("blocked:");
    expect(formatIsolationMode(isolationModeOf(tc, []))).toContain("    steps:\n      none in the DECISIONS stream\n");
  });

  it("shows a tenant that never migrated, and one whose mode the sync worker has not written yet", () => {
    const text = formatIsolationMode(isolationModeOf({ spec: {}, status: {} }, history));
    expect(text).toBe(
      [
        "Isolation mode:",
        "  effective:       Shared (status.isolation.mode not written yet by the sync worker)",
        "  spec:            Shared",
        "  dedicated nodes: none",
        "  migration:       none recorded",
        "",
      ].join("\n"),
    );
  });

  it("is a section of explain tc/<tenant>, before the isolation objects", () => {
    const tenant: TenantExplanation = {
      name: "dev",
      phase: "Ready",
      endpoint: "",
      hostNamespace: "tp-dev",
      profile: "(built-in)",
      policy: "(default: every supported kind)",
      conditions: [],
      isolation: [],
      isolationMode: isolationModeOf({ spec: dedicatedSpec, status: { isolation: { mode: "Dedicated" } } }, []),
      podSecurity: {},
      notes: [],
    };
    expect(formatTenantExplanation(tenant)).toMatch(
      /Conditions:\n {2}none yet\n\nIsolation mode:\n {2}effective: +Dedicated\n[\s\S]*\nIsolation in tp-dev:\n/,
    );
  });
});
