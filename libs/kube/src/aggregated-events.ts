import { randomBytes } from "node:crypto";
import type { CoreV1Event } from "@kubernetes/client-node";
import { httpStatusOf } from "@tenantplane/runtime";
import type { JsonClient } from "./json-client.js";
import { RequestBudget, TokenBucket } from "./token-bucket.js";
import { Slots } from "./internal/slots.js";

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
   * component writes it; defaults to the writer's component.
   */
  reportingComponent?: string | undefined;
}

/** Where Events go: the core/v1 Event API of one cluster (see {@link jsonEventSink}). */
export interface EventSink {
  create(namespace: string, event: CoreV1Event): Promise<void>;
  /** Throws an error with code 404 when the Event is gone (expired or deleted). */
  patch(
    namespace: string,
    name: string,
    patch: { count: number; lastTimestamp: string; message: string },
  ): Promise<void>;
}

/** The core/v1 Event API behind `client`, as an {@link EventSink}. */
export function jsonEventSink(client: JsonClient): EventSink {
  const path = (namespace: string, name?: string) =>
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/events${name === undefined ? "" : `/${encodeURIComponent(name)}`}`;
  return {
    create: async (namespace, body) => {
      await client.request("POST", path(namespace), { body });
    },
    patch: async (namespace, name, body) => {
      await client.request("PATCH", path(namespace, name), { body, contentType: "application/merge-patch+json" });
    },
  };
}

/** Tuning of AggregatedEvents; the defaults follow client-go's event aggregation. */
export interface AggregatedEventsOptions {
  /** Source component of the Events (`source.component`; `reportingComponent` is `tenantplane.io/<component>`). */
  component: string;
  instance: string;
  /** Namespace for Events about cluster-scoped objects. */
  clusterEventsNamespace: string;
  /** Writes per regarded object: `burst` at once, then `perSecond`. */
  burst: number;
  perSecond: number;
  /**
   * Past an object's budget: "wait" (the default) queues the Event for a later write, so none is
   * ever lost; "drop" leaves it out and answers "dropped", for Events that only repeat what a
   * Decision or a condition already holds.
   */
  overBudget?: "wait" | "drop";
  /** Writes over every object; past it an Event that needs a write of its own is dropped. */
  total?: { burst: number; perSecond: number };
  /** Series (Events) remembered for aggregation; the least recently used are forgotten. */
  maxSeries?: number;
  /** Distinct messages of one object, type and reason before further ones are combined into one Event. */
  similarLimit?: number;
  /** How long distinct messages count towards similarLimit. */
  similarWindowMs?: number;
  /** Event writes in flight at once, over every object (unbounded when absent). */
  maxInFlight?: number;
  now?: () => number;
}

/** How an Event was recorded: a new Event, a higher count on an existing one, or left out over budget. */
export type EventOutcome = "created" | "aggregated" | "dropped";

interface Series {
  namespace: string;
  name: string | undefined;
  /** Count stored on the Event. */
  count: number;
  /** Records waiting for the next write of this Event. */
  pending: number;
  message: string;
  next: Promise<EventOutcome> | undefined;
  tail: Promise<unknown>;
}

/**
 * Writes core/v1 Events the way client-go's correlator does, so a noisy source cannot flood
 * an API server. Repeats of the same (object, component, type, reason, message) raise one
 * Event's count; past `similarLimit` distinct messages for one object, type and reason within
 * the window, further ones are combined into a single Event. Writes per object are
 * rate-limited, and every write carries all records that queued for it, so a burst costs few
 * API writes; at most `maxInFlight` writes are in flight at once. `record` resolves once the
 * Event is stored (or, past a "drop" budget, left out) and rejects when the write failed.
 * Memory is bounded: least recently used series and expired similarity windows are forgotten.
 */
export class AggregatedEvents {
  private readonly series = new Map<string, Series>();
  private readonly similar = new Map<string, { since: number; messages: Set<string> }>();
  private readonly buckets = new Map<string, RequestBudget>();
  private readonly slots: Slots;
  private readonly total: TokenBucket | undefined;
  private readonly now: () => number;

  constructor(
    private readonly sink: EventSink,
    private readonly opts: AggregatedEventsOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.slots = new Slots(opts.maxInFlight ?? Number.POSITIVE_INFINITY);
    this.total = opts.total && new TokenBucket(opts.total.burst, opts.total.perSecond, this.now);
  }

  /** Number of series held in memory (bounded by maxSeries, plus those mid-write). */
  get size(): number {
    return this.series.size;
  }

  async record(input: EventInput): Promise<EventOutcome> {
    const ref = input.regarding;
    const objectKey = `${ref.kind}/${ref.namespace ?? ""}/${ref.name}/${ref.uid ?? ""}`;
    const message = this.combinedMessage(`${objectKey}\u0000${input.type}\u0000${input.reason}`, input.message);
    const component = input.reportingComponent ?? this.opts.component;
    const key = `${objectKey}\u0000${component}\u0000${input.type}\u0000${input.reason}\u0000${message.key}`;
    let series = this.series.get(key);
    // A record that would need a write of its own is left out when a "drop" budget is spent;
    // one that rides on a write already queued costs nothing.
    if (!series?.next && !this.mayWrite(objectKey)) return "dropped";
    if (series) this.series.delete(key);
    series ??= {
      namespace: ref.namespace || this.opts.clusterEventsNamespace,
      name: undefined,
      count: 0,
      pending: 0,
      message: message.text,
      next: undefined,
      tail: Promise.resolve(),
    };
    this.series.set(key, series);
    this.evict();
    series.pending++;
    series.message = message.text;
    const s = series;
    if (s.next) return s.next;
    const next = s.tail.then(() => this.write(s, input, objectKey));
    s.next = next;
    s.tail = next.catch(() => undefined);
    return next;
  }

  private mayWrite(objectKey: string): boolean {
    if (this.opts.overBudget === "drop" && this.bucketFor(objectKey).waitMs() > 0) return false;
    return this.total?.take() ?? true;
  }

  // Everything that queued before the token and the slot arrived rides on this one write.
  private async write(series: Series, input: EventInput, objectKey: string): Promise<EventOutcome> {
    await this.bucketFor(objectKey).wait();
    return this.slots.run(() => this.send(series, input));
  }

  private async send(series: Series, input: EventInput): Promise<EventOutcome> {
    series.next = undefined;
    const n = series.pending;
    series.pending = 0;
    const at = new Date(this.now());
    const now = at.toISOString();
    if (series.name) {
      try {
        await this.sink.patch(series.namespace, series.name, {
          count: series.count + n,
          lastTimestamp: now,
          message: truncate(series.message, 1024),
        });
        series.count += n;
        return "aggregated";
      } catch (err) {
        // The Event expired (TTL) or was deleted: start a new one.
        if (httpStatusOf(err) !== 404) throw err;
        series.name = undefined;
      }
    }
    const ref = input.regarding;
    const name = `${ref.name}.${randomBytes(8).toString("hex")}`;
    const component = input.reportingComponent ?? this.opts.component;
    await this.sink.create(series.namespace, {
      metadata: { name, namespace: series.namespace },
      involvedObject: {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        name: ref.name,
        namespace: ref.namespace,
        uid: ref.uid,
      },
      type: input.type,
      reason: input.reason,
      message: truncate(series.message, 1024),
      action: input.action,
      count: n,
      firstTimestamp: at,
      lastTimestamp: at,
      // The component that decided reports the Event, whoever writes it.
      source: { component },
      reportingComponent: `tenantplane.io/${component}`,
      reportingInstance: this.opts.instance,
    });
    series.name = name;
    series.count = n;
    return "created";
  }

  private combinedMessage(similarKey: string, message: string): { key: string; text: string } {
    const now = this.now();
    const window = this.opts.similarWindowMs ?? 10 * 60_000;
    let seen = this.similar.get(similarKey);
    if (!seen || now - seen.since > window) {
      seen = { since: now, messages: new Set() };
    }
    this.similar.delete(similarKey);
    this.similar.set(similarKey, seen);
    while (this.similar.size > (this.opts.maxSeries ?? 4096)) this.similar.delete(this.similar.keys().next().value!);
    if (seen.messages.has(message)) return { key: message, text: message };
    if (seen.messages.size < (this.opts.similarLimit ?? 10)) {
      seen.messages.add(message);
      return { key: message, text: message };
    }
    return { key: "\u0000combined", text: `(combined from similar events) ${message}` };
  }

  private evict(): void {
    const max = this.opts.maxSeries ?? 4096;
    if (this.series.size <= max) return;
    for (const [key, s] of this.series) {
      if (this.series.size <= max) break;
      // A series with records waiting for its write stays until they are written.
      if (s.pending === 0 && !s.next) this.series.delete(key);
    }
  }

  private bucketFor(objectKey: string): RequestBudget {
    let bucket = this.buckets.get(objectKey);
    if (bucket) {
      this.buckets.delete(objectKey);
    } else {
      bucket = new RequestBudget(this.opts.perSecond, this.opts.burst, this.now);
    }
    this.buckets.set(objectKey, bucket);
    while (this.buckets.size > (this.opts.maxSeries ?? 4096)) this.buckets.delete(this.buckets.keys().next().value!);
    return bucket;
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
