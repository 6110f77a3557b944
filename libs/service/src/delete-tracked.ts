import type { KubernetesObject } from "@kubernetes/client-node";
import type { Objects } from "@tenantplane/kube";
import { httpStatusOf } from "@tenantplane/runtime";
import { faults } from "./faults.js";
import type { RecordedDecision } from "./decision-record.js";
import { recordedId, type Decide, type TrackedDecision } from "./object-change.js";

/**
 * Prefix of the annotations a Delete Decision waits in: a deleted object cannot carry
 * its own Decision, so it is recorded on an anchor that outlives it (the TenantCluster,
 * or the namespace the object lived in), one annotation per pending Delete.
 */
export const PENDING_DELETE_PREFIX = "tenantplane.io/pending-delete.";

/** The object a pending Delete is about; its uid tells a completed delete from one that never happened. */
export interface DeleteTarget {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string | undefined;
}

/** A Delete Decision recorded on an anchor, with the object it is about. */
export interface RecordedDelete extends RecordedDecision {
  target: DeleteTarget & { uid: string };
}

/**
 * Deletes `target` and publishes its Delete Decision, recording the Decision on
 * `decision.anchor` first and removing it after the publish, so a crash or an
 * outage in between loses nothing: publishPendingDeletes on the anchor publishes
 * it later, and only if the delete really happened. Returns whether this call
 * deleted the object; an absent or already terminating object is not deleted
 * again and gets no Decision.
 */
export async function deleteTracked(
  objects: Objects,
  target: DeleteTarget,
  decision: TrackedDecision & { anchor: KubernetesObject },
): Promise<boolean> {
  const current = await objects.get(target.apiVersion, target.kind, target.name, target.namespace);
  if (!current || current.metadata?.deletionTimestamp) return false;
  const recorded: RecordedDelete = {
    id: recordedId(current, "Delete", decision.reason, current),
    time: new Date().toISOString(),
    action: "Delete",
    reason: decision.reason,
    target: { ...target, uid: current.metadata?.uid ?? "" },
  };
  const key = pendingDeleteKey(recorded.id);
  await mergePatchObject(objects, decision.anchor, { metadata: { annotations: { [key]: JSON.stringify(recorded) } } });
  // Pinned to the object that was read (and to the version the caller judged, if given): a
  // delete never lands on an object that was replaced or changed owner in between.
  const pin = decision.ifResourceVersion ? { resourceVersion: decision.ifResourceVersion } : {};
  const deleted = await objects.delete(
    { apiVersion: target.apiVersion, kind: target.kind, metadata: { name: target.name, namespace: target.namespace } },
    { preconditions: { uid: current.metadata?.uid ?? "", ...pin } },
  );
  if (faults.killAfterHostWrite) process.kill(process.pid, "SIGKILL");
  if (deleted) await report(decision.decide, recorded);
  await forget(objects, decision.anchor, key);
  return deleted;
}

/**
 * Publishes the Delete Decisions recorded on `anchor` whose delete happened (the
 * object is gone, terminating, or replaced by one with another uid), drops those
 * whose delete never happened, and removes the annotations. Returns how many it published.
 */
export async function publishPendingDeletes(
  objects: Objects,
  anchor: KubernetesObject,
  decide: Decide,
): Promise<number> {
  let published = 0;
  for (const [key, raw] of Object.entries(anchor.metadata?.annotations ?? {})) {
    if (!key.startsWith(PENDING_DELETE_PREFIX)) continue;
    const recorded = parseRecordedDelete(raw);
    if (recorded) {
      const t = recorded.target;
      const now = await objects.get(t.apiVersion, t.kind, t.name, t.namespace, { fresh: true });
      const happened = !now || now.metadata?.uid !== t.uid || Boolean(now.metadata?.deletionTimestamp);
      if (happened) {
        await report(decide, recorded);
        published++;
      }
    }
    await forget(objects, anchor, key);
  }
  return published;
}

/** A pending Delete read from its annotation value, or undefined when it is not one. */
export function parseRecordedDelete(raw: string): RecordedDelete | undefined {
  try {
    const parsed = JSON.parse(raw) as Partial<RecordedDelete>;
    const t = parsed.target;
    if (
      typeof parsed.id === "string" &&
      typeof parsed.time === "string" &&
      typeof parsed.reason === "string" &&
      parsed.action === "Delete" &&
      t &&
      typeof t.apiVersion === "string" &&
      typeof t.kind === "string" &&
      typeof t.name === "string" &&
      typeof t.uid === "string"
    ) {
      return parsed as RecordedDelete;
    }
  } catch {
    // Not a record this code wrote; it is removed like one.
  }
  return undefined;
}

/** The anchor annotation a pending Delete with this id waits in. */
export function pendingDeleteKey(id: string): string {
  return `${PENDING_DELETE_PREFIX}${id.replace(/-/g, "").slice(0, 16)}`;
}

function report(decide: Decide, recorded: RecordedDelete): Promise<void> {
  const t = recorded.target;
  return decide("Delete", t.kind, t.name, t.namespace ?? "", recorded.reason, recorded);
}

async function forget(objects: Objects, anchor: KubernetesObject, key: string): Promise<void> {
  try {
    await mergePatchObject(objects, anchor, { metadata: { annotations: { [key]: null } } });
  } catch (err) {
    // A vanished anchor holds nothing any more.
    if (httpStatusOf(err) !== 404) throw err;
  }
}

// JSON merge patch of the anchor's annotations under this manager; unpinned, since it only
// adds or removes one annotation of its own.
async function mergePatchObject(
  objects: Objects,
  obj: KubernetesObject,
  patch: { metadata: Record<string, unknown> },
): Promise<void> {
  await objects.mergePatch(obj, patch);
}
