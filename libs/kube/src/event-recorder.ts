import { randomBytes } from "node:crypto";
import type { KubeConfig } from "@kubernetes/client-node";
import { httpStatusOf, type Logger } from "@tenantplane/runtime";
import { RestClient } from "./internal/rest.js";
import { TokenBucket } from "./token-bucket.js";

const eventsPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;

/** The object an Event is about; uid lets `kubectl describe` find it. */
export interface Regarding {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string | undefined;
  namespace?: string | undefined;
}

/** One event to record. */
export interface EventInput {
  regarding: Regarding;
  type: "Normal" | "Warning";
  reason: string;
  message: string;
  action?: string;
  /**
   * The component that decided what the Event reports (e.g. `sync-worker`), when another
   * component writes it; defaults to this recorder's component.
   */
  reportingComponent?: string | undefined;
}

/** What happened to an event: written new, folded into an earlier one, or dropped by the rate limit. */
export type RecordOutcome = "created" | "aggregated" | "dropped";

interface Series {
  name: string;
  namespace: string;
  count: number;
}

/**
 * Writes core/v1 Events with aggregation and rate limiting, so a noisy tenant
 * cannot flood the API server: a repeat of the same (object, type, reason,
 * message) bumps `count` and `lastTimestamp` of the existing Event instead of
 * creating a new one, and each regarded object gets a token bucket.
 */
export class EventRecorder {
  private readonly rest: RestClient;
  private readonly series = new Map<string, Series>();
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    kc: KubeConfig,
    private readonly opts: {
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
    this.rest = new RestClient(kc, opts.userAgent);
  }

  async record(input: EventInput): Promise<RecordOutcome> {
    const ref = input.regarding;
    const objectKey = `${ref.kind}/${ref.namespace ?? ""}/${ref.name}/${ref.uid ?? ""}`;
    if (!this.bucketFor(objectKey).take()) return "dropped";
    const component = input.reportingComponent ?? this.opts.component;
    const key = `${objectKey}\u0000${component}\u0000${input.type}\u0000${input.reason}\u0000${input.message}`;
    const now = new Date();
    const existing = this.series.get(key);
    if (existing) {
      try {
        await this.rest.request({
          method: "PATCH",
          path: `${eventsPath(existing.namespace)}/${encodeURIComponent(existing.name)}`,
          body: { count: existing.count + 1, lastTimestamp: now.toISOString() },
          contentType: "application/merge-patch+json",
        });
        existing.count++;
        this.touch(key, existing);
        return "aggregated";
      } catch (err) {
        // The Event expired (TTL) or was deleted: start a new series.
        if (httpStatusOf(err) !== 404) throw err;
        this.series.delete(key);
      }
    }
    const namespace = ref.namespace || this.opts.clusterEventsNamespace || "default";
    const name = `${ref.name}.${randomBytes(8).toString("hex")}`;
    const stamp = now.toISOString();
    const event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        name: ref.name,
        namespace: ref.namespace,
        uid: ref.uid,
      },
      type: input.type,
      reason: input.reason,
      message: truncate(input.message, 1024),
      action: input.action,
      count: 1,
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      source: { component },
      reportingComponent: `tenantplane.io/${component}`,
      reportingInstance: this.opts.instance,
    };
    await this.rest.request({ method: "POST", path: eventsPath(namespace), body: event });
    this.touch(key, { name, namespace, count: 1 });
    return "created";
  }

  private touch(key: string, series: Series): void {
    this.series.delete(key);
    this.series.set(key, series);
    const max = this.opts.maxSeries ?? 4096;
    while (this.series.size > max) this.series.delete(this.series.keys().next().value!);
  }

  private bucketFor(objectKey: string): TokenBucket {
    let bucket = this.buckets.get(objectKey);
    if (!bucket) {
      bucket = new TokenBucket(this.opts.burst ?? 50, this.opts.perSecond ?? 5);
      this.buckets.set(objectKey, bucket);
    }
    return bucket;
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
