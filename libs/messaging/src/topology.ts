import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { subjects } from "./subjects.js";

/** Durable consumer names, one per consuming service. */
export const consumers = {
  provisioner: { stream: subjects.tenantsStream, durable: "provisioner", filter: subjects.tenantsAll },
  isolation: { stream: subjects.tenantsStream, durable: "isolation", filter: subjects.tenantsAll },
  syncWorker: { stream: subjects.tenantsStream, durable: "sync-worker", filter: subjects.tenantsAll },
  recorder: { stream: subjects.decisionsStream, durable: "recorder", filter: subjects.decisionsAll },
} as const;
export type ConsumerName = keyof typeof consumers;

// Redelivery schedule for messages that are neither acked nor nak'ed in time
// (a crashed handler). Deliveries are unlimited: a tenant that waits for its pod
// keeps its message until it converges, poison messages are termed by the
// settlement policy instead, and max_msgs_per_subject bounds what one tenant
// can keep pending.
const BACKOFF_MS = [2_000, 5_000, 15_000, 30_000, 60_000];
const MAX_DELIVER = -1;
const ACK_WAIT_MS = BACKOFF_MS[0]! * 15;

/**
 * TENANTS holds keys, not snapshots, so only the newest few per tenant matter:
 * an older key for the same tenant says nothing a newer one does not.
 */
export const tenantsStreamConfig: Partial<StreamConfig> & { name: string } = {
  name: subjects.tenantsStream,
  subjects: [subjects.tenantsAll],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  discard: DiscardPolicy.Old,
  max_msgs_per_subject: 16,
  max_age: nanos(24 * 60 * 60 * 1000),
  duplicate_window: nanos(60_000),
  num_replicas: 1,
};

/** DECISIONS is the public audit trail: bounded by age and bytes, readable by anyone. */
export const decisionsStreamConfig: Partial<StreamConfig> & { name: string } = {
  name: subjects.decisionsStream,
  subjects: [subjects.decisionsAll],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  discard: DiscardPolicy.Old,
  max_age: nanos(7 * 24 * 60 * 60 * 1000),
  max_bytes: 256 * 1024 * 1024,
  duplicate_window: nanos(120_000),
  num_replicas: 1,
};

function consumerConfig(name: ConsumerName): Partial<ConsumerConfig> {
  const c = consumers[name];
  return {
    durable_name: c.durable,
    filter_subject: c.filter,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ACK_WAIT_MS),
    max_deliver: MAX_DELIVER,
    backoff: BACKOFF_MS.map(nanos),
    max_ack_pending: 256,
  };
}

/**
 * Declares both streams and the named consumers, creating or updating them to
 * match this file. Every service runs it at start; running it twice is a no-op.
 */
export async function ensureTopology(jsm: JetStreamManager, consumerNames: readonly ConsumerName[]): Promise<void> {
  for (const config of [tenantsStreamConfig, decisionsStreamConfig]) {
    await ensureStream(jsm, config);
  }
  for (const name of consumerNames) {
    const c = consumers[name];
    const config = consumerConfig(name);
    try {
      await jsm.consumers.info(c.stream, c.durable);
      await jsm.consumers.update(c.stream, c.durable, config);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await jsm.consumers.add(c.stream, config);
    }
  }
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  const name = config.name;
  try {
    await jsm.streams.info(name);
    await jsm.streams.update(name, config);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.streams.add(config);
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.status === 404;
}
