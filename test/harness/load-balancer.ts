import { CoreV1Api, type KubeConfig, type V1Service } from "@kubernetes/client-node";
import { waitFor } from "./wait-for.js";

/**
 * Plays the cloud load-balancer controller: writes `ip` as the only entry of the Service's
 * `status.loadBalancer.ingress` (status subresource), retrying on update conflicts.
 * Waits up to 30 s for the Service to exist. Returns the updated Service.
 */
export async function setLoadBalancerIngress(
  kc: KubeConfig,
  namespace: string,
  serviceName: string,
  ip: string,
): Promise<V1Service> {
  const core = kc.makeApiClient(CoreV1Api);
  return waitFor(
    async () => {
      const service = await core.readNamespacedService({ namespace, name: serviceName });
      service.status = { ...service.status, loadBalancer: { ingress: [{ ip, ipMode: "VIP" }] } };
      return core.replaceNamespacedServiceStatus({ namespace, name: serviceName, body: service });
    },
    {
      description: `status.loadBalancer.ingress of Service ${namespace}/${serviceName} to be written`,
      timeoutMs: 30_000,
    },
  );
}
