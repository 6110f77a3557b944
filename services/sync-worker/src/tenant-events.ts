import { AggregatedEvents, type EventOutcome, type EventSink } from "@tenantplane/kube";
import type { DecisionError, ObjectRef } from "@tenantplane/messaging";
import { describe, type Logger } from "@tenantplane/runtime";

/**
 * The source component of the Events the sync worker writes in tenant APIs, so a tenant can
 * filter them (`kubectl get events --field-selector source=tenantplane-sync-worker`).
 */
export const TENANT_EVENT_COMPONENT = "tenantplane-sync-worker";
/**
 * Reason of the Warning on a tenant object whose host copy the host API refused to write, and of
 * the PodScheduled=False condition back-sync puts on such a Pod (one word for both places a user looks).
 */
export const REASON_SYNC_FAILED = "SyncFailed";
/** Reason of the Warning on a tenant object that is not copied to the host (a Skip). */
export const REASON_SYNC_SKIPPED = "SyncSkipped";
/** Reason of the Warning on a tenant Pod whose host copy the host scheduler cannot place (as a scheduler says it). */
export const REASON_FAILED_SCHEDULING = "FailedScheduling";

/** A tenant object an Event is about (every synced kind is core/v1). */
export interface TenantObject {
  kind: string;
  namespace: string;
  name: string;
  uid?: string | undefined;
}

/**
 * What a tenant is told on its object when the host API refused its copy:
 * `the host refused to create this Pod's copy tp-dev/web-x-shop-x-dev (403 Forbidden): <the host's words>`.
 */
export function syncFailedMessage(kind: string, hostRef: ObjectRef, error: DecisionError): string {
  const verb = error.attempted?.toLowerCase() ?? "write";
  const answer = error.code === 0 ? error.reason : `${error.code} ${error.reason}`;
  return `the host refused to ${verb} this ${kind}'s copy ${hostRef.namespace}/${hostRef.name} (${answer}): ${error.message}`;
}

/** What a tenant is told on its object when it is not copied to the host, and why. */
export function syncSkippedMessage(kind: string, hostRef: ObjectRef, reason: string): string {
  return `this ${kind} is not copied to the host (${hostRef.namespace}/${hostRef.name}): ${reason}`;
}

/** Budgets of the Events written in one tenant's API: they repeat what Decisions and conditions hold. */
const PER_OBJECT = { burst: 10, perSecond: 0.2 };
const PER_TENANT = { burst: 60, perSecond: 2 };

/**
 * Warning Events on one tenant's own objects, in its API, so `kubectl describe` inside the
 * tenant says why an object has no working host copy. Written with the tenant client as
 * {@link TENANT_EVENT_COMPONENT}, aggregated like the host's Events (repeats raise a count),
 * and bounded per object and per tenant: past the budget an Event is left out, since the
 * Decision stream and the TenantCluster hold the same facts. Never throws: a tenant API that
 * refuses or is down loses the Event, and the outcome is counted.
 */
export class TenantEvents {
  private readonly events: AggregatedEvents;

  constructor(
    sink: EventSink,
    private readonly deps: { instance: string; logger: Logger; count?(outcome: EventOutcome | "failed"): void },
  ) {
    this.events = new AggregatedEvents(sink, {
      component: TENANT_EVENT_COMPONENT,
      instance: deps.instance,
      clusterEventsNamespace: "default",
      ...PER_OBJECT,
      overBudget: "drop",
      total: PER_TENANT,
      maxSeries: 1024,
      maxInFlight: 2,
    });
  }

  /** Records a Warning on `object` (fire and forget); resolves when written or given up. */
  warn(object: TenantObject, reason: string, message: string): Promise<void> {
    return this.events
      .record({
        regarding: { apiVersion: "v1", ...object },
        type: "Warning",
        reason,
        message,
      })
      .then(
        (outcome) => this.deps.count?.(outcome),
        (err: unknown) => {
          this.deps.count?.("failed");
          this.deps.logger.info(
            { kind: object.kind, object: `${object.namespace}/${object.name}`, reason, err: describe(err) },
            "Event in the tenant API not written",
          );
        },
      );
  }
}
