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

  it("is never blocked by a quota's amounts: the isolation service adds the control plane's share", () => {
    const tight = quota({
      pods: "0",
      persistentvolumeclaims: "0",
      "requests.storage": "1Gi",
      "fast.storageclass.storage.k8s.io/requests.storage": "1Gi",
      "requests.cpu": "50m",
      memory: "128Mi",
      services: "0",
      "services.loadbalancers": "0",
    });
    expect(controlPlaneBlockers(tight, sts({ storage: { size: "5Gi", storageClassName: "fast" } }))).toEqual([]);
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
});
