import { hostNamespaceFor } from "@tenantplane/mapping";
import type { HostRules, ServiceTypeRules } from "../host-rules.js";
import type { JsonObject } from "./json.js";
import { items, read, type Violation } from "./violation.js";

const SERVICE_TYPES = "IsolationProfile spec.workloads.services";
const TYPE_RULES: Record<string, keyof ServiceTypeRules> = {
  NodePort: "nodePort",
  LoadBalancer: "loadBalancer",
  ExternalName: "externalName",
};
/** Why a LoadBalancer Service stays off the host while the tenant is Private. */
export const PRIVATE_LOAD_BALANCER_PROBLEM =
  "LoadBalancer is not made on the host while TenantCluster status.isolation.mode is Private: a host load balancer cannot reach Pods on the tenant's own nodes; expose the Service on those nodes' own network instead (a NodePort Service on them, or a load balancer in front of them)";
const HOST_NAMESPACE = /^tp-([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/;

/**
 * What keeps `service` off the host: a type the profile does not allow, a need for more
 * node ports or load balancers than its quota holds on its own, and an ExternalName that
 * points inside the host cluster's DNS domain anywhere but the tenant's host namespace
 * (another tenant's control plane, the host API server).
 */
export function serviceViolations(service: JsonObject, rules: HostRules, tenant: string): Violation[] {
  const found: Violation[] = [];
  const spec = read(service, "spec");
  const type = read(spec, "type");
  const rule = typeof type === "string" ? TYPE_RULES[type] : undefined;
  if (rule !== undefined && !rules.services[rule]) {
    found.push({ field: "spec.type", problem: `${String(type)} Services are not allowed by ${SERVICE_TYPES}.${rule}` });
  }
  if (type === "LoadBalancer" && rules.effectiveMode === "Private") {
    found.push({ field: "spec.type", problem: PRIVATE_LOAD_BALANCER_PROBLEM });
  }
  if (type === "LoadBalancer" && rules.serviceQuota.loadBalancers === 0) {
    found.push({ field: "spec.type", problem: "LoadBalancer exceeds resourceQuota services.loadbalancers (0)" });
  }
  const nodePorts = nodePortsNeeded(spec, type);
  const quota = rules.serviceQuota.nodePorts;
  if (quota !== undefined && nodePorts > quota) {
    found.push({
      field: "spec.ports",
      problem: `${String(type)} needs ${nodePorts} node ports, more than resourceQuota services.nodeports (${quota})`,
    });
  }
  if (type === "ExternalName") {
    const target = read(spec, "externalName");
    if (typeof target === "string") {
      const problem = externalNameProblem(target, rules.clusterDomain, tenant);
      if (problem !== undefined) found.push({ field: "spec.externalName", problem });
    }
  }
  return found;
}

/**
 * Node ports a Service spec takes: one per port of a NodePort Service, and of a
 * LoadBalancer unless it opts out of node port allocation.
 */
export function nodePortsNeeded(spec: unknown, type: unknown): number {
  const ports = items(read(spec, "ports")).length;
  if (type === "NodePort") return ports;
  if (type === "LoadBalancer" && read(spec, "allocateLoadBalancerNodePorts") !== false) return ports;
  return 0;
}

/**
 * Why an ExternalName target is refused, or undefined: names in the cluster domain (and
 * the `<service>.<namespace>.svc` short form) may only point into the tenant's own host
 * namespace.
 */
function externalNameProblem(target: string, clusterDomain: string, tenant: string): string | undefined {
  const name = target.toLowerCase().replace(/\.$/, "");
  const own = hostNamespaceFor(tenant);
  const labels = name.split(".");
  const inDomain = name === clusterDomain || name.endsWith(`.${clusterDomain}`);
  const local = inDomain ? labels.slice(0, labels.length - clusterDomain.split(".").length) : labels;
  // Inside the domain, or the short form <service>.<namespace>.svc that cluster DNS search paths complete.
  const svcAt = local.lastIndexOf("svc");
  if (!inDomain && !(svcAt === local.length - 1 && svcAt >= 1)) return undefined;
  const namespace = svcAt >= 1 && svcAt === local.length - 1 ? local[svcAt - 1] : undefined;
  if (namespace === own && svcAt === local.length - 1) return undefined;
  const other = namespace === undefined ? undefined : HOST_NAMESPACE.exec(namespace)?.[1];
  if (other !== undefined) {
    return `${target} points at tenant ${other}'s host namespace ${namespace}, where its control plane runs; only ${own} is reachable`;
  }
  return `${target} points inside the cluster domain ${clusterDomain} outside the tenant's host namespace ${own}`;
}
