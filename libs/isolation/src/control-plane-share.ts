import { addQuantities, type ControlPlaneSpec, type LimitRangeSpec, type ResourceList } from "@tenantplane/api";

/**
 * Requests and limits of the tenant DNS server's one container. The provisioner's DNS
 * Deployment takes them from here, so the quota share reserved for it is what it runs with.
 */
export const TENANT_DNS_RESOURCES = {
  requests: { cpu: "50m", memory: "32Mi" },
  limits: { cpu: "200m", memory: "128Mi" },
} as const;

/** The parts of a TenantCluster's `spec.controlPlane` that size tenantplane's share of the quota. */
export type ControlPlaneShareInput = Pick<ControlPlaneSpec, "resources" | "storage" | "expose">;

/**
 * Annotation on the host ResourceQuota holding {@link controlPlaneShare} as it was added to
 * `spec.hard` (JSON, only the keys the quota names): what is tenantplane's, so a reader can
 * tell the tenant's own limit and usage from the host's totals.
 */
export const ANNOTATION_CONTROL_PLANE_SHARE = "tenantplane.io/control-plane-share";

// Objects tenantplane itself keeps in every host namespace, as quota counts them.
const OWN_OBJECTS: ResourceList = {
  // The k3s StatefulSet's pod and the DNS Deployment's pod.
  pods: "2",
  // The API Service, the StatefulSet's headless Service and the DNS Service.
  services: "3",
  // The DNS server's Corefile and records, and kube-root-ca.crt, which the host's
  // controller-manager puts in every namespace.
  configmaps: "3",
  // The tenant's PKI and its admin kubeconfig.
  secrets: "2",
  "count/deployments.apps": "1",
  "count/replicasets.apps": "1",
  "count/statefulsets.apps": "1",
};
const CORE_COUNTED = ["pods", "services", "configmaps", "secrets", "persistentvolumeclaims"];
// Compute resources a quota names bare (`cpu` is `requests.cpu`) and by limit.
const COMPUTE = new Set(["cpu", "memory", "ephemeral-storage"]);

interface Container {
  requests?: Readonly<Record<string, string | undefined>>;
  limits?: Readonly<Record<string, string | undefined>>;
}

/**
 * What tenantplane's own objects in a tenant's host namespace count against its
 * ResourceQuota, keyed by quota resource name: the k3s pod (its resources as the
 * LimitRange completes them), the DNS pod, the data volume, the Services (the API's load
 * balancer and its node port when exposed) and the Secrets and ConfigMaps tenantplane
 * keeps there. The isolation service adds it to the profile's numbers so the tenant gets
 * all of them. A volume with no storage class is counted only by class-less keys: its
 * class is the host's default, which is unknown here. Pure.
 */
export function controlPlaneShare(controlPlane: ControlPlaneShareInput, limitRange: LimitRangeSpec): ResourceList {
  const share: Record<string, string[]> = {};
  const add = (key: string, amount: string) => (share[key] ??= []).push(amount);

  // The copy-pki init container has the k3s container's resources, so the pod counts as one of them.
  for (const pod of [controlPlane.resources, TENANT_DNS_RESOURCES]) {
    const { requests, limits } = effectiveResources(pod, limitRange.container);
    for (const [resource, amount] of Object.entries(requests)) {
      add(`requests.${resource}`, amount);
      if (COMPUTE.has(resource) || resource.startsWith("hugepages-")) add(resource, amount);
    }
    for (const [resource, amount] of Object.entries(limits)) {
      if (COMPUTE.has(resource)) add(`limits.${resource}`, amount);
    }
  }

  const { size, storageClassName } = controlPlane.storage;
  const claims = { persistentvolumeclaims: "1", "requests.storage": size };
  const exposed = controlPlane.expose.loadBalancer.enabled;
  const objects: ResourceList = {
    ...OWN_OBJECTS,
    ...claims,
    ...(storageClassName === undefined
      ? {}
      : Object.fromEntries(
          Object.entries(claims).map(([key, amount]) => [
            `${storageClassName}.storageclass.storage.k8s.io/${key}`,
            amount,
          ]),
        )),
    // A LoadBalancer Service also takes a node port per port unless told not to; the API has one port.
    ...(exposed ? { "services.loadbalancers": "1", "services.nodeports": "1" } : {}),
  };
  for (const [key, amount] of Object.entries(objects)) {
    add(key, amount);
    if (CORE_COUNTED.includes(key)) add(`count/${key}`, amount);
  }
  return Object.fromEntries(Object.entries(share).map(([key, amounts]) => [key, addQuantities(...amounts)]));
}

/**
 * A container's requests and limits once the API server is done with them: a limit without a
 * request makes the request, then LimitRanger fills what is missing from the LimitRange as the
 * API server stores it (an unset `default` is `max`, an unset `defaultRequest` is `default`,
 * else `min`).
 */
function effectiveResources(
  container: Container,
  range: LimitRangeSpec["container"],
): { requests: Record<string, string>; limits: Record<string, string> } {
  const defaults: Record<string, string> = { ...range.max, ...range.default };
  const defaultRequests: Record<string, string> = { ...range.min, ...defaults, ...range.defaultRequest };
  const own = (list: Container["requests"]) =>
    Object.fromEntries(Object.entries(list ?? {}).filter((e): e is [string, string] => e[1] !== undefined));
  const limits = { ...defaults, ...own(container.limits) };
  const requests = { ...defaultRequests, ...own(container.limits), ...own(container.requests) };
  return { requests, limits };
}
