import { describe, expect, it } from "vitest";
import { API_VERSION, TAINT_KEY_DEDICATED } from "./constants.js";
import {
  DEDICATED_SELECTOR_MESSAGE,
  dedicatedNodeSelectorOf,
  dedicatedTaint,
  dedicatedToleration,
  isolationModeOf,
} from "./isolation-mode.js";
import { parseTenantCluster, TenantClusterStatusSchema } from "./tenant-cluster.js";
import { ValidationError } from "./validation-error.js";

const tenant = (spec: unknown) => ({
  apiVersion: API_VERSION,
  kind: "TenantCluster",
  metadata: { name: "team-a" },
  spec,
});

function issuesOf(spec: unknown): string[] {
  try {
    parseTenantCluster(tenant(spec));
  } catch (e) {
    if (e instanceof ValidationError) return e.issues.map((i) => `${i.path}: ${i.message}`);
    throw e;
  }
  return [];
}

describe("spec.isolation", () => {
  it("is absent by default, which means Shared", () => {
    const spec = parseTenantCluster(tenant({})).spec;
    expect(spec.isolation).toBeUndefined();
    expect(isolationModeOf(spec)).toBe("Shared");
    expect(dedicatedNodeSelectorOf(spec)).toBeUndefined();
  });

  it("fills mode Shared and evictBarePods false into {}", () => {
    expect(parseTenantCluster(tenant({ isolation: {} })).spec.isolation).toEqual({
      mode: "Shared",
      migration: { evictBarePods: false },
    });
  });

  it("takes Dedicated with a node selector, and reserves by it only while Dedicated", () => {
    const dedicated = parseTenantCluster(
      tenant({ isolation: { mode: "Dedicated", dedicated: { nodeSelector: { "tenantplane.io/pool": "a" } } } }),
    ).spec;
    expect(dedicatedNodeSelectorOf(dedicated)).toEqual({ "tenantplane.io/pool": "a" });
    const shared = parseTenantCluster(
      tenant({ isolation: { mode: "Shared", dedicated: { nodeSelector: { "tenantplane.io/pool": "a" } } } }),
    ).spec;
    expect(dedicatedNodeSelectorOf(shared)).toBeUndefined();
  });

  it("refuses Dedicated without a selector, or with an empty one, naming the field", () => {
    const expected = [`spec.isolation.dedicated.nodeSelector: ${DEDICATED_SELECTOR_MESSAGE}`];
    expect(issuesOf({ isolation: { mode: "Dedicated" } })).toEqual(expected);
    expect(issuesOf({ isolation: { mode: "Dedicated", dedicated: {} } })).toEqual(expected);
    expect(issuesOf({ isolation: { mode: "Dedicated", dedicated: { nodeSelector: {} } } })).toEqual(expected);
  });

  it("takes mode Private without a selector, refuses an unknown mode and bad selector keys and values", () => {
    expect(issuesOf({ isolation: { mode: "Private" } })).toEqual([]);
    expect(issuesOf({ isolation: { mode: "Isolated" } })).toEqual([expect.stringMatching(/^spec\.isolation\.mode: /)]);
    expect(
      issuesOf({ isolation: { mode: "Dedicated", dedicated: { nodeSelector: { "no spaces": "x y" } } } }).sort(),
    ).toEqual([
      expect.stringMatching(/^spec\.isolation\.dedicated\.nodeSelector: keys must be label keys/),
      expect.stringMatching(/^spec\.isolation\.dedicated\.nodeSelector\[no spaces\]: must be a label value/),
    ]);
  });
});

describe("status.isolation", () => {
  it("takes the effective mode, the reserved nodes and a migration", () => {
    const status = {
      isolation: {
        mode: "Dedicated",
        dedicatedNodes: ["n1", "n2"],
        migration: {
          from: "Shared",
          to: "Dedicated",
          phase: "Blocked",
          moved: 3,
          left: 1,
          blocked: [{ namespace: "default", name: "bare", reason: "no controller recreates it" }],
          startedAt: "2026-12-02T00:00:00Z",
        },
      },
    };
    expect(TenantClusterStatusSchema.parse(status)).toEqual(status);
  });

  it("bounds the blocked list at 50", () => {
    const blocked = Array.from({ length: 51 }, (_, i) => ({ namespace: "d", name: `p${i}`, reason: "bare" }));
    const status = { isolation: { migration: { from: "Shared", to: "Dedicated", phase: "Blocked", blocked } } };
    expect(TenantClusterStatusSchema.safeParse(status).success).toBe(false);
  });
});

describe("the dedicated taint and toleration", () => {
  it("carry the tenant's name as value, NoSchedule", () => {
    expect(dedicatedTaint("team-a")).toEqual({ key: TAINT_KEY_DEDICATED, value: "team-a", effect: "NoSchedule" });
    expect(dedicatedToleration("team-a")).toEqual({
      key: "tenantplane.io/dedicated",
      operator: "Equal",
      value: "team-a",
      effect: "NoSchedule",
    });
  });
});
