import type { PlannedDecisionWithObject } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { formatDecisions, formatTable } from "./format.js";

const entry = (name: string, hashed: boolean, reason: string): PlannedDecisionWithObject => ({
  tenant: "dev",
  kind: "ConfigMap",
  action: "Create",
  tenantRef: { namespace: "shop", name },
  hostRef: { namespace: "tp-dev", name: `${name}-x-shop-x-dev` },
  hashed,
  reason,
});

describe("formatTable", () => {
  it("aligns columns under a header and leaves the last column unpadded", () => {
    expect(formatTable([entry("a", false, "r1"), entry("longer", true, "r2")])).toBe(
      [
        "KIND       VIRTUAL      HOST                        HASHED  ACTION  REASON",
        "ConfigMap  shop/a       tp-dev/a-x-shop-x-dev       no      Create  r1",
        "ConfigMap  shop/longer  tp-dev/longer-x-shop-x-dev  yes     Create  r2",
        "",
      ].join("\n"),
    );
  });
});

describe("formatDecisions", () => {
  const decision = {
    id: "1",
    time: "2026-01-01T00:00:00.000Z",
    tenant: "dev",
    service: "explain-sync",
    action: "Skip" as const,
    kind: "Pod",
    tenantRef: { namespace: "a", name: "b" },
    hostRef: { namespace: "tp-dev", name: "b-x-a-x-dev" },
    reason: "a reason long enough that a YAML printer folding at eighty columns would have broken it in two",
  };

  it("prints JSON and YAML that read back to the same decisions", () => {
    expect(JSON.parse(formatDecisions([decision], "json"))).toEqual([decision]);
    const yaml = formatDecisions([decision], "yaml");
    expect(YAML.parse(yaml)).toEqual([decision]);
    expect(yaml).toContain(`reason: ${decision.reason}\n`);
  });
});
