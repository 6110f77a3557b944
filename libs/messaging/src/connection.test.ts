import { describe, expect, it } from "vitest";
import { natsConnectionOptions, NatsOptionsError, natsServers, natsTlsOptions } from "./connection.js";

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
