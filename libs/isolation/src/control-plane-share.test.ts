import { ControlPlaneSpecSchema, defaultIsolationProfileSpec, parseIsolationProfileSpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { controlPlaneShare } from "./control-plane-share.js";

const controlPlane = (spec: unknown = {}) => ControlPlaneSpecSchema.parse(spec);
const { limitRange } = defaultIsolationProfileSpec;

describe("controlPlaneShare", () => {
  it("counts the k3s pod as the LimitRange completes it, the DNS pod, the volume and the objects", () => {
    // k3s asks 100m/256Mi and sets no limits: the LimitRange's default (500m/512Mi) is its limit.
    expect(controlPlaneShare(controlPlane(), limitRange)).toEqual({
      pods: "2",
      "count/pods": "2",
      "requests.cpu": "150m",
      cpu: "150m",
      "requests.memory": "288Mi",
      memory: "288Mi",
      "limits.cpu": "700m",
      "limits.memory": "640Mi",
      persistentvolumeclaims: "1",
      "count/persistentvolumeclaims": "1",
      "requests.storage": "5Gi",
      services: "3",
      "count/services": "3",
      configmaps: "3",
      "count/configmaps": "3",
      secrets: "2",
      "count/secrets": "2",
      "count/deployments.apps": "1",
      "count/replicasets.apps": "1",
      "count/statefulsets.apps": "1",
    });
  });

  it("takes the control plane's own limits over the LimitRange's, and its volume's class", () => {
    const share = controlPlaneShare(
      controlPlane({
        resources: { requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "2", memory: "2Gi" } },
        storage: { size: "20Gi", storageClassName: "fast" },
      }),
      limitRange,
    );
    expect(share).toMatchObject({
      "requests.cpu": "1050m",
      "limits.cpu": "2200m",
      "limits.memory": "2176Mi",
      "requests.storage": "20Gi",
      "fast.storageclass.storage.k8s.io/requests.storage": "20Gi",
      "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
    });
  });

  it("counts the API's load balancer and its node port only when exposed", () => {
    expect(controlPlaneShare(controlPlane(), limitRange)).not.toHaveProperty("services.loadbalancers");
    expect(controlPlaneShare(controlPlane({ expose: { loadBalancer: { enabled: true } } }), limitRange)).toMatchObject({
      "services.loadbalancers": "1",
      "services.nodeports": "1",
      services: "3",
    });
  });

  it("completes requests and limits as the API server stores a LimitRange: default from max, request from default or min", () => {
    const range = parseIsolationProfileSpec({
      limitRange: {
        container: { default: {}, defaultRequest: {}, min: { "ephemeral-storage": "1Gi" }, max: { cpu: "1" } },
      },
    }).limitRange;
    const share = controlPlaneShare(controlPlane(), range);
    // k3s: limit cpu 1 from max; DNS keeps its own. k3s has no memory limit and nothing supplies one.
    expect(share["limits.cpu"]).toBe("1200m");
    expect(share["limits.memory"]).toBe("128Mi");
    // ephemeral-storage: min becomes the default request of both pods.
    expect(share["requests.ephemeral-storage"]).toBe("2Gi");
    expect(share["ephemeral-storage"]).toBe("2Gi");
    expect(share).not.toHaveProperty("limits.ephemeral-storage");
  });
});
