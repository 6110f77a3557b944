import { defaultIsolationProfileSpec, parseIsolationProfileSpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { compileLimitRange, compileResourceQuota, quotaNotes } from "./resource-limits.js";

const target = { tenant: "dev", namespace: "tp-dev", profileName: "p" };

describe("compileResourceQuota", () => {
  it("copies hard into tenantplane-quota when there is no share to add", () => {
    const quota = compileResourceQuota(target, defaultIsolationProfileSpec.resourceQuota);
    expect(quota?.metadata.name).toBe("tenantplane-quota");
    expect(quota?.spec.hard).toEqual(defaultIsolationProfileSpec.resourceQuota.hard);
    expect(quota?.spec.hard).not.toBe(defaultIsolationProfileSpec.resourceQuota.hard);
    expect(quota?.metadata.annotations["tenantplane.io/control-plane-share"]).toBe("{}");
  });

  it("adds tenantplane's share to the limits the profile sets, and records what it added", () => {
    const quota = compileResourceQuota(
      target,
      { hard: { pods: "50", "limits.cpu": "24", "requests.memory": "16Gi" } },
      { pods: "2", "limits.cpu": "700m", "requests.memory": "288Mi", services: "3" },
    );
    // services is not limited by the profile, so it stays unlimited rather than limited to the share.
    expect(quota?.spec.hard).toEqual({ pods: "52", "limits.cpu": "24700m", "requests.memory": "16672Mi" });
    expect(JSON.parse(quota?.metadata.annotations["tenantplane.io/control-plane-share"] ?? "")).toEqual({
      pods: "2",
      "limits.cpu": "700m",
      "requests.memory": "288Mi",
    });
  });

  it("produces no quota for an empty hard map", () => {
    expect(compileResourceQuota(target, { hard: {} }, { pods: "2" })).toBeUndefined();
  });
});

describe("compileLimitRange", () => {
  it("writes container and PVC entries, leaving out empty maps", () => {
    const range = compileLimitRange(target, defaultIsolationProfileSpec.limitRange);
    expect(range?.metadata.name).toBe("tenantplane-limits");
    expect(range?.spec.limits).toEqual([
      {
        type: "Container",
        default: { cpu: "500m", memory: "512Mi" },
        defaultRequest: { cpu: "100m", memory: "128Mi" },
        max: { cpu: "4", memory: "8Gi" },
      },
      { type: "PersistentVolumeClaim", max: { storage: "50Gi" } },
    ]);
  });

  it("leaves out an entry with no maps, and the object when nothing is left", () => {
    const onlyPvc = parseIsolationProfileSpec({
      limitRange: {
        container: { default: {}, defaultRequest: {}, max: {} },
        persistentVolumeClaim: { min: { storage: "1Gi" } },
      },
    }).limitRange;
    expect(compileLimitRange(target, onlyPvc)?.spec.limits).toEqual([
      { type: "PersistentVolumeClaim", min: { storage: "1Gi" }, max: { storage: "50Gi" } },
    ]);
    const none = parseIsolationProfileSpec({
      limitRange: { container: { default: {}, defaultRequest: {}, max: {} }, persistentVolumeClaim: { max: {} } },
    }).limitRange;
    expect(compileLimitRange(target, none)).toBeUndefined();
  });
});

describe("quotaNotes", () => {
  it("is silent for the default profile", () => {
    expect(quotaNotes(defaultIsolationProfileSpec.resourceQuota, defaultIsolationProfileSpec.limitRange)).toEqual([]);
  });

  it("warns when a quota on limits has no default limit to satisfy it", () => {
    const spec = parseIsolationProfileSpec({
      resourceQuota: { hard: { "limits.memory": "4Gi", "requests.cpu": "2", pods: 10 } },
      limitRange: { container: { default: { cpu: "1" }, defaultRequest: {} } },
    });
    const notes = quotaNotes(spec.resourceQuota, spec.limitRange);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^resourceQuota\.hard\[limits\.memory\] is set but limitRange\.container\.default has no memory: /,
    );
    expect(notes[0]).toContain("tenant API server");
  });

  it("accepts a default limit as the source of default requests", () => {
    const spec = parseIsolationProfileSpec({
      resourceQuota: { hard: { "requests.memory": "4Gi" } },
      limitRange: { container: { default: { memory: "1Gi" }, defaultRequest: {} } },
    });
    expect(quotaNotes(spec.resourceQuota, spec.limitRange)).toEqual([]);
  });
});
