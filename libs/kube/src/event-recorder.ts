import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "@tenantplane/runtime";
import { AggregatedEvents, jsonEventSink, type EventInput, type EventOutcome } from "./aggregated-events.js";
import { JsonClient } from "./json-client.js";

/** What happened to an event: written new, folded into an earlier one, or dropped by the rate limit. */
export type RecordOutcome = EventOutcome;

/**
 * A service's own Events on the cluster it runs in: {@link AggregatedEvents} over the
 * kubeconfig's cluster, repeats folded into one Event's count, and each regarded object
 * limited to `burst` writes then `perSecond`; past that an Event is dropped (these Events
 * repeat what a condition or a Decision already holds).
 */
export class EventRecorder {
  private readonly events: AggregatedEvents;

  constructor(
    kc: KubeConfig,
    opts: {
      component: string;
      instance: string;
      /** Namespace for Events about cluster-scoped objects. */
      clusterEventsNamespace?: string;
      burst?: number;
      perSecond?: number;
      maxSeries?: number;
      /** Sent as User-Agent on every request. */
      userAgent?: string;
      logger: Logger;
    },
  ) {
    const client = new JsonClient(kc, opts.userAgent === undefined ? {} : { userAgent: opts.userAgent });
    this.events = new AggregatedEvents(jsonEventSink(client), {
      component: opts.component,
      instance: opts.instance,
      clusterEventsNamespace: opts.clusterEventsNamespace ?? "default",
      burst: opts.burst ?? 50,
      perSecond: opts.perSecond ?? 5,
      overBudget: "drop",
      ...(opts.maxSeries === undefined ? {} : { maxSeries: opts.maxSeries }),
    });
  }

  /** Records `input`; rejects when the API server refused the write. */
  record(input: EventInput): Promise<RecordOutcome> {
    return this.events.record(input);
  }
}
