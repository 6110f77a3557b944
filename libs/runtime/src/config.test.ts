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
});
