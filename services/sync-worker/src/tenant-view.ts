import type { Condition, SyncPolicySpec } from "@tenantplane/api";
import type { RawObject } from "@tenantplane/kube";
import { placementText, type HostRules, type Placement } from "@tenantplane/sync";
import { ANNOTATION_RELEASE_QUARANTINE } from "./quarantine.js";
import { syncerIdentity } from "./tenant-directory.js";

/**
 * A TenantCluster without what the sync worker writes itself (status.sync, the Synced
 * condition, and the migration driver's status.isolation), as text: when only those change,
 * nothing a syncer is built from changed, so the supervisor neither reconciles nor re-reads
 * the kubeconfig Secret. status.isolation.dedicatedNodes (the isolation service's) goes too:
 * a syncer places Pods by spec.isolation, never by the nodes reserved.
 */
export function othersView(tc: RawObject | undefined): string {
  if (tc === undefined) return "";
  const status = (tc["status"] ?? {}) as { sync?: unknown; conditions?: Condition[]; isolation?: unknown };
  const { sync: _sync, isolation: _isolation, conditions, ...rest } = status;
  return JSON.stringify({
    generation: tc.metadata["generation"],
    // An operator releasing a quarantine changes only this annotation.
    release: tc.metadata.annotations?.[ANNOTATION_RELEASE_QUARANTINE],
    spec: tc["spec"],
    status: rest,
    conditions: (conditions ?? []).filter((c) => c.type !== "Synced"),
  });
}

/**
 * Why a running syncer, started as `previous` (its {@link syncerIdentity} and kubeconfig
 * hash), must restart for `plan` and `kubeconfigHash`: each part that changed, named (the
 * isolation placement with its old and new value, the kubeconfig, the SyncPolicy, the other
 * host rules), for the "tenant sync stopped" log line.
 */
export function restartReason(
  previous: { identity: string; kubeconfigHash: string },
  plan: { policy: SyncPolicySpec; policyName: string | undefined; rules: HostRules },
  kubeconfigHash: string,
): string {
  const before = identityParts(previous.identity);
  const after = identityParts(syncerIdentity(plan, kubeconfigHash));
  const changed: string[] = [];
  const placementBefore = before.rules?.placement;
  const placementAfter = after.rules?.placement;
  if (describePlacement(placementBefore) !== describePlacement(placementAfter)) {
    changed.push(
      `isolation mode/selector changed (${describePlacement(placementBefore)} → ${describePlacement(placementAfter)})`,
    );
  }
  if (previous.kubeconfigHash !== kubeconfigHash) changed.push("kubeconfig changed");
  if (before.policy !== after.policy) changed.push("SyncPolicy changed");
  if (rulesText(before.rules) !== rulesText(after.rules)) {
    changed.push("host rules changed (IsolationProfile or the host's default StorageClass)");
  }
  return changed.length === 0 ? "syncer identity changed" : changed.join("; ");
}

/** The parts of a {@link syncerIdentity}: `<policy name>|<kinds>|<kubeconfig hash>[|<rules JSON>]`. */
function identityParts(identity: string): { policy: string; rules: HostRules | undefined } {
  const [policyName = "", kinds = "", _hash = "", ...rest] = identity.split("|");
  const json = rest.join("|");
  let rules: HostRules | undefined;
  try {
    rules = json === "" ? undefined : (JSON.parse(json) as HostRules);
  } catch {
    rules = undefined;
  }
  return { policy: `${policyName}|${kinds}`, rules };
}

function describePlacement(placement: Placement | undefined): string {
  return placement === undefined ? "Shared" : (placementText(placement) ?? "Shared");
}

/** The rules less the placement, as text. */
function rulesText(rules: HostRules | undefined): string {
  if (rules === undefined) return "";
  const { placement: _placement, ...rest } = rules;
  return JSON.stringify(rest);
}
