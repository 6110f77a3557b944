import { defaultIsolationProfileSpec, parseIsolationProfileSpec, parseTenantCluster } from "@tenantplane/api";
import { lockdownIsolationProfileSpec } from "@tenantplane/isolation";
import { describe, expect, it } from "vitest";
import { controlPlaneBlockers } from "./control-plane-admission.js";
import { controlPlaneStatefulSet } from "./control-plane.js";

const sts = (controlPlane: Record<string, unknown> = {}) =>
  controlPlaneStatefulSet(
    parseTenantCluster({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: "acme" },
      spec: { controlPlane },
    }),
  );
const profile = (spec: Record<string, unknown>) => parseIsolationProfileSpec(spec);
const quota = (hard: Record<string, string>) => profile({ resourceQuota: { hard } });
const container = (limits: Record<string, Record<string, string>>) =>
  profile({
    resourceQuota: { hard: {} },
    limitRange: { container: { default: {}, defaultRequest: {}, min: {}, max: {}, ...limits } },
  });

describe("controlPlaneBlockers", () => {
  it("finds nothing in the built-in, lockdown and example-like profiles", () => {
    expect(controlPlaneBlockers(defaultIsolationProfileSpec, sts())).toEqual([]);
    expect(controlPlaneBlockers(lockdownIsolationProfileSpec, sts())).toEqual([]);
    expect(
      controlPlaneBlockers(
        profile({ limitRange: { persistentVolumeClaim: { min: { storage: "1Gi" }, max: { storage: "50Gi" } } } }),
        sts({ storage: { size: "2Gi" } }),
      ),
    ).toEqual([]);
  });

  it("names a pods quota of 0", () => {
    expect(controlPlaneBlockers(quota({ pods: "0" }), sts())).toEqual([
      "resourceQuota.hard[pods] is 0: the control-plane pod cannot be created; allow at least 1",
    ]);
  });

  it("names a claims quota of 0 and a storage quota below the volume", () => {
    const blockers = controlPlaneBlockers(
      quota({ persistentvolumeclaims: "0", "requests.storage": "1Gi" }),
      sts({ storage: { size: "5Gi" } }),
    );
    expect(blockers).toHaveLength(2);
    expect(blockers[0]).toContain("resourceQuota.hard[persistentvolumeclaims] is 0");
    expect(blockers[1]).toBe(
      "resourceQuota.hard[requests.storage] is 1Gi, below the control plane's volume size of 5Gi: " +
        "raise the quota or lower spec.controlPlane.storage.size",
    );
  });

  it("checks a storage-class quota only for the class the volume uses", () => {
    const hard = { "fast.storageclass.storage.k8s.io/requests.storage": "1Gi" };
    expect(controlPlaneBlockers(quota(hard), sts({ storage: { size: "5Gi" } }))).toEqual([]);
    expect(controlPlaneBlockers(quota(hard), sts({ storage: { size: "5Gi", storageClassName: "fast" } }))[0]).toContain(
      "fast.storageclass.storage.k8s.io/requests.storage",
    );
  });

  it("names cpu and memory request quotas below the pod's requests", () => {
    const blockers = controlPlaneBlockers(quota({ "requests.cpu": "50m", memory: "128Mi" }), sts());
    expect(blockers).toEqual([
      "resourceQuota.hard[requests.cpu] is 50m, below the control plane's cpu request of 100m: " +
        "raise the quota or lower spec.controlPlane.resources.requests.cpu",
      "resourceQuota.hard[memory] is 128Mi, below the control plane's memory request of 256Mi: " +
        "raise the quota or lower spec.controlPlane.resources.requests.memory",
    ]);
  });

  it("names a limits quota the pod cannot satisfy because nothing gives it a limit", () => {
    const noDefaults = profile({
      resourceQuota: { hard: { "limits.memory": "8Gi" } },
      limitRange: { container: { default: {}, defaultRequest: {}, max: {} } },
    });
    expect(controlPlaneBlockers(noDefaults, sts())[0]).toContain(
      "resourceQuota.hard[limits.memory] is set but the control plane's pod has no memory limit",
    );
    expect(controlPlaneBlockers(noDefaults, sts({ resources: { limits: { memory: "1Gi" } } }))).toEqual([]);
  });

  it("names a LimitRange maximum below the container's request", () => {
    const blockers = controlPlaneBlockers(container({ max: { memory: "128Mi" } }), sts());
    expect(blockers.length).toBeGreaterThan(0);
    expect(blockers[0]).toMatch(/^limitRange\.container\.max\[memory\] is 128Mi, below the memory request of 256Mi/);
  });

  it("names a LimitRange minimum above the container's limit or request", () => {
    const blockers = controlPlaneBlockers(
      container({ min: { cpu: "2" } }),
      sts({ resources: { requests: { cpu: "1" }, limits: { cpu: "1" } } }),
    );
    expect(blockers[0]).toMatch(/^limitRange\.container\.min\[cpu\] is 2, above the cpu request/);
  });

  it("names a LimitRange default limit below the container's request", () => {
    const blockers = controlPlaneBlockers(container({ default: { memory: "128Mi" } }), sts());
    expect(blockers.some((b) => b.startsWith("limitRange.container.default[memory] gives"))).toBe(true);
  });

  it("names claim limits that refuse the data volume", () => {
    const claims = profile({ limitRange: { persistentVolumeClaim: { min: { storage: "10Gi" }, max: {} } } });
    expect(controlPlaneBlockers(claims, sts({ storage: { size: "5Gi" } }))).toEqual([
      "limitRange.persistentVolumeClaim.min[storage] is 10Gi, above the control plane's volume of 5Gi: " +
        "lower the minimum or raise spec.controlPlane.storage.size",
    ]);
    const small = profile({ limitRange: { persistentVolumeClaim: { max: { storage: "1Gi" } } } });
    expect(controlPlaneBlockers(small, sts({ storage: { size: "5Gi" } }))[0]).toContain(
      "limitRange.persistentVolumeClaim.max[storage] is 1Gi",
    );
  });

  it("names Service quotas that leave no room for the control plane's Services", () => {
    expect(controlPlaneBlockers(quota({ services: "1" }), sts())[0]).toContain("resourceQuota.hard[services] is 1");
    const noLb = quota({ "services.loadbalancers": "0" });
    expect(controlPlaneBlockers(noLb, sts())).toEqual([]);
    expect(controlPlaneBlockers(noLb, sts(), { loadBalancer: true })[0]).toContain(
      "resourceQuota.hard[services.loadbalancers] is 0, but spec.controlPlane.expose.loadBalancer.enabled",
    );
  });
});
