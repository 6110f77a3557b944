// A host copy carries the Decision of the write that made it what it is in
// ANNOTATION_DECISION. It rides in that write (no extra request), so a worker killed between
// the write and the publish leaves the Decision on the object, and whoever syncs the tenant
// next publishes it with the same id; the DECISIONS stream's duplicate window drops it when
// it was out already. Reserved (`tenantplane.io/`), so a tenant can never set it.
import { randomUUID } from "node:crypto";
import type { RawObject } from "@tenantplane/kube";
import { ANNOTATION_DECISION } from "@tenantplane/mapping";
import { decisionId, type PlannedDecision } from "@tenantplane/messaging";
import type { HostObject } from "@tenantplane/sync";
import * as z from "zod";

/**
 * How old a recorded Decision may be and still be republished by a new syncer: long enough
 * to cover a worker killed between a write and its publish and the hand-over that follows, short
 * enough that a new syncer does not republish ten minutes of a busy tenant's writes. Never
 * longer than the DECISIONS stream's duplicate window allows (see `republishable`).
 */
export const REPUBLISH_WITHIN_MS = 90_000;

const RecordSchema = z.object({
  id: z.string().min(1),
  time: z.iso.datetime({ offset: true }),
  action: z.enum(["Create", "Update"]),
  reason: z.string().min(1),
});
export type RecordedDecision = z.infer<typeof RecordSchema>;

/**
 * Gives a Create or Update a fresh identity: two Updates of one object for the same reason
 * are two facts, and an id derived from the content alone would let the stream's duplicate
 * window drop the second.
 */
export function newRecord(d: Pick<PlannedDecision, "action" | "reason">, now = new Date()): RecordedDecision {
  if (d.action !== "Create" && d.action !== "Update") throw new Error(`only writes are recorded, not ${d.action}`);
  return { id: randomUUID(), time: now.toISOString(), action: d.action, reason: d.reason };
}

/** `obj` carrying `record` in its ANNOTATION_DECISION; `obj` itself is not changed. */
export function withRecord(obj: HostObject, record: RecordedDecision): HostObject {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...obj.metadata.annotations, [ANNOTATION_DECISION]: JSON.stringify(record) },
    },
  };
}

/** The Decision recorded on a host copy, or undefined when there is none or it is unreadable. */
export function recordOf(obj: RawObject): RecordedDecision | undefined {
  const text = obj.metadata.annotations?.[ANNOTATION_DECISION];
  if (text === undefined) return undefined;
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when `record` is young enough that republishing it can only be stored once:
 * `storedWindowMs` is the republish window the service derived from the duplicate window the
 * server applied to the DECISIONS stream (an operator may have shortened it).
 */
export function republishable(record: RecordedDecision, now: number, storedWindowMs = REPUBLISH_WITHIN_MS): boolean {
  const age = now - Date.parse(record.time);
  return age >= 0 && age < Math.min(REPUBLISH_WITHIN_MS, storedWindowMs);
}

/**
 * The id of a Delete: derived from the host object's uid, which no other object ever has,
 * so a worker that plans the same Delete after a predecessor announced it and died derives
 * the same id, and the stream keeps one. A Delete is published before it is made (see the
 * sync worker), so it is never made without its Decision stored.
 */
export function deleteId(d: PlannedDecision, service: string, hostUid: string): string {
  // The reason stays out: a successor may word why differently (source gone, namespace gone).
  return decisionId({ ...d, reason: "delete" }, service, `delete:${hostUid}`);
}
