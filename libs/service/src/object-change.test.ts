import { describe, expect, it } from "vitest";
import { changeOf, tenantDecider } from "./object-change.js";

const at = (resourceVersion: string) => ({ metadata: { name: "x", resourceVersion } });

describe("changeOf", () => {
  it("tells create, update and no-op apart", () => {
    expect(changeOf(undefined, at("1"))).toBe("Create");
    expect(changeOf(at("1"), at("2"))).toBe("Update");
    expect(changeOf(at("2"), at("2"))).toBeUndefined();
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
    expect(published).toEqual([
      {
        tenant: "dev",
        action: "Create",
        kind: "Service",
        tenantRef: { namespace: "", name: "dev" },
        hostRef: { namespace: "tp-dev", name: "k3s" },
        reason: "tenant API",
      },
    ]);
  });
});
