import { hostNamespaceFor, isManaged, reverseLookup, type MetadataMaps } from "@tenantplane/mapping";
import type { HostRules } from "./host-rules.js";
import { nodePortsNeeded } from "./internal/check-service.js";
import { read } from "./internal/violation.js";
import type { PlannedDecisionWithObject, PlanResult } from "./plan.js";

interface Usage {
  loadBalancers: number;
  nodePorts: number;
}

/**
 * `result` with the Creates and Updates of Services that would push the host namespace
 * past its `services.loadbalancers` or `services.nodeports` quota turned into Skips
 * naming the quota. Usage counts every Service in `hostObjects` of `tenant`'s host
 * namespace except those the plan replaces or deletes and tenantplane's own (the control
 * plane's load balancer comes on top of the profile's quota, see controlPlaneShare in
 * libs/isolation); the plan's own Services claim what is left in plan order. Counting spans Services, so it
 * is a step after {@link plan} (a full pass or explain-sync), never part of `planKey`.
 */
export function applyServiceQuota(
  result: PlanResult,
  rules: HostRules,
  tenant: string,
  hostObjects: readonly unknown[],
): PlanResult {
  const { loadBalancers, nodePorts } = rules.serviceQuota;
  if (loadBalancers === undefined && nodePorts === undefined) return result;
  const replaced = new Set(
    result.decisions.filter((d) => d.kind === "Service" && d.action !== "Skip").map((d) => d.hostRef.name),
  );
  const used: Usage = { loadBalancers: 0, nodePorts: 0 };
  const namespace = hostNamespaceFor(tenant);
  for (const value of hostObjects) {
    const metadata = read(value, "metadata");
    const name = read(metadata, "name");
    if (read(value, "kind") !== "Service" || typeof name !== "string" || replaced.has(name)) continue;
    if (isOwnObject(metadata as MetadataMaps | undefined)) continue;
    if ((read(metadata, "namespace") ?? namespace) !== namespace) continue;
    add(used, usageOf(read(value, "spec")));
  }
  const decisions = result.decisions.map((decision): PlannedDecisionWithObject => {
    if (decision.kind !== "Service" || (decision.action !== "Create" && decision.action !== "Update")) return decision;
    const need = usageOf(decision.object?.["spec"]);
    const over = exceeded(used, need, loadBalancers, nodePorts);
    if (over === undefined) {
      add(used, need);
      return decision;
    }
    const { object: _object, ...target } = decision;
    return { ...target, action: "Skip", reason: `refused by host rules: ${over}` };
  });
  return { ...result, decisions };
}

function usageOf(spec: unknown): Usage {
  const type = read(spec, "type");
  return { loadBalancers: type === "LoadBalancer" ? 1 : 0, nodePorts: nodePortsNeeded(spec, type) };
}

function add(total: Usage, more: Usage): void {
  total.loadBalancers += more.loadBalancers;
  total.nodePorts += more.nodePorts;
}

function exceeded(used: Usage, need: Usage, loadBalancers?: number, nodePorts?: number): string | undefined {
  if (
    loadBalancers !== undefined &&
    need.loadBalancers > 0 &&
    used.loadBalancers + need.loadBalancers > loadBalancers
  ) {
    return `spec.type: LoadBalancer would exceed resourceQuota services.loadbalancers (${loadBalancers}, ${used.loadBalancers} in use)`;
  }
  if (nodePorts !== undefined && need.nodePorts > 0 && used.nodePorts + need.nodePorts > nodePorts) {
    return `spec.ports: ${need.nodePorts} node ports would exceed resourceQuota services.nodeports (${nodePorts}, ${used.nodePorts} in use)`;
  }
  return undefined;
}

// tenantplane's own objects (managed, but no sync copy of anything): the control plane's Services.
function isOwnObject(metadata: MetadataMaps | undefined): boolean {
  return metadata !== undefined && isManaged(metadata) && reverseLookup(metadata) === undefined;
}
