import { describe, expect, it } from "vitest";
import { compareVersions, connectedAfter, loggableServers, natsServers } from "./connection.js";

describe("natsServers", () => {
  it("splits a cluster's member list so the client can use every member", () => {
    expect(natsServers("nats://a:4222,nats://b:4222, nats://c:4222")).toEqual([
      "nats://a:4222",
      "nats://b:4222",
      "nats://c:4222",
    ]);
  });

  it("keeps a single URL as it is and ignores empty entries", () => {
    expect(natsServers("nats://nats:4222")).toEqual(["nats://nats:4222"]);
    expect(natsServers("nats://a:4222,,")).toEqual(["nats://a:4222"]);
  });
});

describe("loggableServers", () => {
  it("drops credentials a server URL carries", () => {
    const logged = loggableServers("nats://admin:s3cret@a:4222,tls://token@b:4222,c:4222").join(" ");
    expect(logged).toBe("nats://a:4222 tls://b:4222 nats://c:4222");
    expect(logged).not.toMatch(/s3cret|token|admin/);
  });
});

describe("connectedAfter", () => {
  it("goes down on a lost socket or close and up again only on reconnect", () => {
    for (const type of ["disconnect", "reconnecting", "staleConnection", "forceReconnect", "close"] as const) {
      expect(connectedAfter(true, { type })).toBe(false);
    }
    expect(connectedAfter(false, { type: "reconnect" })).toBe(true);
  });

  it("leaves the state alone on events that say nothing about the socket", () => {
    for (const type of ["update", "ldm", "error", "ping", "slowConsumer"] as const) {
      expect(connectedAfter(true, { type })).toBe(true);
      expect(connectedAfter(false, { type })).toBe(false);
    }
  });
});

describe("compareVersions", () => {
  it("compares numerically and ignores pre-release suffixes", () => {
    expect(compareVersions("2.10.9", "2.11.0")).toBe(-1);
    expect(compareVersions("2.14.0-beta.1", "2.14.0")).toBe(0);
  });
});
