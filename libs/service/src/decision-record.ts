// A host object written for a tenant carries the Decision of that write in an annotation of the
// service that made it (`tenantplane.io/decision.<service>`), written in the same request as the
// change, so recording it costs nothing. The annotation stays: a later reconcile that finds a
// record this process has not published, still young enough for the DECISIONS stream's duplicate
// window to recognise it, publishes it under its recorded id. A Decision already stored is then
// dropped as a duplicate; one lost to a crash between the write and the publish is stored.
import type { KubernetesObject } from "@kubernetes/client-node";
import type { DecisionAction } from "@tenantplane/messaging";

/** The prefix of the annotation a service's record is kept in (see decisionRecordAnnotation). */
export const DECISION_RECORD_ANNOTATION = "tenantplane.io/decision";

/**
 * The annotation a field manager records its Decision in: one key per service
 * (`tenantplane.io/decision.isolation`), so two services writing one object (the host
 * namespace) never overwrite each other's record.
 */
export function decisionRecordAnnotation(fieldManager: string): string {
  return `${DECISION_RECORD_ANNOTATION}.${fieldManager.replace(/^tenantplane-/, "")}`;
}

/** A Decision recorded on its host object. */
export interface RecordedDecision {
  id: string;
  time: string;
  action: DecisionAction;
  reason: string;
  /**
   * The field manager (service) that made the write. Objects two services write (the host
   * namespace) may carry another service's record: only its own service publishes it, so a
   * Decision is never published under the wrong service's name.
   */
  manager?: string;
}

/** `desired` carrying `recorded` in `fieldManager`'s record annotation; `desired` is not changed. */
export function withRecord<T extends KubernetesObject>(
  desired: T,
  recorded: RecordedDecision,
  fieldManager: string,
): T {
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      annotations: {
        ...desired.metadata?.annotations,
        [decisionRecordAnnotation(fieldManager)]: JSON.stringify(recorded),
      },
    },
  };
}

/**
 * The Decision recorded on `obj`, if any (unreadable annotations are ignored); with `manager`,
 * only one that manager recorded.
 */
export function recordedDecisionOf(obj: KubernetesObject, manager?: string): RecordedDecision | undefined {
  const annotations = obj.metadata?.annotations ?? {};
  const raw =
    manager === undefined
      ? Object.entries(annotations).find(([key]) => key.startsWith(`${DECISION_RECORD_ANNOTATION}.`))?.[1]
      : annotations[decisionRecordAnnotation(manager)];
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

/** What is taken for granted until the service has read the DECISIONS stream's own window. */
const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;
/** Room between the last republish and the end of the duplicate window: publishes take time. */
const WINDOW_MARGIN_MS = 30_000;
/** Ids published by this process that are remembered; far more than a window's Decisions. */
const MAX_REMEMBERED = 50_000;

/**
 * Which recorded Decisions a reconcile publishes again: those younger than the DECISIONS
 * stream's duplicate window (less a margin) that this process has not published itself.
 * One per process, like the stream it stands for.
 */
export class DecisionRecords {
  private republishWithinMs = DEFAULT_DUPLICATE_WINDOW_MS - WINDOW_MARGIN_MS;
  // Insertion-ordered: the oldest entries are the first to go.
  private readonly published = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** How recent a record must be to be published again, in milliseconds. */
  get windowMs(): number {
    return this.republishWithinMs;
  }

  /**
   * Sets the window from the duplicate window the server applied to the DECISIONS stream (read
   * back, not configured): a republish outside it would be stored twice.
   */
  useDuplicateWindow(duplicateWindowMs: number): void {
    this.republishWithinMs = Math.max(0, duplicateWindowMs - WINDOW_MARGIN_MS);
  }

  /** Whether `record` should be published by a reconcile that finds it now. */
  shouldRepublish(record: Pick<RecordedDecision, "id" | "time">): boolean {
    if (this.published.has(record.id)) return false;
    const age = this.now() - Date.parse(record.time);
    return Number.isFinite(age) && age >= 0 && age < this.republishWithinMs;
  }

  /** Notes that `id` is stored in the stream, so this process does not publish it again. */
  markPublished(id: string): void {
    const now = this.now();
    this.published.delete(id);
    this.published.set(id, now);
    for (const [key, at] of this.published) {
      if (this.published.size <= MAX_REMEMBERED && now - at < this.republishWithinMs) break;
      this.published.delete(key);
    }
  }
}

/** This process's records; the service sets its window once it has read the stream. */
export const decisionRecords = new DecisionRecords();
