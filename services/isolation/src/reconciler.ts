import type { KubernetesObject } from "@kubernetes/client-node";
import {
  API_VERSION,
  CONDITION_CONTROL_PLANE_READY,
  CONDITION_ISOLATION_APPLIED,
  KIND_ISOLATION_PROFILE,
  KIND_TENANT_CLUSTER,
  REASON_NAME_HELD_BY_FOREIGN_OBJECT,
  ValidationError,
  type Condition,
  type TenantClusterSpec,
} from "@tenantplane/api";
import type { EventRecorder, NamespaceWatches, Objects } from "@tenantplane/kube";
import {
  ISOLATION_KINDS,
  chooseIsolationProfile,
  compileIsolation,
  describeForeign,
  isolationObjectSelector,
  namespaceOwnership,
  objectOwnership,
} from "@tenantplane/isolation";
import { hostNamespaceFor } from "@tenantplane/mapping";
import type { PlannedDecision } from "@tenantplane/messaging";
import { TransientError, type Logger } from "@tenantplane/runtime";
import {
  applyTenantStatus,
  applyTracked,
  createTracked,
  deleteTracked,
  publishRecordedDecision,
  publishPendingDeletes,
  tenantDecider,
  tenantRegarding,
  type ConditionInput,
  parseCachedTenantCluster,
} from "@tenantplane/service";
import { describeIsolationObject, objectKey, staleObjects } from "./prune.js";
import { QUOTA_COUNT_GRACE_MS, quotaUncounted } from "./quota-count.js";

/** What the isolation service needs from the outside world. */
export interface IsolationDeps {
  objects: Objects;
  events: EventRecorder;
  publish: (decision: PlannedDecision) => Promise<void>;
  logger: Logger;
  /** Told when the tenant's namespace is there to act in, and when it is gone or going. */
  namespaceWatches?: NamespaceWatches | undefined;
}

type TenantObject = KubernetesObject & { status?: { conditions?: Condition[] } };

/**
 * How long after its creation a tenant's namespace is expected, not reported missing: longer
 * while the provisioner has not reported on the tenant's current spec at all (in a burst of new
 * tenants it reaches the last ones only after a while, and reporting each of them missing would
 * cost a read, a status write and a provisioner pass per tenant), shorter once it has.
 */
const NAMESPACE_GRACE_MS = { provisionerPending: 60_000, provisionerReported: 10_000 };
/**
 * How soon a pass that found no namespace within the grace looks again. The namespace's watch
 * event wakes a pass, but one that arrives while this pass is still running did not always
 * bring another: a clean-clone CI run waited out the 59 s grace for a namespace the provisioner
 * created the same second. A pass that finds nothing costs a cache read.
 */
const NAMESPACE_RECHECK_MS = 3_000;
/** How soon a pass that found its quota not yet counted looks again (the count's event usually comes first). */
const QUOTA_RECHECK_MS = 1_000;

/**
 * Converges the isolation objects of one tenant's host namespace with its
 * IsolationProfile (the built-in one when none is named, the lockdown profile while
 * the named one is missing or invalid), deleting what the profile no longer
 * produces, and reports IsolationApplied: True only for the profile the tenant
 * asked for. Writes nothing into a namespace that is not this tenant's.
 * Re-reads everything on each call.
 */
export async function reconcileIsolation(tenant: string, deps: IsolationDeps): Promise<void> {
  const raw = await deps.objects.get<TenantObject>(API_VERSION, KIND_TENANT_CLUSTER, tenant);
  const namespace = hostNamespaceFor(tenant);
  // A deleted tenant's objects go with its namespace; nothing to converge, nothing to watch.
  if (!raw || raw.metadata?.deletionTimestamp) {
    deps.namespaceWatches?.unwatchNamespace(namespace);
    return;
  }
  const previous = raw.status?.conditions;
  const generation = raw.metadata?.generation;
  const report = async (condition: Omit<ConditionInput, "type" | "observedGeneration">) => {
    // Nothing is written when the status already says this (raw is the cached TenantCluster).
    await applyTenantStatus(
      deps.objects,
      tenant,
      previous,
      { ...condition, type: CONDITION_ISOLATION_APPLIED, observedGeneration: generation },
      {},
      raw,
    );
    const before = previous?.find((c) => c.type === CONDITION_ISOLATION_APPLIED)?.status;
    // A lifecycle milestone, once per transition: the namespace is isolated as the profile says.
    if (condition.status === "True" && before !== "True") {
      await deps.events.record({
        regarding: tenantRegarding(tenant, raw.metadata?.uid),
        type: "Normal",
        reason: "IsolationApplied",
        message: condition.message,
      });
    }
  };
  const warn = async (reason: string, message: string) => {
    const known = previous?.find((c) => c.type === CONDITION_ISOLATION_APPLIED);
    await report({ status: "False", reason, message });
    // Said once per change of what is wrong, not on every pass.
    if (known?.status === "False" && known.reason === reason && known.message === message.slice(0, 32_768)) return;
    await deps.events.record({
      regarding: tenantRegarding(tenant, raw.metadata?.uid),
      type: "Warning",
      reason,
      message,
    });
  };

  let spec: TenantClusterSpec;
  try {
    spec = parseCachedTenantCluster(raw).spec;
  } catch (err) {
    if (err instanceof ValidationError) return warn("InvalidSpec", err.message);
    throw err;
  }
  const refName = spec.isolationProfileRef?.name;
  // A missing or invalid profile never leaves the namespace less isolated than the defaults:
  // the lockdown profile stands in until the named one exists and parses.
  const found = refName ? await deps.objects.get(API_VERSION, KIND_ISOLATION_PROFILE, refName) : undefined;
  const choice = chooseIsolationProfile(refName, found);

  // The cache holds tenantplane's namespaces only: one it does not know is read fresh, so a
  // foreign namespace of that name is reported as such. A tenant created moments ago simply has
  // no namespace yet: the provisioner's create wakes the next pass through the namespace watch,
  // so until then there is nothing to read or report (a burst of new tenants would otherwise
  // cost a read and a status write each), and the message comes back once the grace is over.
  const cached = await deps.objects.get("v1", "Namespace", namespace);
  const age = Date.now() - new Date(raw.metadata?.creationTimestamp ?? 0).getTime();
  const provisioned = previous?.some(
    (c) => c.type === CONDITION_CONTROL_PLANE_READY && c.observedGeneration === generation,
  );
  const grace = provisioned ? NAMESPACE_GRACE_MS.provisionerReported : NAMESPACE_GRACE_MS.provisionerPending;
  if (!cached && age >= 0 && age < grace) {
    throw new TransientError(`host namespace ${namespace} not created yet`, {
      code: "WaitingForNamespace",
      retryAfterMs: Math.min(grace - age, NAMESPACE_RECHECK_MS),
    });
  }
  const ns = cached ?? (await deps.objects.get("v1", "Namespace", namespace, undefined, { fresh: true }));
  if (!ns) {
    deps.namespaceWatches?.unwatchNamespace(namespace);
    // Not redelivered: the namespace's creation is a watch event that wakes the next pass.
    await report({
      status: "False",
      reason: "WaitingForNamespace",
      message: `host namespace ${namespace} does not exist yet`,
    });
    return;
  }

  // A terminating namespace takes its isolation objects with it.
  if (ns.metadata?.deletionTimestamp) {
    deps.namespaceWatches?.unwatchNamespace(namespace);
    return;
  }

  // Nothing is written into a namespace tenantplane did not create for this TenantCluster; the
  // provisioner reports the collision with a Warning.
  const ownership = namespaceOwnership(ns, tenant, raw.metadata?.uid);
  if (ownership.owner === "foreign") {
    await report({
      status: "False",
      reason: REASON_NAME_HELD_BY_FOREIGN_OBJECT,
      message: describeForeign({ kind: "Namespace", name: namespace }, ownership.why),
    });
    return;
  }

  // Ours: the provisioner binds this service's role right after creating the namespace, so the
  // caches there may start (a refusal for the moment before the binding is retried).
  deps.namespaceWatches?.watchNamespace(namespace);

  const compiled = compileIsolation({
    tenant,
    hostNamespace: namespace,
    profile: choice.profile,
    // The quota is raised by what the control plane this spec describes takes (own accounting,
    // see controlPlaneShare): a scope cannot exempt its volume and Services, and exempting its
    // pods would take a PriorityClass that tenant pods must then be kept from using.
    controlPlane: spec.controlPlane,
    ...(choice.profileName ? { profileName: choice.profileName } : {}),
  });
  const source = choice.problem
    ? "the lockdown profile"
    : refName
      ? `IsolationProfile ${refName}`
      : "the built-in isolation profile";
  const decide = tenantDecider(tenant, deps.publish);
  // Deletes of a pass that died before publishing them are recorded on the namespace.
  await publishPendingDeletes(deps.objects, ns, decide);

  // Only the Pod Security labels, under this service's field manager: the
  // provisioner owns the namespace's other labels. Pinned to the version read
  // above, so a namespace deleted meanwhile by a teardown is never recreated here.
  // Every write below is tracked: it carries its Decision, and a record this process did not
  // publish (a crash came between write and publish) goes out first.
  // The provisioner creates the namespace with the profile's labels, and the profile always
  // sets all of them: a namespace that already says them needs no write (and no dry run) until
  // the profile or a person changes one.
  await publishRecordedDecision(deps.objects, ns, decide);
  if (!saysLabels(ns, compiled.namespaceLabels)) {
    await applyTracked(
      deps.objects,
      { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: compiled.namespaceLabels } },
      { decide, reason: `Pod Security labels from ${source}`, ifResourceVersion: ns.metadata?.resourceVersion },
    );
  }

  const wanted = new Set<string>();
  const collisions: string[] = [];
  for (const object of compiled.objects) {
    wanted.add(objectKey(object.kind, object.metadata.name));
    const reason = `${describeIsolationObject(object.kind, object.metadata.name)} from ${source}`;
    let held = await deps.objects.get(object.apiVersion, object.kind, object.metadata.name, namespace);
    // Absent from the cache (which holds only tenantplane's objects): create, which never
    // overwrites; a name someone else holds answers 409, and a fresh read says whose it is.
    if (!held && (await createTracked(deps.objects, object as KubernetesObject, { decide, reason }))) continue;
    held ??= await deps.objects.get(object.apiVersion, object.kind, object.metadata.name, namespace, { fresh: true });
    // An object of that name that tenantplane did not make for this tenant is left alone.
    const ownership = held ? objectOwnership(held, tenant) : undefined;
    if (ownership?.owner === "foreign") {
      collisions.push(describeForeign({ kind: object.kind, name: object.metadata.name, namespace }, ownership.why));
      continue;
    }
    await applyTracked(deps.objects, object as KubernetesObject, { decide, reason });
  }
  let removed = 0;
  for (const { apiVersion, kind } of ISOLATION_KINDS) {
    const existing = await deps.objects.list(apiVersion, kind, {
      namespace,
      labelSelector: isolationObjectSelector(tenant),
    });
    for (const name of staleObjects(kind, existing, wanted)) {
      const deleted = await deleteTracked(
        deps.objects,
        { apiVersion, kind, name, namespace },
        { decide, reason: `${source} no longer produces ${kind} ${name}`, anchor: ns },
      );
      if (deleted) removed++;
    }
  }

  if (collisions.length > 0) return warn(REASON_NAME_HELD_BY_FOREIGN_OBJECT, collisions.join("; "));
  if (choice.problem) return warn(choice.problem.reason, choice.problem.message);
  for (const object of compiled.objects.filter((o) => o.kind === "ResourceQuota")) {
    const quota = await deps.objects.get("v1", "ResourceQuota", object.metadata.name, namespace);
    if (!quotaUncounted(quota)) continue;
    const what = `ResourceQuota ${object.metadata.name} in ${namespace}`;
    const age = Date.now() - new Date(quota?.metadata?.creationTimestamp ?? Date.now()).getTime();
    // The controller's count is a status update of the quota, which wakes the next pass.
    if (age < QUOTA_COUNT_GRACE_MS) {
      throw new TransientError(`${what} not counted by the host's quota controller yet`, {
        code: "WaitingForQuotaCount",
        retryAfterMs: QUOTA_RECHECK_MS,
      });
    }
    return warn(
      "QuotaNotCounted",
      `${what} has not been counted by the host's quota controller (status.hard is empty); until it is, ` +
        "the API server enforces none of its limits, so no control plane is started in the namespace. " +
        "Check that the host's kube-controller-manager runs the resourcequota controller.",
    );
  }
  const notes = compiled.notes.length > 0 ? ` Notes: ${compiled.notes.join(" ")}` : "";
  await report({
    status: "True",
    reason: "Applied",
    message: `${source} applied: ${compiled.objects.length} objects and Pod Security labels in ${namespace}${removed ? `, ${removed} stale removed` : ""}.${notes}`,
  });
}

function saysLabels(obj: KubernetesObject, labels: Record<string, string>): boolean {
  const current = obj.metadata?.labels ?? {};
  return Object.entries(labels).every(([key, value]) => current[key] === value);
}
