import type { SyncPolicySpec } from "@tenantplane/api";
import { hostName, hostNamespaceFor, LABEL_KIND, LABEL_TENANT, labelValue, reverseLookup } from "@tenantplane/mapping";
import {
  planKey as planOneKey,
  planSteps,
  privateDeleteNote,
  runSteps,
  type HostRules,
  type PlanMemo,
  type PlannedDecisionWithObject,
  type PlannedTarget,
  type PodEnvironment,
} from "@tenantplane/sync";
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

/** What every plan of one tenant shares: the tenant, its policy and rules, and which listings are trustworthy. */
export interface TenantPlanContext {
  tenant: string;
  policy: SyncPolicySpec;
  /** What the tenant's objects may do to the host (from its IsolationProfile). */
  rules: HostRules;
  /** Keys the content hash, so a copy's hash reveals nothing about a Secret's values. */
  hashKey: string | undefined;
  /**
   * Kinds whose tenant and host listings are both complete and current (a kind outside
   * the policy: its host listing). Deletes are planned only for these, so a failed or
   * partial listing never turns copies into Deletes.
   */
  completeKinds: readonly string[];
  /** The syncer's translation memo: an unchanged cached object is translated once, not per plan. */
  memo?: PlanMemo | undefined;
  /** Where host Pods reach the tenant API and DNS; "unknown" holds Pods back (see the planner). */
  podEnvironment?: PodEnvironment | "unknown" | undefined;
  /**
   * Why a source is held back beyond the tenant's limits (its cached object is a stub), or
   * undefined. A held-back source is planned as a Skip with that reason, and a copy made
   * before is kept (never updated, never deleted): a limit must not turn into an outage.
   */
  heldBack?: ((key: SourceKey) => string | undefined) | undefined;
  /** Names of the tenant's own Nodes (joined to its API, not virtual): a Pod bound to one is never copied. */
  privateNodes?: ReadonlySet<string> | undefined;
}

/** What planning one source needs: the source as the tenant cache holds it and the host objects it touches. */
export interface KeyInput extends TenantPlanContext {
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
 * Plans one tenant source with the planner's own `planKey`, which gives exactly the full
 * pass's answer for that identity (a bound Pod whose host copy is gone is not made again:
 * the planner's rule). A source in a deleted namespace, or with a deletionTimestamp, counts
 * as gone, and its Delete says which.
 */
export function planKey(input: KeyInput): KeyPlan {
  const deleting = isDeleting(input.source);
  const present = input.source !== undefined && !input.namespaceDeleted && !deleting;
  const held = present ? input.heldBack?.(input.key) : undefined;
  const result = planOneKey(
    {
      ...planInput(input),
      tenantObjects: present && held === undefined ? [input.source] : [],
      hostObjects: input.hosts,
    },
    input.key,
  );
  const gone = input.namespaceDeleted ? namespaceReason : deleting ? deletingReason : undefined;
  const planned = {
    decisions: gone === undefined ? result.decisions : result.decisions.map((d) => gone(d, input.tenant, input.rules)),
    inSync: result.inSync,
    ignored: result.ignored,
  };
  return held === undefined ? planned : holdBack(planned, new Map([[keyText(input.key), held]]), input.tenant);
}

/** What a full pass compares. */
export interface PassInput extends TenantPlanContext {
  /** Every tenant object of the policy's kinds. */
  sources: readonly unknown[];
  /** Every sync copy of this tenant in its host namespace, of any synced kind. */
  hosts: readonly unknown[];
  /** Tenant namespaces deleted or terminating: their objects count as gone. */
  deletedNamespaces: ReadonlySet<string>;
}

/** The full pass: the planner over every live source and every copy, Deletes only for complete kinds. */
export function planPass(input: PassInput): KeyPlan {
  return runSteps(planPassSteps(input));
}

/** {@link planPass} as steps, pausing after each object (see the planner's `planSteps`). */
export function* planPassSteps(input: PassInput): Generator<void, KeyPlan, void> {
  const deleting = new Set(input.sources.filter(isDeleting).map(identityOf));
  const live = input.sources.filter((s) => !input.deletedNamespaces.has(namespaceOf(s)) && !isDeleting(s));
  const held = new Map<string, string>();
  const sources = live.filter((s) => {
    const key = keyOfObject(s);
    const reason = input.heldBack?.(key);
    if (reason !== undefined) held.set(keyText(key), reason);
    return reason === undefined;
  });
  const result = yield* planSteps({ ...planInput(input), tenantObjects: sources, hostObjects: input.hosts });
  const decisions = result.decisions.map((d) => {
    if (input.deletedNamespaces.has(d.tenantRef.namespace)) return namespaceReason(d, input.tenant, input.rules);
    if (deleting.has(`${d.kind}/${d.tenantRef.namespace}/${d.tenantRef.name}`))
      return deletingReason(d, input.tenant, input.rules);
    return d;
  });
  const planned = { decisions, inSync: result.inSync, ignored: result.ignored };
  return held.size === 0 ? planned : holdBack(planned, held, input.tenant);
}

/**
 * Turns the plan of sources planned as absent because they are held back (`held`: key text →
 * reason) into one Skip each: the Delete of a copy made before becomes that Skip (the copy is
 * kept), and a source without a copy gets one.
 */
function holdBack(result: KeyPlan, held: ReadonlyMap<string, string>, tenant: string): KeyPlan {
  const skipped = new Set<string>();
  const decisions: PlannedDecisionWithObject[] = [];
  for (const d of result.decisions) {
    const text = keyText({ kind: d.kind, namespace: d.tenantRef.namespace, name: d.tenantRef.name });
    const reason = held.get(text);
    if (reason === undefined) decisions.push(d);
    else if (!skipped.has(text)) {
      skipped.add(text);
      const { object: _object, ...target } = d;
      decisions.push({ ...target, action: "Skip", reason });
    }
  }
  for (const [text, reason] of held) {
    if (skipped.has(text)) continue;
    const [kind = "", namespace = "", name = ""] = text.split("\n");
    const mapped = hostName({ tenant, namespace, name });
    decisions.push({
      tenant,
      kind,
      tenantRef: { namespace, name },
      hostRef: { namespace: hostNamespaceFor(tenant), name: mapped.name },
      hashed: mapped.hashed,
      action: "Skip",
      reason,
    });
  }
  return { decisions, inSync: result.inSync, ignored: result.ignored };
}

function keyText(key: SourceKey): string {
  return `${key.kind}\n${key.namespace}\n${key.name}`;
}

function keyOfObject(obj: unknown): SourceKey {
  const o = obj as ObjectMeta;
  return { kind: o.kind ?? "", namespace: namespaceOf(obj), name: o.metadata?.name ?? "" };
}

function planInput(context: TenantPlanContext) {
  return {
    tenant: context.tenant,
    policy: context.policy,
    completeKinds: context.completeKinds,
    rules: context.rules,
    ...(context.hashKey === undefined ? {} : { hashKey: context.hashKey }),
    ...(context.memo === undefined ? {} : { memo: context.memo }),
    ...(context.podEnvironment === undefined ? {} : { podEnvironment: context.podEnvironment }),
    ...(context.privateNodes === undefined ? {} : { privateNodes: context.privateNodes }),
  };
}

function namespaceReason(d: PlannedDecisionWithObject, tenant: string, rules: HostRules): PlannedDecisionWithObject {
  if (d.action !== "Delete") return d;
  const note = d.kind === "Pod" ? privateDeleteNote(rules) : "";
  return { ...d, reason: `namespace ${d.tenantRef.namespace} deleted in tenant ${tenant}${note}` };
}

function deletingReason(d: PlannedDecisionWithObject, tenant: string, rules: HostRules): PlannedDecisionWithObject {
  if (d.action !== "Delete") return d;
  const note = d.kind === "Pod" ? privateDeleteNote(rules) : "";
  return {
    ...d,
    reason: `source ${d.kind} ${d.tenantRef.namespace}/${d.tenantRef.name} is being deleted in tenant ${tenant}${note}`,
  };
}

// A source with a deletionTimestamp is on its way out (finalizers the tenant has no
// controller for, such as pvc-protection, can hold it there): its copy goes now.
function isDeleting(source: unknown): boolean {
  const meta = (source as { metadata?: { deletionTimestamp?: unknown } } | undefined)?.metadata;
  return meta?.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
}

function identityOf(obj: unknown): string {
  const o = obj as ObjectMeta;
  return `${o.kind ?? ""}/${namespaceOf(obj)}/${o.metadata?.name ?? ""}`;
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

/** The source key a host copy maps back to, or undefined for objects that are not this tenant's copies. */
export function sourceOfCopy(host: unknown, tenant: string): SourceKey | undefined {
  if (!isTenantCopy(host, tenant)) return undefined;
  const source = reverseLookup((host as ObjectMeta).metadata ?? {});
  return source && { kind: source.kind, namespace: source.namespace, name: source.name };
}

function namespaceOf(obj: unknown): string {
  return (obj as ObjectMeta).metadata?.namespace ?? "default";
}
