// The kubectl commands an operator runs to set nodes aside for tenants, derived from an
// IsolationProfile's workload placement, so the demo's nodes and the example profile agree.

/** The placement part of an IsolationProfile's `spec.workloads`. */
export interface WorkloadPlacement {
  nodeSelector?: Record<string, string>;
  tolerations?: { key?: string; operator?: string; value?: string; effect?: string }[];
}

/**
 * `kubectl` arguments that make `node` one the profile's tenant Pods may run on: a label per
 * enforced node-selector entry, and a taint per toleration the profile adds (so only Pods
 * that tolerate it, the tenants', land there). Tolerations without a key or effect match
 * any taint and need none.
 */
export function tenantNodeCommands(node: string, placement: WorkloadPlacement): string[][] {
  const commands: string[][] = [];
  const labels = Object.entries(placement.nodeSelector ?? {}).map(([key, value]) => `${key}=${value}`);
  if (labels.length > 0) commands.push(["label", "node", node, ...labels]);
  const taints = (placement.tolerations ?? [])
    .filter((t) => t.key !== undefined && t.key !== "" && t.effect !== undefined && t.effect !== "")
    .map((t) =>
      t.operator === "Exists" || t.value === undefined ? `${t.key}:${t.effect}` : `${t.key}=${t.value}:${t.effect}`,
    );
  if (taints.length > 0) commands.push(["taint", "node", node, ...taints]);
  return commands;
}
