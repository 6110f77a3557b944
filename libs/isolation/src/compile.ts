import { isValidTenantName, type IsolationProfileSpec } from "@tenantplane/api";
import { BUILT_IN_PROFILE_NAME } from "./constants.js";
import { controlPlaneShare, type ControlPlaneShareInput } from "./control-plane-share.js";
import type { IsolationObject } from "./kube-objects.js";
import type { CompileTarget } from "./metadata.js";
import { compileNetworkPolicies } from "./network-policies.js";
import { podSecurityLabels } from "./pod-security.js";
import { compileLimitRange, compileResourceQuota, quotaNotes } from "./resource-limits.js";

/** What to compile: a tenant, its host namespace and a parsed profile (defaults applied). */
export interface CompileIsolationInput {
  tenant: string;
  hostNamespace: string;
  profile: IsolationProfileSpec;
  /**
   * The TenantCluster's `spec.controlPlane` (defaults applied): what tenantplane runs in the
   * namespace, added to the profile's quota so it never takes from the tenant's.
   */
  controlPlane: ControlPlaneShareInput;
  /** Name of the IsolationProfile, recorded on every object; unset means the built-in profile. */
  profileName?: string;
}

/** The desired isolation state of one host namespace. */
export interface CompiledIsolation {
  /** Pod Security labels to set on the host namespace (the namespace itself is the provisioner's). */
  namespaceLabels: Record<string, string>;
  /** Every object the profile calls for, in a fixed order; anything else carrying the isolation labels is stale. */
  objects: IsolationObject[];
  /** Human-readable warnings about settings that have no effect or will reject pods. */
  notes: string[];
}

/**
 * Compiles an IsolationProfile into host-namespace labels and objects. Pure and
 * deterministic: the same input always yields deeply equal output, so the caller can diff
 * against what exists. Throws only when `tenant` is not a valid tenant name.
 */
export function compileIsolation(input: CompileIsolationInput): CompiledIsolation {
  if (!isValidTenantName(input.tenant)) {
    throw new Error(`cannot compile isolation for ${JSON.stringify(input.tenant)}: not a valid tenant name`);
  }
  const target: CompileTarget = {
    tenant: input.tenant,
    namespace: input.hostNamespace,
    profileName: input.profileName ?? BUILT_IN_PROFILE_NAME,
  };
  const { profile } = input;
  const network = compileNetworkPolicies(target, profile.network);
  const quota = compileResourceQuota(
    target,
    profile.resourceQuota,
    controlPlaneShare(input.controlPlane, profile.limitRange),
  );
  const limits = compileLimitRange(target, profile.limitRange);
  return {
    namespaceLabels: podSecurityLabels(profile.podSecurity),
    objects: [...network.policies, ...(quota ? [quota] : []), ...(limits ? [limits] : [])],
    notes: [...network.notes, ...quotaNotes(profile.resourceQuota, profile.limitRange)],
  };
}
