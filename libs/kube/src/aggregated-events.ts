import { randomBytes } from "node:crypto";
import { V1MicroTime, type CoreV1Event } from "@kubernetes/client-node";
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
  patch(namespace: string, name: string, patch: EventPatch): Promise<void>;
}

/** What a later write of an Event changes: its count and message, and a routine series' own record. */
export interface EventPatch {
  count: number;
  lastTimestamp: string;
  message: string;
  /** Set on a routine series (see {@link AggregatedEvents.tally}) once it counts two or more. */
  series?: { count: number; lastObservedTime: string };
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
  /**
   * A routine series ({@link AggregatedEvents.tally}) is written at most once per this many
   * milliseconds (default 10 s): the first record at once, the records after it in one write.
   */
  seriesIntervalMs?: number;
  /** Told of each failed write of a routine series (it is retried; nobody awaits it). */
  onSeriesError?: (err: unknown, input: EventInput) => void;
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
  /** A routine series: its message names the latest record, and it carries `series` once it counts two. */
  routine?: RoutineState;
}

/** Bookkeeping of a routine series between its writes. */
interface RoutineState {
  input: EventInput;
  objectKey: string;
  /** A write is running or scheduled: further records wait for it. */
  busy: boolean;
  lastWriteMs: number;
  failures: number;
  timer: NodeJS.Timeout | undefined;
  /** Runs the next write at once (flush). */
  wake: (() => void) | undefined;
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
  private readonly routine = new Map<string, Series>();
  private readonly writing = new Set<Promise<void>>();
  private flushing = false;
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

  /** Number of routine series held in memory (bounded by maxSeries, plus those with records waiting). */
  get routineSize(): number {
    return this.routine.size;
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
    series ??= this.newSeries(ref, message.text);
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

  /**
   * Counts one routine record (a Create or Update that needs no attention) in its series: one
   * Event per object, component, type and reason, whatever the message, as client-go's
   * EventRecorder keeps isomorphic events in one series. The Event shows the latest record's
   * message (`latest of N: ...` once it counts more than one), its `count` and a `series`.
   * Returns at once: the first record of a series is written right away, the ones after it
   * together at most once per `seriesIntervalMs`, within the object's budget. A failed write is
   * retried with backoff, its records kept in the count; {@link flush} writes what is waiting.
   * Memory is bounded by `maxSeries` series of a few numbers each, however many records.
   */
  tally(input: EventInput): void {
    const ref = input.regarding;
    const objectKey = `${ref.kind}/${ref.namespace ?? ""}/${ref.name}/${ref.uid ?? ""}`;
    const component = input.reportingComponent ?? this.opts.component;
    const key = `${objectKey}\u0000${component}\u0000${input.type}\u0000${input.reason}`;
    let series = this.routine.get(key);
    if (series) this.routine.delete(key);
    series ??= {
      ...this.newSeries(ref, input.message),
      routine: {
        input,
        objectKey,
        busy: false,
        lastWriteMs: -Infinity,
        failures: 0,
        timer: undefined,
        wake: undefined,
      },
    };
    this.routine.set(key, series);
    series.pending++;
    series.message = input.message;
    series.routine!.input = input;
    this.schedule(series);
    this.evictRoutine();
  }

  /**
   * Writes every routine series with records waiting, now, without waiting for its interval
   * (for shutdown); a series whose writes keep failing is tried `attempts` times. Resolves when
   * those writes ended.
   */
  async flush(attempts = 3): Promise<void> {
    this.flushing = true;
    try {
      for (let i = 0; i < attempts; i++) {
        for (const s of this.routine.values()) {
          const state = s.routine!;
          if (state.wake) state.wake();
          else if (!state.busy && s.pending > 0) this.schedule(s);
        }
        await Promise.allSettled([...this.writing]);
        if (![...this.routine.values()].some((s) => s.pending > 0)) return;
      }
    } finally {
      this.flushing = false;
    }
  }

  private schedule(series: Series): void {
    const state = series.routine!;
    if (state.busy) return;
    state.busy = true;
    const interval = this.opts.seriesIntervalMs ?? 10_000;
    // After a failure, back off from 1 s up to the interval; otherwise keep to the interval.
    const delay = this.flushing
      ? 0
      : state.failures > 0
        ? Math.min(interval, 1000 * 2 ** (state.failures - 1))
        : Math.max(0, state.lastWriteMs + interval - this.now());
    const run = () => {
      clearTimeout(state.timer);
      state.timer = undefined;
      state.wake = undefined;
      const writing = this.writeRoutine(series).finally(() => this.writing.delete(writing));
      this.writing.add(writing);
    };
    if (delay === 0) return run();
    state.wake = run;
    state.timer = setTimeout(run, delay);
    // A series waiting for its next write never keeps a process alive: shutdown flushes it.
    state.timer.unref?.();
  }

  private async writeRoutine(series: Series): Promise<void> {
    const state = series.routine!;
    try {
      await this.bucketFor(state.objectKey).wait();
      await this.slots.run(() => this.send(series, state.input));
      state.failures = 0;
    } catch (err) {
      // send() put the records back in `pending`: the next write counts them.
      state.failures++;
      this.opts.onSeriesError?.(err, state.input);
    } finally {
      state.lastWriteMs = this.now();
      state.busy = false;
      // While flushing, a failed series waits for flush's next round instead of spinning.
      if (series.pending > 0 && !(this.flushing && state.failures > 0)) this.schedule(series);
    }
  }

  private evictRoutine(): void {
    const max = this.opts.maxSeries ?? 4096;
    for (const [key, s] of this.routine) {
      if (this.routine.size <= max) break;
      // A series with records waiting stays until they are written.
      if (s.pending === 0 && !s.routine!.busy) this.routine.delete(key);
    }
  }

  private newSeries(ref: Regarding, message: string): Series {
    return {
      namespace: ref.namespace || this.opts.clusterEventsNamespace,
      name: undefined,
      count: 0,
      pending: 0,
      message,
      next: undefined,
      tail: Promise.resolve(),
    };
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
    try {
      return await this.store(series, input, n);
    } catch (err) {
      // A routine series keeps its records for the next write; a recorded Event's callers
      // see the rejection and record again.
      if (series.routine) series.pending += n;
      throw err;
    }
  }

  private async store(series: Series, input: EventInput, n: number): Promise<EventOutcome> {
    const at = new Date(this.now());
    const now = at.toISOString();
    const total = series.name ? series.count + n : n;
    // client-go's series: a count and when the last record was observed, once there are two.
    const routine = series.routine && total > 1 ? { count: total, lastObservedTime: microTime(at) } : undefined;
    const message = truncate(routine ? `latest of ${total}: ${series.message}` : series.message, 1024);
    if (series.name) {
      try {
        await this.sink.patch(series.namespace, series.name, {
          count: series.count + n,
          lastTimestamp: now,
          message,
          ...(routine ? { series: routine } : {}),
        });
        series.count += n;
        return "aggregated";
      } catch (err) {
        // The Event expired (TTL) or was deleted: start a new one.
        if (httpStatusOf(err) !== 404) throw err;
        series.name = undefined;
        return this.store(series, input, n);
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
      message,
      action: input.action,
      count: n,
      // V1MicroTime serialises with the six fractional digits a MicroTime needs.
      ...(routine ? { series: { count: routine.count, lastObservedTime: new V1MicroTime(at) } } : {}),
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

// metav1.MicroTime: RFC 3339 with exactly six fractional digits.
function microTime(at: Date): string {
  return new V1MicroTime(at).toISOString();
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
