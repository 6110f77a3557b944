import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import { JetStreamApiError } from "@nats-io/jetstream";
import { backoffDelay, sleep, TransientError } from "@tenantplane/runtime";
import type { StampedDecision } from "./publisher.js";
import { subjects } from "./subjects.js";

/** Options of {@link DecisionPipeline}. */
export interface DecisionPipelineOptions {
  /** Most publishes sent and not yet acknowledged; callers beyond it wait their turn. Default 256. */
  maxInFlight?: number;
  /** How long one publish waits for its acknowledgement. Default 5 s. */
  ackTimeoutMs?: number;
  /** Retry backoff bounds while NATS does not store; default 250 ms doubling up to 5 s. */
  baseMs?: number;
  maxMs?: number;
  /** Once aborted, a failed publish is no longer retried: it and every one queued behind it are rejected. */
  signal?: AbortSignal;
  /** Told of each failure that pauses the pipeline (for a log line). */
  onRetry?: (err: unknown, attempt: number, waiting: number) => void;
  /** For tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

interface Entry {
  /** Position in publish order: failed entries go back in this order. */
  readonly seq: number;
  readonly decision: StampedDecision;
  readonly subject: string;
  /** Serialised once, however often it is sent. */
  readonly payload: string;
  resolve(ack: PubAck): void;
  reject(err: unknown): void;
}

/**
 * Publishes Decisions to JetStream without a round trip each: up to `maxInFlight` publishes are
 * on the wire at once, written in call order on one connection, so the server stores each
 * subject's Decisions in the order they were published. Each publish resolves once the stream
 * acknowledged it (a duplicate of one stored before counts as stored).
 *
 * A failure (a timeout, no responders, a lost connection, a stream that cannot store now) pauses
 * the pipeline: nothing new is sent, the publishes still on the wire settle, and the failed ones
 * go back to the head of the queue in their original order. Then the first alone is sent again,
 * with backoff, until it is stored; the rest follow. A publish the server stored before its ack
 * was lost is dropped as a duplicate of its id, so nothing is stored twice, nothing is reordered
 * by a retry, and an outage of any length costs one message per backoff, not a flood of retries.
 * Only an answer that can never change (the server refuses the message itself, HTTP 400) rejects
 * that one publish, without pausing the rest; and once `signal` is aborted a failure rejects every
 * waiting publish with a TransientError instead of retrying.
 */
export class DecisionPipeline {
  private readonly maxInFlight: number;
  private readonly queue: Entry[] = [];
  private readonly failed: Entry[] = [];
  private inFlight = 0;
  private paused = false;
  /** After a pause, only the head is sent until it is stored. */
  private probing = false;
  private attempt = 0;
  private nextSeq = 0;
  private readonly idle: Array<() => void> = [];
  private pumpQueued = false;

  constructor(
    private readonly js: Pick<JetStreamClient, "publish">,
    private readonly options: DecisionPipelineOptions = {},
  ) {
    this.maxInFlight = options.maxInFlight ?? 256;
    if (!(this.maxInFlight >= 1)) throw new RangeError("maxInFlight must be at least 1");
  }

  /** Publishes one Decision (stamped, so validated once); resolves when the stream has it. */
  publish(decision: StampedDecision): Promise<PubAck> {
    return new Promise<PubAck>((resolve, reject) => {
      this.queue.push({
        seq: this.nextSeq++,
        decision,
        subject: subjects.decision(decision.tenant, decision.kind, decision.action),
        payload: JSON.stringify(decision),
        resolve,
        reject,
      });
      // Sent at the end of the turn, with every other Decision of the turn: one socket write for
      // all of them instead of one per Decision (see TurnBatch, which the consumers' acks use).
      if (!this.pumpQueued) {
        this.pumpQueued = true;
        setImmediate(() => {
          this.pumpQueued = false;
          this.pump();
        });
      }
    });
  }

  /** Decisions accepted and not yet stored (queued, on the wire, or waiting for a retry). */
  get pending(): number {
    return this.queue.length + this.inFlight + this.failed.length;
  }

  /** Resolves once every Decision published so far is stored or rejected. */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    const limit = this.probing ? 1 : this.maxInFlight;
    while (!this.paused && this.inFlight < limit) {
      const entry = this.queue.shift();
      if (entry === undefined) break;
      this.send(entry);
    }
    if (this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  private send(entry: Entry): void {
    this.inFlight++;
    this.js
      .publish(entry.subject, entry.payload, {
        msgID: entry.decision.id,
        timeout: this.options.ackTimeoutMs ?? 5_000,
      })
      .then(
        (ack) => {
          this.inFlight--;
          this.probing = false;
          this.attempt = 0;
          entry.resolve(ack);
        },
        (err: unknown) => {
          this.inFlight--;
          if (isRefusedForGood(err)) {
            entry.reject(err);
          } else {
            this.failed.push(entry);
            if (!this.paused) this.options.onRetry?.(err, this.attempt + 1, this.pending);
            this.paused = true;
          }
        },
      )
      .finally(() => {
        if (this.paused) this.resumeWhenSettled();
        else this.pump();
      });
  }

  // Runs when a publish settles during a pause: once none is on the wire, the failed go back first.
  private resumeWhenSettled(): void {
    if (this.inFlight > 0 || this.failed.length === 0) return;
    const retry = this.failed.splice(0).sort((a, b) => a.seq - b.seq);
    this.queue.unshift(...retry);
    if (this.options.signal?.aborted) {
      this.rejectAll(retry[0]?.decision.id);
      return;
    }
    const delay = backoffDelay(this.attempt++, this.options.baseMs ?? 250, this.options.maxMs ?? 5_000);
    const wait = this.options.sleep ?? sleep;
    void wait(delay, this.options.signal).then(() => {
      if (this.options.signal?.aborted) {
        this.rejectAll(this.queue[0]?.decision.id);
        return;
      }
      this.paused = false;
      this.probing = true;
      this.pump();
    });
  }

  private rejectAll(first: string | undefined): void {
    const err = new TransientError(`publishing Decision ${first ?? ""} failed at shutdown; it stays unpublished`, {
      code: "PublishFailed",
    });
    for (const entry of this.queue.splice(0)) entry.reject(err);
    this.paused = false;
    this.pump();
  }
}

// The server refused the message itself (too large, a bad header): sending it again cannot help.
function isRefusedForGood(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.status === 400;
}
