import type { KubernetesObject } from "@kubernetes/client-node";
import { describeForeign, objectOwnership } from "@tenantplane/isolation";
import type { Objects } from "@tenantplane/kube";
import { LABEL_MANAGED_BY, MANAGED_BY, hostNamespaceFor } from "@tenantplane/mapping";
import { TransientError } from "@tenantplane/runtime";
import {
  accessDenialOf,
  applyTracked,
  createTracked,
  deleteTracked,
  publishRecordedDecision,
  publishPendingDeletes,
  type Decide,
} from "@tenantplane/service";
import { tenantLabels } from "./control-plane.js";

const RBAC_GROUP = "rbac.authorization.k8s.io";
const MANAGED = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;
/** The API version of the RoleBindings the provisioner writes. */
export const RBAC_VERSION = `${RBAC_GROUP}/v1`;

/**
 * One fixed ClusterRole that a service's ServiceAccount is bound to inside every tenant
 * namespace: what that service may do there, and nowhere else.
 */
export interface TenantRoleGrant {
  clusterRole: string;
  serviceAccount: { namespace: string; name: string };
}

interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

/** A RoleBinding as the API server stores it (only the fields the provisioner judges). */
export type RoleBinding = KubernetesObject & {
  roleRef?: { apiGroup?: string; kind?: string; name?: string };
  subjects?: Subject[];
};

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Parses TENANT_ROLE_BINDINGS: comma-separated `<clusterRole>=<namespace>/<serviceAccount>`
 * entries, each ClusterRole at most once (it names the RoleBinding too). Empty means none.
 * Returns the grants, or a message naming the first bad entry.
 */
export function parseTenantRoleGrants(text: string): TenantRoleGrant[] | string {
  const grants: TenantRoleGrant[] = [];
  const entries = text
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  for (const entry of entries) {
    const match = /^([^=/\s]+)=([^=/\s]+)\/([^=/\s]+)$/.exec(entry);
    const [, clusterRole = "", namespace = "", name = ""] = match ?? [];
    if (!match) return `entry "${entry}" is not <clusterRole>=<namespace>/<serviceAccount>`;
    if (clusterRole.length > 253 || !NAME.test(clusterRole))
      return `entry "${entry}": ${clusterRole} is not a valid ClusterRole name`;
    if (namespace.length > 63 || !LABEL.test(namespace))
      return `entry "${entry}": ${namespace} is not a valid namespace name`;
    if (name.length > 253 || !NAME.test(name)) return `entry "${entry}": ${name} is not a valid ServiceAccount name`;
    if (grants.some((g) => g.clusterRole === clusterRole))
      return `ClusterRole ${clusterRole} is named twice; bind each ClusterRole to one ServiceAccount`;
    grants.push({ clusterRole, serviceAccount: { namespace, name } });
  }
  return grants;
}

/**
 * The RoleBinding in `tenant`'s host namespace that binds `grant`'s ServiceAccount to its
 * ClusterRole; named after the ClusterRole and labelled as the tenant's like every object the
 * provisioner writes, so the namespace's deletion removes it and nothing else claims it.
 */
export function tenantRoleBinding(tenant: string, grant: TenantRoleGrant): RoleBinding {
  return {
    apiVersion: RBAC_VERSION,
    kind: "RoleBinding",
    metadata: { name: grant.clusterRole, namespace: hostNamespaceFor(tenant), labels: tenantLabels(tenant) },
    roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: grant.clusterRole },
    subjects: [{ kind: "ServiceAccount", ...grant.serviceAccount }],
  };
}

/** One step towards the desired RoleBindings of a tenant namespace. */
export type RoleBindingStep =
  | { do: "create"; desired: RoleBinding }
  /** Ours, but bound to another role: roleRef cannot change, so it is deleted and created again. */
  | { do: "replace"; existing: RoleBinding; desired: RoleBinding }
  /** Ours, with other subjects: an update. */
  | { do: "update"; existing: RoleBinding; desired: RoleBinding }
  /** Ours and still as desired: only a Decision left on it by a crash may need publishing. */
  | { do: "keep"; existing: RoleBinding }
  /** Ours, but no configured grant names it any more. */
  | { do: "delete"; existing: RoleBinding }
  /** The name is held by a RoleBinding tenantplane did not create for this tenant. */
  | { do: "halt"; message: string };

/**
 * What to do so that the tenant namespace holds exactly one RoleBinding per grant. `existing`
 * is every RoleBinding labelled as tenantplane's in the namespace (another tenant's among them),
 * or undefined when they could not be listed (the provisioner's own binding is not there yet):
 * then every grant is created, an existing one being a conflict that the next pass, able to
 * list, judges. A binding of a granted name without tenantplane's label is not listed: its
 * create is refused and judged then.
 */
export function planRoleBindings(
  tenant: string,
  grants: readonly TenantRoleGrant[],
  existing: readonly RoleBinding[] | undefined,
): RoleBindingStep[] {
  const desired = grants.map((g) => tenantRoleBinding(tenant, g));
  if (existing === undefined) return desired.map((d) => ({ do: "create", desired: d }));
  const byName = new Map(existing.map((rb) => [rb.metadata?.name ?? "", rb]));
  const steps: RoleBindingStep[] = [];
  for (const want of desired) {
    const name = want.metadata!.name!;
    const have = byName.get(name);
    if (!have) {
      steps.push({ do: "create", desired: want });
      continue;
    }
    const ownership = objectOwnership(have, tenant);
    if (ownership.owner === "foreign") {
      const ref = { kind: "RoleBinding", name, namespace: want.metadata!.namespace };
      return [{ do: "halt", message: describeForeign(ref, ownership.why) }];
    }
    if (!sameRoleRef(have, want)) steps.push({ do: "replace", existing: have, desired: want });
    else if (!sameSubjects(have.subjects, want.subjects)) steps.push({ do: "update", existing: have, desired: want });
    else steps.push({ do: "keep", existing: have });
  }
  const wanted = new Set(desired.map((d) => d.metadata!.name!));
  for (const rb of existing) {
    if (wanted.has(rb.metadata?.name ?? "") || objectOwnership(rb, tenant).owner !== "ours") continue;
    steps.push({ do: "delete", existing: rb });
  }
  return steps;
}

/** What ensureRoleBindings works with. */
export interface RoleBindingDeps {
  objects: Objects;
  decide: Decide;
  tenant: string;
  /** The TenantCluster as read: the anchor a pending Delete Decision waits on. */
  tenantCluster: KubernetesObject;
  grants: readonly TenantRoleGrant[];
}

/**
 * Converges the RoleBindings of `tenant`'s host namespace with the configured grants, each
 * write tracked with its Decision like every other object the provisioner writes. Nothing at
 * all without grants (services with cluster-wide rights need none). Returns a message when a
 * RoleBinding of a configured name is foreign (the caller halts with it), else undefined.
 * A conflict (someone else created or changed a binding meanwhile) is a TransientError.
 */
export async function ensureRoleBindings(deps: RoleBindingDeps): Promise<string | undefined> {
  const { objects, decide, tenant, grants } = deps;
  if (grants.length === 0) return undefined;
  const namespace = hostNamespaceFor(tenant);
  // A Delete recorded by a pass that died before publishing it goes out first.
  await publishPendingDeletes(objects, deps.tenantCluster, decide);
  let existing: RoleBinding[] | undefined;
  try {
    // tenantplane's own, as the provisioner's cache holds them: a steady state costs no request.
    existing = await objects.list<RoleBinding>(RBAC_VERSION, "RoleBinding", { namespace, labelSelector: MANAGED });
  } catch (err) {
    // Reading needs the provisioner's own binding in the namespace; creating does not.
    if (accessDenialOf(err)?.namespace !== namespace) throw err;
  }
  for (const step of planRoleBindings(tenant, grants, existing)) {
    switch (step.do) {
      case "halt":
        return step.message;
      case "keep":
        await publishRecordedDecision(objects, step.existing, decide);
        break;
      case "create": {
        const held = await create(deps, step.desired, existing !== undefined);
        if (held !== undefined) return held;
        break;
      }
      case "update":
        await publishRecordedDecision(objects, step.existing, decide);
        await applyTracked(objects, step.desired, {
          decide,
          reason: `${grantText(step.desired)}: subjects were ${subjectsText(step.existing.subjects)}`,
          ifResourceVersion: step.existing.metadata?.resourceVersion,
        });
        break;
      case "replace": {
        await remove(deps, step.existing, `bound to ${roleText(step.existing)}, not ${roleText(step.desired)}`);
        const held = await create(deps, step.desired, true);
        if (held !== undefined) return held;
        break;
      }
      case "delete":
        await remove(deps, step.existing, `${roleText(step.existing)} is no longer bound in tenant namespaces`);
        break;
    }
  }
  return undefined;
}

// Creates `desired`; returns a message when its name is held by a binding that is not ours.
async function create(deps: RoleBindingDeps, desired: RoleBinding, listed: boolean): Promise<string | undefined> {
  const created = await createTracked(deps.objects, desired, { decide: deps.decide, reason: grantText(desired) });
  // Unlisted, a conflict is a binding created by an earlier pass: the next pass can read it.
  if (created || !listed) return undefined;
  // The list held tenantplane's bindings only: a fresh read says whose this one is.
  const meta = desired.metadata!;
  const held = await deps.objects.get<RoleBinding>(RBAC_VERSION, "RoleBinding", meta.name!, meta.namespace, {
    fresh: true,
  });
  const ownership = held ? objectOwnership(held, deps.tenant) : undefined;
  if (ownership?.owner === "foreign")
    return describeForeign({ kind: "RoleBinding", name: meta.name!, namespace: meta.namespace }, ownership.why);
  throw new TransientError(`RoleBinding ${meta.name} appeared while being created; looking again`, {
    code: "Conflict",
    retryAfterMs: 500,
  });
}

async function remove(deps: RoleBindingDeps, existing: RoleBinding, why: string): Promise<void> {
  const meta = existing.metadata!;
  await deleteTracked(
    deps.objects,
    { apiVersion: RBAC_VERSION, kind: "RoleBinding", name: meta.name!, namespace: meta.namespace },
    { decide: deps.decide, reason: why, anchor: deps.tenantCluster, ifResourceVersion: meta.resourceVersion },
  );
}

function grantText(rb: RoleBinding): string {
  return `lets ${subjectsText(rb.subjects)} act in ${rb.metadata?.namespace} as ${roleText(rb)} allows`;
}

function roleText(rb: RoleBinding): string {
  return `${rb.roleRef?.kind ?? "role"} ${rb.roleRef?.name ?? "?"}`;
}

function subjectsText(subjects: Subject[] | undefined): string {
  const list = (subjects ?? []).map((s) => `${s.kind} ${s.namespace ? `${s.namespace}/` : ""}${s.name}`);
  return list.length > 0 ? list.join(", ") : "nobody";
}

function sameRoleRef(a: RoleBinding, b: RoleBinding): boolean {
  return a.roleRef?.kind === b.roleRef?.kind && a.roleRef?.name === b.roleRef?.name;
}

function sameSubjects(a: Subject[] | undefined, b: Subject[] | undefined): boolean {
  const key = (s: Subject) => `${s.kind}/${s.namespace ?? ""}/${s.name}`;
  const left = (a ?? []).map(key).sort();
  const right = (b ?? []).map(key).sort();
  return left.length === right.length && left.every((k, i) => k === right[i]);
}
