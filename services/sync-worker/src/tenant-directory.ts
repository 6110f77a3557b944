import {
  CONDITION_CONTROL_PLANE_READY,
  defaultIsolationProfileSpec,
  defaultSyncPolicySpec,
  IsolationProfileSpecSchema,
  SyncPolicySpecSchema,
  TenantClusterSchema,
  type Condition,
  type SyncPolicySpec,
} from "@tenantplane/api";
import type { RawObject } from "@tenantplane/kube";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { compileHostRules, placementOf, withEffectiveMode, withPlacement, type HostRules } from "@tenantplane/sync";

/** What the supervisor should do about one tenant, decided from host state alone. */
export type TenantPlan =
  | { run: false; why: string }
  | {
      run: true;
      secret: { namespace: string; name: string; key: string };
      policy: SyncPolicySpec;
      policyName: string | undefined;
      rules: HostRules;
    }
  | { run: false; why: string; problem: { reason: string; message: string } };

const CONTROL_PLANE_NOT_READY = "control plane not Ready";

/**
 * Whether `tenant` should be synced (by whichever worker owns it) and with what: its
 * TenantCluster exists, is not being deleted, its control plane is Ready, its kubeconfig
 * Secret is known (in the tenant's own host namespace, the only place the worker may read
 * Secrets) and its SyncPolicy exists and parses. A missing or invalid policy is a problem to
 * report, never a reason to delete copies. So is a control plane that turns not Ready while
 * the tenant is `syncing` (whoever noticed first, the provisioner's probe or the worker's
 * watches): Synced says so and nothing is deleted. `hostDefaultClass` is the host's default
 * StorageClass (`defaultStorageClass`), which a tenant claim naming no class gets.
 */
export function planTenant(
  tc: RawObject | undefined,
  policies: (name: string) => RawObject | undefined,
  profiles: (name: string) => RawObject | undefined = () => undefined,
  syncing = false,
  hostDefaultClass?: string | null,
): TenantPlan {
  if (tc === undefined) return { run: false, why: "TenantCluster gone" };
  if (tc.metadata.deletionTimestamp) return { run: false, why: "TenantCluster being deleted" };
  const parsed = TenantClusterSchema.safeParse(tc);
  if (!parsed.success) return { run: false, why: "TenantCluster does not parse" };
  const status = parsed.data.status;
  const ready = status?.conditions?.find((c: Condition) => c.type === CONDITION_CONTROL_PLANE_READY);
  if (ready?.status !== "True") {
    if (!syncing) return { run: false, why: CONTROL_PLANE_NOT_READY };
    return {
      run: false,
      why: CONTROL_PLANE_NOT_READY,
      problem: {
        reason: "TenantAPIUnavailable",
        message:
          "the tenant's control plane is not Ready; host copies are kept and nothing is deleted until it answers",
      },
    };
  }
  const secret = status?.kubeconfigSecretRef;
  if (secret === undefined) return { run: false, why: "no kubeconfigSecretRef yet" };
  const hostNamespace = hostNamespaceFor(tc.metadata.name);
  if (secret.namespace !== hostNamespace) {
    return {
      run: false,
      why: "kubeconfig Secret outside the host namespace",
      problem: {
        reason: "KubeconfigOutsideHostNamespace",
        message: `status.kubeconfigSecretRef names a Secret in namespace ${secret.namespace}: the sync worker reads kubeconfigs only in the tenant's host namespace ${hostNamespace}`,
      },
    };
  }
  const profileName = parsed.data.spec.isolationProfileRef?.name;
  let rules = compileHostRules(defaultIsolationProfileSpec, undefined, hostDefaultClass);
  if (profileName !== undefined) {
    const profile = profiles(profileName);
    const spec = profile === undefined ? undefined : IsolationProfileSpecSchema.safeParse(profile["spec"]);
    // Without its rules nothing may reach the host: the built-in profile could allow more than the named one.
    if (spec === undefined || !spec.success) {
      return {
        run: false,
        why: "IsolationProfile missing or invalid",
        problem: {
          reason: "IsolationProfileUnavailable",
          message: `IsolationProfile ${profileName} ${spec === undefined ? "does not exist" : "is invalid"}: objects are synced under its rules once it ${spec === undefined ? "exists" : "is fixed"}; host copies are kept meanwhile`,
        },
      };
    }
    rules = compileHostRules(spec.data, undefined, hostDefaultClass);
  }
  // Where its Pods run (spec.isolation): a change of mode or dedicated selector restarts the syncer.
  rules = withPlacement(rules, placementOf(parsed.data.spec.isolation));
  // What a host load balancer cannot serve follows the mode in effect (a change restarts the syncer too).
  rules = withEffectiveMode(rules, status?.isolation?.mode);
  const policyName = parsed.data.spec.syncPolicyRef?.name;
  if (policyName === undefined) return { run: true, secret, policy: defaultSyncPolicySpec, policyName, rules };
  const policy = policies(policyName);
  if (policy === undefined) {
    return {
      run: false,
      why: "SyncPolicy missing",
      problem: {
        reason: "SyncPolicyNotFound",
        message: `SyncPolicy ${policyName} does not exist: create it, or point spec.syncPolicyRef.name at an existing policy; host copies are kept meanwhile`,
      },
    };
  }
  const spec = SyncPolicySpecSchema.safeParse(policy["spec"]);
  if (!spec.success) {
    return {
      run: false,
      why: "SyncPolicy invalid",
      problem: {
        reason: "InvalidSyncPolicy",
        message: `SyncPolicy ${policyName} is invalid (${spec.error.issues[0]?.message ?? "bad spec"}); host copies are kept until it is fixed`,
      },
    };
  }
  return { run: true, secret, policy: spec.data, policyName, rules };
}

/**
 * A stable text for what a running syncer was started with, so a change restarts it: the
 * policy's kinds, the kubeconfig, and the host rules (a profile edit, a new host default
 * StorageClass), which a syncer plans every object with.
 */
export function syncerIdentity(
  plan: { policy: SyncPolicySpec; policyName: string | undefined; rules?: HostRules },
  kubeconfigHash: string,
): string {
  const kinds = plan.policy.toHost
    .map((r) => r.kind)
    .sort()
    .join(",");
  const rules = plan.rules === undefined ? "" : `|${JSON.stringify(plan.rules)}`;
  return `${plan.policyName ?? ""}|${kinds}|${kubeconfigHash}${rules}`;
}
