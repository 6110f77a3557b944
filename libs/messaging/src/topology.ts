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
import * as z from "zod";
import { bulkheadProblem, streamUpdate, type Bulkhead, type StreamLimits } from "./stream-settings.js";
import { subjects } from "./subjects.js";

/** Durable consumer names, one per consuming service, with what each is for. */
export const consumers = {
  provisioner: {
    stream: subjects.tenantsStream,
    durable: "provisioner",
    filter: subjects.tenantsAll,
    description: "tenantplane provisioner: converges each tenant's k3s control plane and kubeconfig",
  },
  isolation: {
    stream: subjects.tenantsStream,
    durable: "isolation",
    filter: subjects.tenantsAll,
    description: "tenantplane isolation: applies each tenant's Pod Security, quota and NetworkPolicies",
  },
  syncWorker: {
    stream: subjects.tenantsStream,
    durable: "sync-worker",
    filter: subjects.tenantsAll,
    description: "tenantplane sync worker: syncs tenant objects to the host",
  },
  recorder: {
    stream: subjects.decisionsStream,
    durable: "recorder",
    filter: subjects.decisionsAll,
    description: "tenantplane recorder: turns every Decision into a Kubernetes Event on its TenantCluster",
  },
} as const;
export type ConsumerName = keyof typeof consumers;

/**
 * How long the server waits for an ack before redelivering. Consumers carry no
 * `backoff`: the server would replace ack_wait with backoff[0]. Handlers that take
 * longer send `working()` well inside this (see runConsumer), and retries are
 * explicit nak(delay) from settlementFor.
 */
export const ACK_WAIT_MS = 30_000;

/**
 * Deliveries are unlimited at the server: a tenant waiting for its pod keeps its
 * message until it converges. Work is still retried a bounded number of times where
 * that matters: settlementFor terms an unclassified error after
 * UNCLASSIFIED_RETRY_LIMIT deliveries, and terminal errors at once.
 */
export const MAX_DELIVER = -1;

/** Stream replicas and limits as configured; anything unset keeps the built-in default on creation only. */
export interface StreamSettings {
  /** NATS_STREAM_REPLICAS: replicas of both streams. */
  replicas?: number | undefined;
  tenants?: StreamLimits | undefined;
  decisions?: StreamLimits | undefined;
}

const positiveInt = (what: string) =>
  z.coerce
    .number({ error: `must be ${what}` })
    .int(`must be ${what}`)
    .positive(`must be ${what}`)
    .optional();

/**
 * The environment variables that configure the streams. Only variables that are
 * set count as explicit: a service raises an existing stream's setting only when
 * told to, and never lowers one.
 */
export const StreamEnvSchema = z.object({
  NATS_STREAM_REPLICAS: z.coerce
    .number({ error: "must be 1, 3 or 5" })
    .int("must be 1, 3 or 5")
    .min(1, "must be between 1 and 5")
    .max(5, "must be between 1 and 5")
    .optional(),
  NATS_TENANTS_MAX_AGE_SECONDS: positiveInt("a number of seconds"),
  NATS_DECISIONS_MAX_AGE_SECONDS: positiveInt("a number of seconds"),
  NATS_DECISIONS_MAX_BYTES: positiveInt("a number of bytes"),
  NATS_DECISIONS_MAX_MSGS_PER_SUBJECT: positiveInt("a number of messages"),
});

/** Turns parsed StreamEnvSchema variables into StreamSettings. */
export function streamSettingsFromEnv(env: z.infer<typeof StreamEnvSchema>): StreamSettings {
  const seconds = (s: number | undefined) => (s === undefined ? undefined : nanos(s * 1000));
  return {
    replicas: env.NATS_STREAM_REPLICAS,
    tenants: { max_age: seconds(env.NATS_TENANTS_MAX_AGE_SECONDS) },
    decisions: {
      max_age: seconds(env.NATS_DECISIONS_MAX_AGE_SECONDS),
      max_bytes: env.NATS_DECISIONS_MAX_BYTES,
      max_msgs_per_subject: env.NATS_DECISIONS_MAX_MSGS_PER_SUBJECT,
    },
  };
}

/**
 * TENANTS holds keys, not snapshots, so only the newest few per tenant matter:
 * an older key for the same tenant says nothing a newer one does not.
 */
export const tenantsStreamConfig: Partial<StreamConfig> & { name: string } = {
  name: subjects.tenantsStream,
  description: "tenantplane: tenant-change keys from the watcher (tenantplane.tenants.<tenant>.changed)",
  subjects: [subjects.tenantsAll],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  discard: DiscardPolicy.Old,
  max_msgs_per_subject: 16,
  max_age: nanos(24 * 60 * 60 * 1000),
  duplicate_window: nanos(60_000),
  num_replicas: 1,
};

/**
 * The newest Decisions DECISIONS keeps per subject, i.e. per tenant, kind and action: a tenant
 * that floods (a Skip for each of 100,000 refused objects) replaces its own oldest Decisions of
 * that kind and action, never another tenant's, nor its own of another kind or action. A tenant
 * holds at most 6 kinds x 5 actions x this many Decisions (a few KiB each at most, reasons
 * bounded to 1 KiB), which sizes `max_bytes` for the tenants a stream serves.
 */
export const DECISIONS_PER_SUBJECT = 1000;

/** Limits DECISIONS must have (set on an older stream too), so one tenant never removes another's Decisions. */
const DECISIONS_BULKHEADS: readonly Bulkhead[] = ["max_msgs_per_subject"];

/**
 * DECISIONS is the public audit trail: bounded by age and bytes, and per tenant by DECISIONS_PER_SUBJECT, readable by anyone.
 * Its duplicate window drops a republished Decision (same id) within ten minutes: a service
 * that finds a recorded Decision it has not published itself (a crash or a restart came
 * between the write and the publish) publishes it again inside that window, read back from
 * the server; the recorder deduplicates later repeats by id.
 */
export const decisionsStreamConfig: Partial<StreamConfig> & { name: string } = {
  name: subjects.decisionsStream,
  description:
    "tenantplane: Decisions, the public record of every host object tenantplane created, updated, deleted or skipped and why",
  subjects: [subjects.decisionsAll],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  discard: DiscardPolicy.Old,
  max_age: nanos(7 * 24 * 60 * 60 * 1000),
  max_bytes: 256 * 1024 * 1024,
  max_msgs_per_subject: DECISIONS_PER_SUBJECT,
  duplicate_window: nanos(10 * 60_000),
  num_replicas: 1,
};

/** The consumer settings tenantplane owns; anything else an operator set on the consumer is kept. */
export function consumerConfig(name: ConsumerName): Partial<ConsumerConfig> {
  const c = consumers[name];
  return {
    durable_name: c.durable,
    description: c.description,
    filter_subject: c.filter,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ACK_WAIT_MS),
    max_deliver: MAX_DELIVER,
    max_ack_pending: 256,
  };
}

/**
 * Declares both streams and the named consumers. A missing stream is created from
 * the built-in config with the configured replicas and limits; an existing one only
 * gets what is missing (its subject, a description) and the settings it was
 * explicitly configured to raise: an operator's replicas and limits are never lowered. The
 * exception is DECISIONS' per-subject limit: a stream without one gets it, and the limit the
 * server stored is checked (an error names what is missing), so tenants stay apart.
 * Consumers get exactly tenantplane's redelivery settings (no `backoff`).
 * Every service runs it at start; running it twice is a no-op.
 */
export async function ensureTopology(
  jsm: JetStreamManager,
  consumerNames: readonly ConsumerName[],
  settings: StreamSettings = {},
): Promise<StoredStreams> {
  const tenants = await ensureStream(jsm, tenantsStreamConfig, { replicas: settings.replicas, ...settings.tenants });
  const decisions = await ensureStream(
    jsm,
    decisionsStreamConfig,
    { replicas: settings.replicas, ...settings.decisions },
    DECISIONS_BULKHEADS,
  );
  const problem = bulkheadProblem(decisions, DECISIONS_BULKHEADS);
  if (problem !== undefined) throw new Error(problem);
  for (const name of consumerNames) {
    const c = consumers[name];
    const ours = consumerConfig(name);
    let existing: ConsumerConfig | undefined;
    try {
      existing = (await jsm.consumers.info(c.stream, c.durable)).config;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!existing) {
      await jsm.consumers.add(c.stream, ours);
    } else if (consumerNeedsUpdate(existing, ours)) {
      // The client merges this into the stored config; an undefined `backoff` is left
      // out of the request, which removes a schedule set by an earlier version.
      const { durable_name: _name, deliver_policy: _fixed, ...changeable } = ours;
      await jsm.consumers.update(c.stream, c.durable, { ...changeable, backoff: undefined } as never);
    }
  }
  return { tenants, decisions };
}

function consumerNeedsUpdate(existing: ConsumerConfig, ours: Partial<ConsumerConfig>): boolean {
  if (existing.backoff && existing.backoff.length > 0) return true;
  return Object.entries(ours).some(([k, v]) => (existing as unknown as Record<string, unknown>)[k] !== v);
}

/** Both streams' configurations as the server stored them, after ensureTopology. */
export interface StoredStreams {
  tenants: StreamConfig;
  decisions: StreamConfig;
}

// Returns the configuration the server stored, read from its reply rather than assumed.
async function ensureStream(
  jsm: JetStreamManager,
  builtIn: Partial<StreamConfig> & { name: string },
  explicit: StreamLimits & { replicas?: number | undefined },
  bulkheads: readonly Bulkhead[] = [],
): Promise<StreamConfig> {
  const { replicas, ...limits } = explicit;
  let existing: StreamConfig | undefined;
  try {
    existing = (await jsm.streams.info(builtIn.name)).config;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!existing) {
    const defined = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
    return (await jsm.streams.add({ ...builtIn, ...defined, num_replicas: replicas ?? builtIn.num_replicas ?? 1 }))
      .config;
  }
  const update = streamUpdate(existing, builtIn, { ...limits, num_replicas: replicas }, bulkheads);
  return update ? (await jsm.streams.update(builtIn.name, update)).config : existing;
}

function isNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.status === 404;
}
