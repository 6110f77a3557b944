import { describe, expect, it } from "vitest";
import { heartbeatInterval } from "./consumer.js";
import { ACK_WAIT_MS, consumerConfig, consumers, streamSettingsFromEnv } from "./topology.js";

describe("consumerConfig", () => {
  it("sets no backoff, which the server would let override ack_wait", () => {
    for (const name of Object.keys(consumers) as (keyof typeof consumers)[]) {
      const config = consumerConfig(name);
      expect(config.backoff).toBeUndefined();
      expect(config.ack_wait).toBe(ACK_WAIT_MS * 1_000_000);
      expect(config.description).toBeTruthy();
    }
  });

  it("heartbeats three times per ack_wait", () => {
    expect(heartbeatInterval(ACK_WAIT_MS)).toBe(10_000);
    expect(heartbeatInterval(2_000)).toBe(666);
  });
});

describe("streamSettingsFromEnv", () => {
  it("leaves unset variables unset, so they count as not configured", () => {
    expect(streamSettingsFromEnv({})).toEqual({
      replicas: undefined,
      tenants: { max_age: undefined },
      decisions: { max_age: undefined, max_bytes: undefined },
    });
    expect(streamSettingsFromEnv({ NATS_STREAM_REPLICAS: 3, NATS_DECISIONS_MAX_AGE_SECONDS: 60 })).toMatchObject({
      replicas: 3,
      decisions: { max_age: 60_000_000_000 },
    });
  });
});
