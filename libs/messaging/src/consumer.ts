import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { backoffDelay, onAbort, sleep, TerminalError, type Logger, type ServiceMetrics } from "@tenantplane/runtime";
import type * as z from "zod";
import { Freshness } from "./freshness.js";
import { KeyedQueue } from "./keyed-queue.js";
import { settlementFor } from "./settlement.js";
import { ACK_WAIT_MS, consumers, type ConsumerName } from "./topology.js";
import { TurnBatch } from "./turn-batch.js";

/** Per-message context handed to a handler. */
export interface MessageContext {
  readonly subject: string;
  readonly deliveryCount: number;
  readonly logger: Logger;
}

/** A message that was terminated instead of processed, and why. */
export interface Rejection<T> {
  readonly subject: string;
  readonly reason: string;
  /** The parsed message when the payload was valid but handling failed terminally. */
  readonly message?: T;
}

/** A durable consumer by stream and name, for consumers outside the built-in topology. */
export interface ConsumerRef {
  readonly stream: string;
  readonly durable: string;
}

/** Options of runConsumer. */
export interface ConsumerOptions<S extends z.ZodType> {
  js: JetStreamClient;
  consumer: ConsumerName | ConsumerRef;
  schema: S;
  /** Messages with the same key are handled one at a time, in order. */
  key: (message: z.infer<S>) => string;
  /** Re-reads state and converges; throws TransientError/TerminalError (or anything, normalised). */
  handle: (message: z.infer<S>, ctx: MessageContext) => Promise<void>;
  /** Called after a message is termed, to publish a Decision or Warning saying why. Never throws into the loop. */
  onRejected?: (rejection: Rejection<z.infer<S>>) => Promise<void>;
  logger: Logger;
  metrics: ServiceMetrics;
  signal: AbortSignal;
  concurrency?: number;
  /**
   * Ack an older message unhandled once a newer one with the same key was seen. Right
   * for keys (tenant changes), wrong for facts (Decisions), so it is off unless asked for.
   */
  supersede?: boolean;
  /** Called with true once consuming, false while re-subscribing. */
  onReady?: (ready: boolean) => void;
  /** Work the service raises itself (a watch event), handled in its key's turn like a message. */
  local?: LocalWork<z.infer<S>>;
}

/**
 * Messages a service gives itself, e.g. from a watch event, handled by runConsumer in the
 * key's turn beside the stream's messages. Nothing is acked: a failed local pass is retried
 * a few times with the settlement's delay, then left to the next message or resync. A message
 * whose key already has local work waiting is dropped, so a burst of events costs one pass.
 */
export class LocalWork<T> {
  private sink: ((message: T) => void) | undefined;
  private readonly early: T[] = [];

  /** Queues `message`; before the consumer runs, it is held until it does. */
  fire(message: T): void {
    if (this.sink) this.sink(message);
    else this.early.push(message);
  }

  /** @internal Connects the consumer that handles the work. */
  attach(sink: (message: T) => void): void {
    this.sink = sink;
    for (const message of this.early.splice(0)) sink(message);
  }
}

const LOCAL_RETRIES = 5;

/** How often a held message is reported as in progress: three times per ack_wait, so one lost heartbeat costs nothing. */
export function heartbeatInterval(ackWaitMs: number): number {
  return Math.max(100, Math.floor(ackWaitMs / 3));
}

/**
 * Pulls from a durable consumer until `signal` aborts, then lets in-flight
 * handlers finish. Every message is zod-parsed and settled by settlementFor.
 * From delivery until settlement, whether queued behind its key or running, a
 * message is kept alive with `working()` at heartbeatInterval(ack_wait as the server
 * stored it), so a slow handler is never redelivered under itself; the server's
 * max_ack_pending bounds how many are held. Losing the consumer (NATS restart,
 * deleted consumer) re-subscribes with backoff; held messages keep their handlers.
 */
export async function runConsumer<S extends z.ZodType>(opts: ConsumerOptions<S>): Promise<void> {
  const { stream, durable } = typeof opts.consumer === "string" ? consumers[opts.consumer] : opts.consumer;
  const concurrency = opts.concurrency ?? 4;
  const queue = new KeyedQueue(concurrency);
  const freshness = new Freshness();
  const inFlight = new Set<Promise<void>>();
  const held = new Set<JsMsg>();
  // Settlements go out once per turn, many in one write (see TurnBatch).
  const settlements = new TurnBatch();
  const log = opts.logger.child({ consumer: durable });
  let attempt = 0;
  let heartbeat: NodeJS.Timeout | undefined;
  const localWaiting = new Set<string>();
  const localTimers = new Set<NodeJS.Timeout>();
  opts.local?.attach((message) => runLocal(message, 1));

  while (!opts.signal.aborted) {
    try {
      const consumer = await opts.js.consumers.get(stream, durable);
      const ackWaitNanos = (await consumer.info(true)).config.ack_wait;
      const ackWaitMs = ackWaitNanos ? ackWaitNanos / 1_000_000 : ACK_WAIT_MS;
      clearInterval(heartbeat);
      heartbeat = setInterval(() => {
        for (const m of held) m.working();
      }, heartbeatInterval(ackWaitMs));
      const messages = await consumer.consume({ max_messages: concurrency * 2 });
      // An abort while consume() was pending stops the messages at once.
      const unlisten = onAbort(opts.signal, () => messages.stop());
      opts.onReady?.(true);
      attempt = 0;
      try {
        for await (const m of messages) {
          held.add(m);
          const task = dispatch(m).finally(() => held.delete(m));
          inFlight.add(task);
          void task.finally(() => inFlight.delete(task));
        }
      } finally {
        unlisten();
      }
    } catch (err) {
      if (opts.signal.aborted) break;
      opts.onReady?.(false);
      const delay = backoffDelay(attempt++, 500, 15_000);
      log.warn({ err, delayMs: delay }, "consumer lost; re-subscribing");
      await sleep(delay, opts.signal);
    }
  }
  opts.onReady?.(false);
  for (const timer of localTimers) clearTimeout(timer);
  await Promise.allSettled([...inFlight]);
  await queue.idle();
  settlements.flush();
  clearInterval(heartbeat);

  function runLocal(message: z.infer<S>, attemptNo: number): void {
    if (opts.signal.aborted) return;
    const key = opts.key(message);
    if (localWaiting.has(key)) return;
    localWaiting.add(key);
    const task = queue.run(key, async () => {
      localWaiting.delete(key);
      const logger = log.child({ subject: "local", key });
      try {
        await opts.handle(message, { subject: "local", deliveryCount: attemptNo, logger });
        opts.metrics.messages.inc({ outcome: "local" });
      } catch (err) {
        const settlement = settlementFor(err, attemptNo);
        opts.metrics.messages.inc({ outcome: "local-failed" });
        if (settlement.outcome !== "nak" || attemptNo >= LOCAL_RETRIES) {
          logger.info(
            { reason: settlementReason(settlement) },
            "local pass failed; the next message or resync retries",
          );
          return;
        }
        const timer = setTimeout(() => {
          localTimers.delete(timer);
          runLocal(message, attemptNo + 1);
        }, settlement.delayMs);
        localTimers.add(timer);
      }
    });
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  }

  async function dispatch(m: JsMsg): Promise<void> {
    let parsed: z.infer<S>;
    try {
      parsed = opts.schema.parse(m.json());
    } catch (err) {
      const reason = `invalid message on ${m.subject}: ${summarise(err)}`;
      settlements.add(() => m.term(reason));
      opts.metrics.messages.inc({ outcome: "term" });
      log.warn({ subject: m.subject, reason }, "message rejected");
      await reject({ subject: m.subject, reason });
      return;
    }
    const key = opts.key(parsed);
    await queue.run(key, async () => {
      // Checked in the key's turn, so a newer message that arrived while this one waited counts.
      if (opts.supersede && !freshness.observe(key, m.seq)) {
        settlements.add(() => m.ack());
        opts.metrics.messages.inc({ outcome: "superseded" });
        return;
      }
      await handleOne(m, parsed);
    });
  }

  async function handleOne(m: JsMsg, message: z.infer<S>): Promise<void> {
    const ctx: MessageContext = {
      subject: m.subject,
      deliveryCount: m.info.deliveryCount,
      logger: log.child({ subject: m.subject, key: opts.key(message) }),
    };
    const started = performance.now();
    let error: unknown;
    try {
      await opts.handle(message, ctx);
    } catch (err) {
      error = err ?? new TerminalError("handler threw nothing");
    }
    const settlement = settlementFor(error, ctx.deliveryCount);
    opts.metrics.messages.inc({ outcome: settlement.outcome });
    opts.metrics.handleSeconds.observe({ outcome: settlement.outcome }, (performance.now() - started) / 1000);
    switch (settlement.outcome) {
      case "ack":
        settlements.add(() => m.ack());
        break;
      case "nak":
        // Waiting for a pod or an address is routine; a failure worth retrying is news.
        ctx.logger[settlement.waiting ? "debug" : "info"](
          { delayMs: settlement.delayMs, reason: settlement.reason },
          "retrying later",
        );
        settlements.add(() => m.nak(settlement.delayMs));
        break;
      case "term":
        ctx.logger.warn({ reason: settlement.reason }, "giving up on message");
        settlements.add(() => m.term(settlement.reason));
        await reject({ subject: m.subject, reason: settlement.reason, message });
        break;
    }
  }

  async function reject(rejection: Rejection<z.infer<S>>): Promise<void> {
    try {
      await opts.onRejected?.(rejection);
    } catch (err) {
      log.error({ err }, "reporting a rejected message failed");
    }
  }
}

function settlementReason(settlement: ReturnType<typeof settlementFor>): string {
  return settlement.outcome === "ack" ? "" : settlement.reason;
}

function summarise(err: unknown): string {
  const issues = (err as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues;
  if (Array.isArray(issues) && issues.length > 0) {
    return issues.map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`).join("; ");
  }
  return err instanceof Error ? err.message : String(err);
}
