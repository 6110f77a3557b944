import { randomBytes } from "node:crypto";
import type { CoreV1Event } from "@kubernetes/client-node";
import { RequestBudget, type EventInput } from "@tenantplane/kube";
import { httpStatusOf } from "@tenantplane/runtime";
import { Slots } from "./rate.js";

/** Where Events go; the recorder's main wires it to the core/v1 API. */
export interface EventWriter {
  create(namespace: string, event: CoreV1Event): Promise<void>;
  /** Throws an error with code 404 when the Event is gone (expired or deleted). */
  patch(
    namespace: string,
    name: string,
    patch: { count: number; lastTimestamp: string; message: string },
  ): Promise<void>;
}

/** Tuning of DecisionEvents; the defaults follow client-go's event aggregation. */
export interface DecisionEventsOptions {
  component: string;
  instance: string;
  /** Namespace for Events about cluster-scoped objects (TenantClusters). */
  clusterEventsNamespace: string;
  burst: number;
  perSecond: number;
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

/** How a Decision reached an Event: a new Event, or a higher count on an existing one. */
export type EventOutcome = "created" | "aggregated";

interface Series {
  namespace: string;
  name: string | undefined;
  /** Count stored on the Event. */
  count: number;
  /** Decisions waiting for the next write of this Event. */
  pending: number;
  message: string;
  next: Promise<EventOutcome> | undefined;
  tail: Promise<unknown>;
}

/**
 * Turns Decisions into Events without ever discarding one. Repeats of the same
 * (object, type, reason, message) raise one Event's count; past `similarLimit`
 * distinct messages for one object, type and reason within the window, further
 * ones are combined into a single Event. Writes per object are rate-limited by
 * waiting, and every write carries all Decisions that queued for it, so a noisy
 * tenant costs few API writes; at most `maxInFlight` writes are in flight at once,
 * and Decisions queued meanwhile ride on the next write of their series. `record`
 * resolves only once the Decision is counted in a stored Event, and rejects when
 * that write failed (the caller naks and the Decision comes back). Memory is bounded: least recently used
 * series and expired similarity windows are forgotten.
 */
export class DecisionEvents {
  private readonly series = new Map<string, Series>();
  private readonly similar = new Map<string, { since: number; messages: Set<string> }>();
  private readonly buckets = new Map<string, RequestBudget>();
  private readonly slots: Slots;
  private readonly now: () => number;

  constructor(
    private readonly writer: EventWriter,
    private readonly opts: DecisionEventsOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.slots = new Slots(opts.maxInFlight ?? Number.POSITIVE_INFINITY);
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
        await this.writer.patch(series.namespace, series.name, {
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
    await this.writer.create(series.namespace, {
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
      // The service that decided reports the Event; this recorder only writes it.
      source: { component: input.reportingComponent ?? this.opts.component },
      reportingComponent: `tenantplane.io/${input.reportingComponent ?? this.opts.component}`,
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
    return { key: "\u0000combined", text: `(combined from similar decisions) ${message}` };
  }

  private evict(): void {
    const max = this.opts.maxSeries ?? 4096;
    if (this.series.size <= max) return;
    for (const [key, s] of this.series) {
      if (this.series.size <= max) break;
      // A series with Decisions waiting for its write stays until they are written.
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
