import { describe, expect, it } from "vitest";
import {
  compareVersions,
  connectedAfter,
  loggableServers,
  natsConnectionOptions,
  NatsOptionsError,
  natsServers,
  natsTlsOptions,
} from "./connection.js";

describe("natsServers", () => {
  it("splits a comma-separated cluster list so any member can be reached", () => {
    expect(natsServers("nats://a:4222, nats://b:4222,,nats://c:4222")).toEqual([
      "nats://a:4222",
      "nats://b:4222",
      "nats://c:4222",
    ]);
    expect(natsServers("nats://one:4222")).toEqual(["nats://one:4222"]);
  });
});

describe("natsTlsOptions", () => {
  const base = { url: "nats://a:4222", name: "t" };

  it("leaves plain connections plain", () => {
    expect(natsTlsOptions(base)).toBeUndefined();
  });

  it("requires TLS verified by the system CAs when only asked for TLS", () => {
    expect(natsTlsOptions({ ...base, tls: true })).toEqual({});
  });

  it("uses the CA file and the client certificate, never turning verification off", () => {
    const tls = natsTlsOptions({ ...base, tlsCaFile: "/ca.crt", tlsCertFile: "/tls.crt", tlsKeyFile: "/tls.key" });
    expect(tls).toEqual({ caFile: "/ca.crt", certFile: "/tls.crt", keyFile: "/tls.key" });
    expect(tls).not.toHaveProperty("rejectUnauthorized");
  });

  it("refuses a certificate without its key, naming both variables", () => {
    expect(() => natsTlsOptions({ ...base, tlsCertFile: "/tls.crt" })).toThrow(NatsOptionsError);
    expect(() => natsTlsOptions({ ...base, tlsKeyFile: "/tls.key" })).toThrow(
      /NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE/,
    );
  });

  it("passes the server list and TLS through to the client options", async () => {
    const options = await natsConnectionOptions({ ...base, url: "nats://a:4222,nats://b:4222", tlsCaFile: "/ca" });
    expect(options.servers).toEqual(["nats://a:4222", "nats://b:4222"]);
    expect(options.tls).toEqual({ caFile: "/ca" });
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
