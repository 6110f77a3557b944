import {
  JetStreamApiCodes,
  JetStreamApiError,
  StorageType,
  type JetStreamClient,
  type StreamConfig,
  type StreamInfo,
} from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { nanos } from "@nats-io/transport-node";
import { TerminalError } from "@tenantplane/runtime";

/** Stream metadata key recording the partition count a bucket was declared for. */
export const PARTITIONS_METADATA_KEY = "tenantplane.io/partitions";

/** What the lease bucket must look like. */
export interface LeaseBucketSpec {
  name: string;
  ttlMs: number;
  markerTtlMs: number;
  replicas: number;
  partitions: number;
}

/** An open lease bucket and when its stream was created (server wall clock, epoch ms). */
export interface LeaseBucket {
  kv: KV;
  /**
   * Identifies this incarnation of the bucket: a deleted and re-created bucket restarts its
   * sequence numbers, so revisions from before mean nothing in it.
   */
  createdAt: number;
  /** The stream's creation timestamp exactly as the server reports it: the incarnation's identity. */
  incarnation: string;
}

/**
 * Declares the lease bucket idempotently and opens it. A missing bucket is created; an existing
 * one gets this spec's max age, history 1 and delete markers, but keeps a higher replica count
 * than asked for (replicas are never reduced from here). A bucket declared for another partition
 * count is refused: two workers hashing tenants differently would sync one tenant twice.
 */
export async function ensureLeaseBucket(js: JetStreamClient, spec: LeaseBucketSpec): Promise<LeaseBucket> {
  const jsm = await js.jetstreamManager();
  const kvm = new Kvm(js);
  const stream = `KV_${spec.name}`;
  for (let attempt = 0; ; attempt++) {
    const info = await streamInfo(js, stream);
    if (info === undefined) {
      try {
        await kvm.create(spec.name, {
          history: 1,
          ttl: spec.ttlMs,
          markerTTL: spec.markerTtlMs,
          replicas: spec.replicas,
          storage: StorageType.File,
          description: "tenantplane partition leases and worker membership",
          metadata: { [PARTITIONS_METADATA_KEY]: String(spec.partitions) },
        });
      } catch (err) {
        // Another worker created it with a different config in between: read it back and converge.
        if (attempt >= 2) throw err;
      }
      continue;
    }
    const declared = info.config.metadata?.[PARTITIONS_METADATA_KEY];
    if (declared !== undefined && declared !== String(spec.partitions)) {
      throw new TerminalError(
        `KV bucket ${spec.name} is declared for ${declared} partitions but this worker uses ${spec.partitions}: ` +
          `run every worker with the same partition count, or point this one at another bucket`,
        { code: "PartitionCountMismatch" },
      );
    }
    const wanted = desiredConfig(info.config, spec);
    if (wanted !== undefined) await jsm.streams.update(stream, wanted);
    return { kv: await kvm.open(spec.name), createdAt: Date.parse(info.created), incarnation: info.created };
  }
}

/** The updated stream config, or undefined when the stored one already matches. */
export function desiredConfig(current: StreamConfig, spec: LeaseBucketSpec): StreamConfig | undefined {
  const next: StreamConfig = {
    ...current,
    max_age: nanos(spec.ttlMs),
    // The server refuses a duplicate window longer than the max age (a bucket made with a long TTL has one).
    duplicate_window: Math.min(current.duplicate_window ?? nanos(spec.ttlMs), nanos(spec.ttlMs)),
    max_msgs_per_subject: 1,
    allow_msg_ttl: true,
    subject_delete_marker_ttl: nanos(spec.markerTtlMs),
    num_replicas: Math.max(current.num_replicas ?? 1, spec.replicas),
    metadata: { ...current.metadata, [PARTITIONS_METADATA_KEY]: String(spec.partitions) },
  };
  const same =
    current.max_age === next.max_age &&
    current.duplicate_window === next.duplicate_window &&
    current.max_msgs_per_subject === next.max_msgs_per_subject &&
    current.allow_msg_ttl === true &&
    current.subject_delete_marker_ttl === next.subject_delete_marker_ttl &&
    current.num_replicas === next.num_replicas &&
    current.metadata?.[PARTITIONS_METADATA_KEY] === String(spec.partitions);
  return same ? undefined : next;
}

async function streamInfo(js: JetStreamClient, stream: string): Promise<StreamInfo | undefined> {
  const jsm = await js.jetstreamManager();
  try {
    return await jsm.streams.info(stream);
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return undefined;
    throw err;
  }
}

/** True when a write failed its compare-and-set (the key is not at the revision we expected). */
export function isCasConflict(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}
