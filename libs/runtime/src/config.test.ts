import { describe, expect, it } from "vitest";
import { CommonEnvSchema, ConfigError, parseEnv } from "./config.js";

describe("parseEnv", () => {
  it("applies defaults", () => {
    const env = parseEnv(CommonEnvSchema, { NATS_URL: "nats://x:4222" });
    expect(env.LOG_LEVEL).toBe("info");
    expect(env.HTTP_PORT).toBe(8080);
  });

  it("names the variable and the fix in one line", () => {
    expect(() => parseEnv(CommonEnvSchema, {})).toThrow(/^NATS_URL: is required/);
    expect(() => parseEnv(CommonEnvSchema, { NATS_URL: "n", HTTP_PORT: "http" })).toThrow(
      new ConfigError("HTTP_PORT: must be a port number"),
    );
    expect(() => parseEnv(CommonEnvSchema, { NATS_URL: "n", LOG_LEVEL: "loud" })).toThrow(/^LOG_LEVEL: must be one of/);
  });

  it("reads the NATS TLS variables and refuses a NATS_TLS that is not a boolean", () => {
    const env = parseEnv(CommonEnvSchema, {
      NATS_URL: "tls://a:4222,tls://b:4222",
      NATS_TLS: "true",
      NATS_TLS_CA_FILE: "/etc/tenantplane/nats-ca/ca.crt",
      NATS_TLS_CERT_FILE: "/etc/tenantplane/nats-client/tls.crt",
      NATS_TLS_KEY_FILE: "/etc/tenantplane/nats-client/tls.key",
    });
    expect(env).toMatchObject({ NATS_TLS: "true", NATS_TLS_CA_FILE: "/etc/tenantplane/nats-ca/ca.crt" });
    expect(() => parseEnv(CommonEnvSchema, { NATS_URL: "n", NATS_TLS: "yes" })).toThrow(
      new ConfigError("NATS_TLS: must be true or false"),
    );
  });
});
