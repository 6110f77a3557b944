import type { DecisionError, ObjectRef } from "@tenantplane/messaging";

/**
 * How long transient failures (conflicts, throttling, 5xx, timeouts) of one object may last
 * before they are published as a Fail: they retry quietly with backoff meanwhile (about seven
 * attempts), because most heal, and a Fail for every brief outage would bury the real ones.
 */
export const TRANSIENT_FAIL_AFTER_MS = 60_000;

/** One tenant object whose last sync attempt failed, as the Synced condition names it. */
export interface FailedObject {
  kind: string;
  /** The tenant object (namespace, name). */
  tenantRef: ObjectRef;
  /** The host object the failed write was for. */
  hostRef: ObjectRef;
  error: DecisionError;
  /** When this run of failures began (ms); a success ends it. */
  since: number;
  /** A Fail Decision went out for this run (and error). */
  published: boolean;
  /** Fails published in this run so far: with `since`, what tells one Fail's id from another's. */
  sequence: number;
}

/** What {@link FailureMemory.note} is told about one failed attempt. */
export interface FailedAttempt {
  kind: string;
  tenantRef: ObjectRef;
  hostRef: ObjectRef;
  error: DecisionError;
  /** Retrying may succeed: published only once it persisted TRANSIENT_FAIL_AFTER_MS. */
  transient: boolean;
  /** The host API answered a write: only such failures become Fail Decisions. */
  hostWrite: boolean;
}

interface Entry extends FailedObject {
  transientSince: number | undefined;
  mark: string | undefined;
}

/**
 * The failures of one tenant's objects, keyed by source key, and which of them were
 * published: a Fail goes out once per (object, error) change, not on every retry; a
 * success (or the object leaving the sync) ends the run with {@link forget}, so the next
 * failure is news again.
 */
export class FailureMemory {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly transientFailAfterMs = TRANSIENT_FAIL_AFTER_MS) {}

  /** Records a failed attempt; true when a Fail Decision should be published for it now. */
  note(key: string, attempt: FailedAttempt, now: number): boolean {
    const previous = this.entries.get(key);
    const transientSince = attempt.transient ? (previous?.transientSince ?? now) : undefined;
    const entry: Entry = {
      kind: attempt.kind,
      tenantRef: attempt.tenantRef,
      hostRef: attempt.hostRef,
      error: attempt.error,
      since: previous?.since ?? now,
      transientSince,
      mark: previous?.mark,
      published: previous?.published ?? false,
      sequence: previous?.sequence ?? 0,
    };
    // Updated in place: the list runs from the oldest failure still standing to the newest,
    // and a retry does not reorder it (the Synced condition names the first few).
    this.entries.set(key, entry);
    if (!attempt.hostWrite) return false;
    if (transientSince !== undefined && now - transientSince < this.transientFailAfterMs) return false;
    const { code, reason, message } = attempt.error;
    const mark = JSON.stringify([attempt.kind, attempt.hostRef.name, code, reason, message]);
    if (mark === entry.mark) return false;
    entry.mark = mark;
    entry.published = true;
    entry.sequence++;
    return true;
  }

  /** The failure standing for `key`, if any. */
  get(key: string): FailedObject | undefined {
    return this.entries.get(key);
  }

  /** Ends the run of failures of `key` (a success, or the object left the sync); returns what stood. */
  forget(key: string): FailedObject | undefined {
    const entry = this.entries.get(key);
    this.entries.delete(key);
    return entry;
  }

  /** Every standing failure, oldest first. */
  list(): FailedObject[] {
    return [...this.entries.values()];
  }

  get size(): number {
    return this.entries.size;
  }
}
