import type { StreamConfig } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { PARTITIONS_METADATA_KEY, desiredConfig } from "./bucket.js";

const spec = { name: "leases", ttlMs: 6_000, markerTtlMs: 6_000, replicas: 1, partitions: 16 };
const stored = (over: Partial<StreamConfig> = {}) =>
  ({
    name: "KV_leases",
    max_age: nanos(6_000),
    duplicate_window: nanos(6_000),
    max_msgs_per_subject: 1,
    allow_msg_ttl: true,
    subject_delete_marker_ttl: nanos(6_000),
    num_replicas: 1,
    metadata: { [PARTITIONS_METADATA_KEY]: "16" },
    ...over,
  }) as StreamConfig;

describe("desiredConfig", () => {
  it("leaves a bucket that already matches alone", () => {
    expect(desiredConfig(stored(), spec)).toBeUndefined();
  });

  it("never lowers the replica count of an existing bucket", () => {
    expect(desiredConfig(stored({ num_replicas: 3 }), spec)).toBeUndefined();
    expect(desiredConfig(stored({ num_replicas: 1 }), { ...spec, replicas: 3 })?.num_replicas).toBe(3);
  });

  it("restores history 1, the max age and delete markers, keeping unrelated settings and metadata", () => {
    const next = desiredConfig(
      stored({
        max_msgs_per_subject: 5,
        max_age: nanos(60_000),
        duplicate_window: nanos(120_000),
        allow_msg_ttl: false,
        metadata: { owner: "ops" },
      }),
      spec,
    );
    expect(next).toMatchObject({
      name: "KV_leases",
      max_msgs_per_subject: 1,
      max_age: nanos(6_000),
      duplicate_window: nanos(6_000),
      allow_msg_ttl: true,
      subject_delete_marker_ttl: nanos(6_000),
      metadata: { owner: "ops", [PARTITIONS_METADATA_KEY]: "16" },
    });
  });
});
