import { createHash } from "node:crypto";
import type { KubernetesObject, V1ManagedFieldsEntry } from "@kubernetes/client-node";
import type { Objects } from "@tenantplane/kube";
import type { DecisionAction, PlannedDecision } from "@tenantplane/messaging";
import { httpStatusOf } from "@tenantplane/runtime";
import { appliedHashAnnotation, appliedUpToDate, withAppliedHash } from "./applied-hash.js";
import {
  decisionRecordAnnotation,
  decisionRecords,
  recordedDecisionOf,
  withRecord,
  type RecordedDecision,
} from "./decision-record.js";
import { faults } from "./faults.js";
import { ownedFieldsChanged } from "./owned-fields.js";

// Bookkeeping annotations: neither is a change worth a Decision.
const bookkeepingPaths = (fieldManager: string) => [
  `metadata.annotations.${decisionRecordAnnotation(fieldManager)}`,
  `metadata.annotations.${appliedHashAnnotation(fieldManager)}`,
];

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
 * `decide` itself: the object is written carrying its Decision in its record annotation
 * (decision-record.ts) in the same apply (for an existing object a dry run first tells
 * whether the apply would change any owned field; a change of the hash alone is written
 * without a Decision), and the Decision is published through `decision.decide` (which retries
 * until it succeeds or the service stops). A recent record found on the object that this
 * process did not publish (a crash or an outage came between its write and its publish) is
 * published first. A steady state costs no request when the read comes from a cache.
 */
export async function applyTracked<T extends KubernetesObject>(
  objects: Objects,
  desired: T,
  decision?: TrackedDecision,
): Promise<ApplyOutcome<T>> {
  const meta = desired.metadata ?? {};
  const hashed = withAppliedHash(desired, objects.fieldManager);
  let before = await objects.get<T>(desired.apiVersion!, desired.kind!, meta.name!, meta.namespace);
  if (before && decision) await publishRecordedDecision(objects, before, decision.decide);
  if (before && appliedUpToDate(before, hashed, objects.fieldManager)) return { action: undefined, object: before };
  let pin = decision?.ifResourceVersion;
  // An object this manager created (createTracked) holds its fields under the create's entry,
  // which an apply never takes over: a field the apply stops sending would stay. Hand it over
  // first, unless the caller pinned another version than the one read (the apply then fails).
  if (before && createEntryAsApply(before.metadata?.managedFields, objects.fieldManager)) {
    if (pin === undefined || pin === before.metadata?.resourceVersion) {
      before = await handOverToApply(objects, before);
      if (pin !== undefined) pin = before.metadata?.resourceVersion;
    }
  }
  if (!decision) {
    const after = await objects.apply(hashed);
    return { action: changeOf(before, after, objects.fieldManager), object: after };
  }

  // Only an existing object needs the dry run: for an absent one the write is a Create.
  const action = before ? changeOf(before, await dryRunApply(objects, hashed, pin), objects.fieldManager) : "Create";
  if (!action) {
    // No owned field changes: record the hash in a write that reports nothing, so the next
    // pass needs no dry run.
    return { action: undefined, object: await writeHashOnly(objects, hashed, before!) };
  }

  const recorded: RecordedDecision = {
    id: recordedId(desired, action, decision.reason, before),
    time: new Date().toISOString(),
    action,
    reason: decision.reason,
    manager: objects.fieldManager,
  };
  const written = await objects.apply(withRecord(hashed, recorded, objects.fieldManager), { ifResourceVersion: pin });
  if (faults.killAfterHostWrite) process.kill(process.pid, "SIGKILL");
  // Someone else may have made the same change in the meantime: then this write only added the record.
  const changed = changeOf(before, written, objects.fieldManager);
  if (changed) await report(decision.decide, { ...recorded, action: changed }, written);
  return { action: changed, object: written };
}

/**
 * Creates `desired` (never overwriting: an existing object is a 409 and yields
 * undefined) carrying its Create Decision in its record annotation (decision-record.ts), and
 * publishes the Decision through `decision.decide`. For objects that must be written exactly
 * once (a PKI); the caller reads an existing one with publishRecordedDecision, so a crash
 * between create and publish loses nothing.
 *
 * A create records its fields under operation `Update`, which later server-side applies by
 * the same manager never take over: a field the apply stops sending would stay. applyTracked
 * hands such an object over (handOverToApply) before the first apply that changes it.
 */
export async function createTracked<T extends KubernetesObject>(
  objects: Objects,
  desired: T,
  decision: TrackedDecision,
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
    created = await objects.create(withRecord(hashed, recorded, objects.fieldManager));
  } catch (err) {
    if (httpStatusOf(err) === 409) return undefined;
    throw err;
  }
  if (faults.killAfterHostWrite) process.kill(process.pid, "SIGKILL");
  await report(decision.decide, recorded, created);
  return created;
}

/**
 * Publishes the Decision `objects`' field manager recorded on `obj`, with its recorded id and
 * time, when it is recent enough for the stream's duplicate window and this process has not
 * published it (a crash or an outage came between its write and its publish). Writes nothing.
 */
export async function publishRecordedDecision(objects: Objects, obj: KubernetesObject, decide: Decide): Promise<void> {
  const recorded = recordedDecisionOf(obj, objects.fieldManager);
  if (!recorded || !decisionRecords.shouldRepublish(recorded)) return;
  await report(decide, recorded, obj);
}

// Publishes a recorded Decision about `on` and remembers that this process did.
async function report(decide: Decide, recorded: RecordedDecision, on: KubernetesObject): Promise<void> {
  const meta = on.metadata ?? {};
  await decide(recorded.action, on.kind!, meta.name!, meta.namespace ?? "", recorded.reason, recorded, meta.uid);
  decisionRecords.markPublished(recorded.id);
}

/**
 * Turns the entry a create by `objects`' field manager left (operation Update) into its apply
 * entry, so later applies own exactly what the create set and remove what they stop sending.
 * A controller may write the object right after its create (a StatefulSet's status): then it
 * reads again and retries, pinned to each version it read. Returns the object as it now is; a
 * hand-over that cannot finish is finished by the next update (see the provisioner).
 */
export async function handOverToApply<T extends KubernetesObject>(objects: Objects, created: T): Promise<T> {
  const uid = created.metadata?.uid;
  return retryOnConflict(
    objects,
    created,
    3,
    (reread) => reread.metadata?.uid === uid,
    async (current) => {
      const managedFields = createEntryAsApply(current.metadata?.managedFields, objects.fieldManager);
      if (!managedFields) return current;
      return objects.mergePatch<T>(current, {
        metadata: { resourceVersion: current.metadata?.resourceVersion, managedFields },
      });
    },
  );
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

// Applying `desired` without the record removes an earlier one (this manager owned it; it was
// published above if it needed to be). Pinned to the version just seen, so it can never
// recreate an object deleted meanwhile.
async function writeHashOnly<T extends KubernetesObject>(objects: Objects, desired: T, seen: T): Promise<T> {
  return retryOnConflict(
    objects,
    seen,
    5,
    () => true,
    (current) => objects.apply(desired, { ifResourceVersion: current.metadata?.resourceVersion }),
  );
}

// Runs `write` (pinned by it to the version it is given) on `seen`; when a concurrent writer
// moved the object on (409) it reads the object again and retries with that version, at most
// `attempts` times, while `stillOurs` holds for what it read. Gone (404, or absent on the
// read), or out of attempts, it returns the last version seen.
async function retryOnConflict<T extends KubernetesObject>(
  objects: Objects,
  seen: T,
  attempts: number,
  stillOurs: (reread: T) => boolean,
  write: (current: T) => Promise<T>,
): Promise<T> {
  const { apiVersion, kind, metadata } = seen;
  let current = seen;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      return await write(current);
    } catch (err) {
      const status = httpStatusOf(err);
      if (status === 404) return current;
      if (status !== 409) throw err;
    }
    const reread = await objects.get<T>(apiVersion!, kind!, metadata!.name!, metadata?.namespace, { fresh: true });
    if (!reread || !stillOurs(reread)) return current;
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
