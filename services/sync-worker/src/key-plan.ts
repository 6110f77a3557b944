import type { SyncPolicySpec } from "@tenantplane/api";
import { hostNamespaceFor, LABEL_KIND, LABEL_TENANT, labelValue, reverseLookup } from "@tenantplane/mapping";
import { plan, type PlannedDecisionWithObject, type PlannedTarget } from "@tenantplane/sync";
import type { SourceKey } from "./source-key.js";

/** The metadata the sync worker reads from a host or tenant object. */
export interface ObjectMeta {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  kind?: string;
}

/** What planning one source needs: the source as the tenant cache holds it and the host objects it touches. */
export interface KeyInput {
  tenant: string;
  policy: SyncPolicySpec;
  /** Name of the SyncPolicy, or undefined for the built-in default; reasons cite it. */
  policyName: string | undefined;
  key: SourceKey;
  /** The tenant object, when the tenant cache has it. */
  source: unknown;
  /** The source's tenant namespace is deleted or terminating. */
  namespaceDeleted: boolean;
  /** Host objects at the source's target name, and host copies whose reverse mapping names the source. */
  hosts: readonly unknown[];
}

/** What planning found for one source or one pass. */
export interface KeyPlan {
  /** Create, Update, Delete and Skip, with the desired object for Create and Update. */
  decisions: PlannedDecisionWithObject[];
  /** Sources whose host copy already matches. */
  inSync: PlannedTarget[];
  /** Sources never synced by rule (kind outside the policy, system namespaces): nothing to publish. */
  ignored: PlannedDecisionWithObject[];
}

/**
 * Plans one tenant source with the same planner a full pass uses, given only the host
 * objects that can concern it. Host copies of another source are never handed to the
 * planner when the source is absent, so they cannot become Deletes here.
 */
export function planKey(input: KeyInput): KeyPlan {
  const { tenant, key } = input;
  const kinds = policyKinds(input.policy);
  const ours = input.hosts.filter((h) => isCopyOf(h, tenant, key));
  if (!kinds.has(key.kind)) {
    return { decisions: ours.map((h) => policyDelete(tenant, h, key.kind, input.policyName)), inSync: [], ignored: [] };
  }
  const deleting = isDeleting(input.source);
  const present = input.source !== undefined && !input.namespaceDeleted && !deleting;
  const result = plan({
    tenant,
    policy: input.policy,
    tenantObjects: present ? [input.source] : [],
    hostObjects: present ? input.hosts : ours,
  });
  return {
    decisions: result.decisions.map((d) =>
      input.namespaceDeleted ? namespaceReason(d, tenant) : deleting ? deletingReason(d, tenant) : d,
    ),
    inSync: result.inSync,
    ignored: result.ignored,
  };
}

/** What a full pass compares. */
export interface PassInput {
  tenant: string;
  policy: SyncPolicySpec;
  policyName: string | undefined;
  /** Every tenant object of the policy's kinds. */
  sources: readonly unknown[];
  /** Every sync copy of this tenant in its host namespace, of any synced kind. */
  hosts: readonly unknown[];
  /** Tenant namespaces deleted or terminating: their objects count as gone. */
  deletedNamespaces: ReadonlySet<string>;
  /**
   * Kinds whose tenant and host listings are both complete and current. Deletes are
   * planned only for these: a failed or partial listing never turns copies into Deletes.
   */
  completeKinds: ReadonlySet<string>;
}

/**
 * The full pass: the planner over every source and copy, plus Deletes for copies of kinds
 * that left the SyncPolicy, each Delete only for kinds listed in `completeKinds`.
 */
export function planPass(input: PassInput): KeyPlan {
  const { tenant } = input;
  const kinds = policyKinds(input.policy);
  const deleting = new Set(
    input.sources.filter(isDeleting).map((s) => identityOf(kindOf(s), namespaceOf(s), nameOf(s))),
  );
  const sources = input.sources.filter((s) => !input.deletedNamespaces.has(namespaceOf(s)) && !isDeleting(s));
  const result = plan({
    tenant,
    policy: input.policy,
    tenantObjects: sources,
    hostObjects: input.hosts.filter((h) => kinds.has(kindOf(h))),
  });
  const decisions = result.decisions
    .filter((d) => d.action !== "Delete" || input.completeKinds.has(d.kind))
    .map((d) =>
      input.deletedNamespaces.has(d.tenantRef.namespace)
        ? namespaceReason(d, tenant)
        : deleting.has(identityOf(d.kind, d.tenantRef.namespace, d.tenantRef.name))
          ? deletingReason(d, tenant)
          : d,
    );
  for (const host of input.hosts) {
    const kind = kindOf(host);
    if (kinds.has(kind) || !input.completeKinds.has(kind) || !isTenantCopy(host, tenant)) continue;
    decisions.push(policyDelete(tenant, host, kind, input.policyName));
  }
  return { decisions, inSync: result.inSync, ignored: result.ignored };
}

function policyKinds(policy: SyncPolicySpec): Set<string> {
  return new Set(policy.toHost.map((rule) => rule.kind));
}

function namespaceReason(d: PlannedDecisionWithObject, tenant: string): PlannedDecisionWithObject {
  if (d.action !== "Delete") return d;
  return { ...d, reason: `namespace ${d.tenantRef.namespace} deleted in tenant ${tenant}` };
}

function deletingReason(d: PlannedDecisionWithObject, tenant: string): PlannedDecisionWithObject {
  if (d.action !== "Delete") return d;
  return {
    ...d,
    reason: `source ${d.kind} ${d.tenantRef.namespace}/${d.tenantRef.name} is being deleted in tenant ${tenant}`,
  };
}

// A source with a deletionTimestamp is on its way out (finalizers the tenant has no
// controller for, such as pvc-protection, can hold it there): its copy goes now.
function isDeleting(source: unknown): boolean {
  const meta = (source as { metadata?: { deletionTimestamp?: unknown } } | undefined)?.metadata;
  return meta?.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
}

function identityOf(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

function nameOf(obj: unknown): string {
  return (obj as ObjectMeta).metadata?.name ?? "";
}

function policyDelete(tenant: string, host: unknown, kind: string, policyName: string | undefined) {
  const meta = (host as ObjectMeta).metadata ?? {};
  const source = reverseLookup(meta);
  const policy = policyName === undefined ? "the default SyncPolicy" : `SyncPolicy ${policyName}`;
  const decision: PlannedDecisionWithObject = {
    tenant,
    action: "Delete",
    kind,
    tenantRef: { namespace: source?.namespace ?? "", name: source?.name ?? meta.name ?? "(unknown)" },
    hostRef: { namespace: hostNamespaceFor(tenant), name: meta.name ?? "(unknown)" },
    hashed: false,
    reason: `kind ${kind} removed from ${policy} toHost`,
  };
  return decision;
}

/** A sync copy of this tenant (managed-by, tenant and kind labels), whatever its source. */
export function isTenantCopy(host: unknown, tenant: string): boolean {
  const labels = (host as ObjectMeta).metadata?.labels ?? {};
  return (
    reverseLookup({ labels, annotations: (host as ObjectMeta).metadata?.annotations }) !== undefined &&
    labels[LABEL_TENANT] === labelValue(tenant) &&
    labels[LABEL_KIND] !== undefined
  );
}

/** A sync copy of this tenant whose reverse mapping names exactly `key`. */
export function isCopyOf(host: unknown, tenant: string, key: SourceKey): boolean {
  if (!isTenantCopy(host, tenant)) return false;
  const source = reverseLookup((host as ObjectMeta).metadata ?? {});
  return (
    source !== undefined && source.kind === key.kind && source.namespace === key.namespace && source.name === key.name
  );
}

/** The source key a host copy maps back to, or undefined for objects that are not this tenant's copies. */
export function sourceOfCopy(host: unknown, tenant: string): SourceKey | undefined {
  if (!isTenantCopy(host, tenant)) return undefined;
  const source = reverseLookup((host as ObjectMeta).metadata ?? {});
  return source && { kind: source.kind, namespace: source.namespace, name: source.name };
}

function kindOf(obj: unknown): string {
  const o = obj as ObjectMeta;
  return o.kind ?? o.metadata?.labels?.[LABEL_KIND] ?? "";
}

function namespaceOf(obj: unknown): string {
  return (obj as ObjectMeta).metadata?.namespace ?? "default";
}
