import { createHash } from "node:crypto";
import type { KubernetesObject, V1ManagedFieldsEntry } from "@kubernetes/client-node";
import type { Objects } from "@tenantplane/kube";
import type { DecisionAction, PlannedDecision } from "@tenantplane/messaging";
import { httpStatusOf } from "@tenantplane/runtime";
import { appliedHashAnnotation, appliedUpToDate, withAppliedHash } from "./applied-hash.js";
import { faults } from "./faults.js";
import { ownedFieldsChanged } from "./owned-fields.js";

/**
 * The prefix of the annotation a host write carries while its Decision is not published yet
 * (one key per service, see pendingDecisionAnnotation):
 * written in the same apply as the change, removed after the publish succeeded.
 * Whoever finds it (a redelivered or later reconcile, possibly in another replica)
 * publishes it first, with the id it carries, so neither an outage nor a crash
 * between write and publish loses the Decision and no duplicate survives dedupe.
 */
export const PENDING_DECISION_ANNOTATION = "tenantplane.io/pending-decision";

/**
 * The annotation a field manager records its pending Decision in: one key per service
 * (`tenantplane.io/pending-decision.isolation`), so two services writing one object (the
 * host namespace) never overwrite each other's record.
 */
export function pendingDecisionAnnotation(fieldManager: string): string {
  return `${PENDING_DECISION_ANNOTATION}.${fieldManager.replace(/^tenantplane-/, "")}`;
}

// Bookkeeping annotations: neither is a change worth a Decision.
const bookkeepingPaths = (fieldManager: string) => [
  `metadata.annotations.${pendingDecisionAnnotation(fieldManager)}`,
  `metadata.annotations.${appliedHashAnnotation(fieldManager)}`,
];

/** A Decision recorded on its host object, as the pending-decision annotation holds it. */
export interface RecordedDecision {
  id: string;
  time: string;
  action: DecisionAction;
  reason: string;
  /**
   * The field manager (service) that made the write. Objects two services write (the host
   * namespace) may carry another service's pending Decision: only its own service publishes
   * it, so a Decision is never published under the wrong service's name.
   */
  manager?: string;
}

/**
 * What a write by `fieldManager` did: Create when nothing was there, Update when a
 * field that manager owns (or owned) now holds another value, nothing otherwise.
 * Judged by the fields it sent, never by resourceVersion, so a concurrent writer
 * bumping the version (or changing fields of its own) is not reported as ours.
 * Without `fieldManager`, every `tenantplane-*` manager counts.
 */
export function changeOf(
  before: KubernetesObject | undefined,
  after: KubernetesObject,
  fieldManager?: string,
): DecisionAction | undefined {
  if (!before) return "Create";
  const managers = fieldManager ? [fieldManager] : tenantplaneManagers(before, after);
  return managers.some((m) => ownedFieldsChanged(before, after, m, bookkeepingPaths(m))) ? "Update" : undefined;
}

/** The decision a tracked apply reports, before the tenant and refs are filled in. */
export type ApplyOutcome<T> = { action: DecisionAction | undefined; object: T };

/** Reports one change to a host object made on behalf of a tenant; no action, no Decision. */
export type Decide = (
  action: DecisionAction | undefined,
  kind: string,
  name: string,
  namespace: string,
  reason: string,
  /** Set when the Decision was recorded on the host object: publish it with this id and time. */
  recorded?: Pick<RecordedDecision, "id" | "time">,
  /** The host object's uid after the write, so Events can be attached to the object itself. */
  hostUid?: string,
) => Promise<void>;

/** Who to tell about a tracked write, and why it was made. */
export interface TrackedDecision {
  decide: Decide;
  reason: string;
  /** Update only the version that was read: never create an object that was deleted meanwhile. */
  ifResourceVersion?: string | undefined;
}

/**
 * Applies `desired` (server-side apply under `objects`' field manager) and says what
 * changed, judged by the fields it owns (see changeOf). The object carries a hash of what
 * was applied (appliedHashAnnotation): when the current object (read through `objects`, so
 * from its cache when it has one) carries the same hash and still holds every field sent,
 * nothing is written at all.
 *
 * With `decision`, the write is tracked end to end, and the caller must not call
 * `decide` itself: the object is written carrying its Decision in its
 * pendingDecisionAnnotation in the same apply (for an existing object a dry run first tells
 * whether the apply would change any owned field; a change of the hash alone is written
 * without a Decision); the Decision is published through `decision.decide` (which retries
 * until it succeeds or the service stops), and the annotation is removed. A pending Decision
 * found on the object (left by a crash or an outage) is published and removed first. A steady
 * state costs no request when the read comes from a cache.
 */
export async function applyTracked<T extends KubernetesObject>(
  objects: Objects,
  desired: T,
  decision?: TrackedDecision,
): Promise<ApplyOutcome<T>> {
  const meta = desired.metadata ?? {};
  const hashed = withAppliedHash(desired, objects.fieldManager);
  let before = await objects.get<T>(desired.apiVersion!, desired.kind!, meta.name!, meta.namespace);
  // A Decision left pending by a crash or an outage goes out first, and its annotation with it
  // (a merge patch: whoever wrote it, a create or an apply).
  if (before && decision && pendingDecisionOf(before, objects.fieldManager))
    before = await publishPendingDecision(objects, before, decision.decide);
  if (before && appliedUpToDate(before, hashed, objects.fieldManager)) return { action: undefined, object: before };
  if (!decision) {
    const after = await objects.apply(hashed);
    return { action: changeOf(before, after, objects.fieldManager), object: after };
  }
  const report = (recorded: RecordedDecision, on: KubernetesObject) =>
    decision.decide(
      recorded.action,
      desired.kind!,
      meta.name!,
      meta.namespace ?? "",
      recorded.reason,
      recorded,
      on.metadata?.uid,
    );

  const pin = decision.ifResourceVersion;
  // Only an existing object needs the dry run: for an absent one the write is a Create.
  const action = before ? changeOf(before, await dryRunApply(objects, hashed, pin), objects.fieldManager) : "Create";
  if (!action) {
    // No owned field changes: record the hash in a write that reports nothing, so the next
    // pass needs no dry run.
    return { action: undefined, object: await clearPending(objects, hashed, before!) };
  }

  const recorded: RecordedDecision = {
    id: recordedId(desired, action, decision.reason, before),
    time: new Date().toISOString(),
    action,
    reason: decision.reason,
    manager: objects.fieldManager,
  };
  const written = await objects.apply(withPending(hashed, recorded, objects.fieldManager), { ifResourceVersion: pin });
  if (faults.killAfterHostWrite) process.kill(process.pid, "SIGKILL");
  // Someone else may have made the same change in the meantime: then this write only added the annotation.
  const changed = changeOf(before, written, objects.fieldManager);
  if (changed) await report({ ...recorded, action: changed }, written);
  return { action: changed, object: await clearPending(objects, hashed, written) };
}

/**
 * Creates `desired` (never overwriting: an existing object is a 409 and yields
 * undefined) carrying its Create Decision in its pendingDecisionAnnotation, publishes
 * the Decision through `decision.decide` and removes the annotation. For objects
 * that must be written exactly once (a PKI); the caller reads an existing one with
 * publishPendingDecision, so a crash between create and publish loses nothing.
 *
 * A create records its fields under operation `Update`, which later server-side applies by
 * the same manager never take over: a field the apply stops sending would stay. With
 * `ownAsApply`, the patch that removes the annotation also renames that entry to `Apply`, so
 * from then on applies own exactly what the create set, at no extra request.
 */
export async function createTracked<T extends KubernetesObject>(
  objects: Objects,
  desired: T,
  decision: TrackedDecision,
  opts: { ownAsApply?: boolean } = {},
): Promise<T | undefined> {
  const recorded: RecordedDecision = {
    id: recordedId(desired, "Create", decision.reason),
    time: new Date().toISOString(),
    action: "Create",
    reason: decision.reason,
    manager: objects.fieldManager,
  };
  let created: T;
  try {
    const hashed = withAppliedHash(desired, objects.fieldManager);
    created = await objects.create(withPending(hashed, recorded, objects.fieldManager));
  } catch (err) {
    if (httpStatusOf(err) === 409) return undefined;
    throw err;
  }
  if (faults.killAfterHostWrite) process.kill(process.pid, "SIGKILL");
  return publishPendingDecision(objects, created, decision.decide, opts);
}

/**
 * Publishes the Decision recorded on `obj` (left there by a crash or an outage
 * between a tracked write and its publish) with its recorded id and time, then
 * removes the annotation. A no-op for an object without one; returns the object
 * as it now is. With `ownAsApply`, the same patch turns this manager's create entry
 * into its apply entry (see createTracked).
 */
export async function publishPendingDecision<T extends KubernetesObject>(
  objects: Objects,
  obj: T,
  decide: Decide,
  opts: { ownAsApply?: boolean } = {},
): Promise<T> {
  const pending = pendingDecisionOf(obj, objects.fieldManager);
  if (!pending) return obj;
  const meta = obj.metadata ?? {};
  await decide(pending.action, obj.kind!, meta.name!, meta.namespace ?? "", pending.reason, pending, meta.uid);
  // A controller may write the object right after it is created (a StatefulSet's status): the
  // hand-over is worth a fresh read and another try, the annotation alone is not.
  let current = obj;
  for (let attempt = 0; ; attempt++) {
    const { resourceVersion, managedFields: entries } = current.metadata ?? {};
    const managedFields = opts.ownAsApply ? createEntryAsApply(entries, objects.fieldManager) : undefined;
    try {
      // A merge patch removes the annotation whoever wrote it; pinned, so it never resurrects a
      // deleted object nor rewrites the managed fields of a version it did not read.
      return await objects.mergePatch<T>(current, {
        metadata: {
          resourceVersion,
          annotations: { [pendingDecisionAnnotation(objects.fieldManager)]: null },
          ...(managedFields ? { managedFields } : {}),
        },
      });
    } catch (err) {
      const status = httpStatusOf(err);
      if (status === 404) return current;
      if (status !== 409) throw err;
    }
    if (!managedFieldsWanted(opts, attempt)) return current;
    const reread = await objects.get<T>(obj.apiVersion!, obj.kind!, meta.name!, meta.namespace, { fresh: true });
    if (!reread || reread.metadata?.uid !== meta.uid) return current;
    if (pendingDecisionOf(reread, objects.fieldManager)?.id !== pending.id) return reread;
    current = reread;
  }
}

// Only the hand-over earns retries; a stale annotation alone is cleared by the next write.
function managedFieldsWanted(opts: { ownAsApply?: boolean }, attempt: number): boolean {
  return opts.ownAsApply === true && attempt < 3;
}

/**
 * The Decision recorded on `obj` and not published yet, if any (unreadable annotations are
 * ignored); with `manager`, only one that manager recorded.
 */
export function pendingDecisionOf(obj: KubernetesObject, manager?: string): RecordedDecision | undefined {
  const annotations = obj.metadata?.annotations ?? {};
  const raw =
    manager === undefined
      ? Object.entries(annotations).find(([key]) => key.startsWith(`${PENDING_DECISION_ANNOTATION}.`))?.[1]
      : annotations[pendingDecisionAnnotation(manager)];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<RecordedDecision>;
    const actions: readonly string[] = ["Create", "Update", "Delete", "Skip"];
    if (
      typeof parsed.id === "string" &&
      typeof parsed.time === "string" &&
      typeof parsed.reason === "string" &&
      actions.includes(parsed.action ?? "") &&
      (manager === undefined || parsed.manager === undefined || parsed.manager === manager)
    ) {
      return parsed as RecordedDecision;
    }
  } catch {
    // Not ours to understand; it is overwritten by the next tracked write.
  }
  return undefined;
}

/**
 * The Decide of a service acting for the TenantCluster itself (provisioner,
 * isolation): the tenant reference is the cluster-scoped TenantCluster.
 */
export function tenantDecider(tenant: string, publish: (decision: PlannedDecision) => Promise<void>): Decide {
  return async (action, kind, name, namespace, reason, recorded, hostUid) => {
    if (!action) return;
    await publish({
      tenant,
      action,
      kind,
      tenantRef: { namespace: "", name: tenant },
      hostRef: { namespace, name, ...(hostUid ? { uid: hostUid } : {}) },
      reason,
      ...(recorded ? { id: recorded.id, time: recorded.time } : {}),
    });
  };
}

function withPending<T extends KubernetesObject>(desired: T, recorded: RecordedDecision, fieldManager: string): T {
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      annotations: {
        ...desired.metadata?.annotations,
        [pendingDecisionAnnotation(fieldManager)]: JSON.stringify(recorded),
      },
    },
  };
}

// Applying `desired` without the annotation removes it (this manager owned it). Pinned
// to the version just seen, so it can never recreate an object deleted meanwhile; when a
// concurrent writer moved the object on, it re-reads and tries again while the annotation
// still holds this Decision. Should it still fail, the annotation stays and the next
// reconcile republishes it under the same id, which downstream dedupe drops.
async function clearPending<T extends KubernetesObject>(objects: Objects, desired: T, seen: T): Promise<T> {
  const id = pendingDecisionOf(seen, objects.fieldManager)?.id;
  let current = seen;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await objects.apply(desired, { ifResourceVersion: current.metadata?.resourceVersion });
    } catch (err) {
      const status = httpStatusOf(err);
      if (status === 404) return current;
      if (status !== 409) throw err;
    }
    const meta = desired.metadata ?? {};
    const reread = await objects.get<T>(desired.apiVersion!, desired.kind!, meta.name!, meta.namespace, {
      fresh: true,
    });
    if (!reread || pendingDecisionOf(reread, objects.fieldManager)?.id !== id) return reread ?? current;
    current = reread;
  }
  return current;
}

/**
 * The managed-fields list with `manager`'s create entry (operation Update, main resource)
 * turned into its apply entry, or undefined when there is no create entry or an apply entry
 * exists already (then the apply path sorts the entries out).
 */
export function createEntryAsApply(
  entries: readonly V1ManagedFieldsEntry[] | undefined,
  manager: string,
): V1ManagedFieldsEntry[] | undefined {
  const list = entries ?? [];
  const mine = (e: V1ManagedFieldsEntry) => e.manager === manager && (e.subresource ?? "") === "";
  if (!list.some((e) => mine(e) && e.operation === "Update")) return undefined;
  if (list.some((e) => mine(e) && e.operation === "Apply")) return undefined;
  return list.map((e) => (mine(e) && e.operation === "Update" ? { ...e, operation: "Apply" } : e));
}

/** An id naming one transition of one object: which object, from which stored version (or from nothing, now), to what and why. */
export function recordedId(
  desired: KubernetesObject,
  action: DecisionAction,
  reason: string,
  before?: KubernetesObject,
): string {
  const from = before ? `${before.metadata?.uid}@${before.metadata?.resourceVersion}` : `absent@${Date.now()}`;
  const identity = [desired.apiVersion, desired.kind, desired.metadata?.namespace, desired.metadata?.name];
  const hex = createHash("sha256")
    .update(JSON.stringify([...identity, action, reason, from]))
    .digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function tenantplaneManagers(...objs: KubernetesObject[]): string[] {
  const names = objs.flatMap((o) => (o.metadata?.managedFields ?? []).map((e) => e.manager ?? ""));
  return [...new Set(names.filter((n) => n.startsWith("tenantplane-")))];
}

// What the server would store, without storing it. A resourceVersion pins it like the real write.
async function dryRunApply<T extends KubernetesObject>(objects: Objects, desired: T, pin?: string): Promise<T> {
  return objects.apply(desired, { ifResourceVersion: pin, dryRun: true });
}
