import { parseEnv } from "@tenantplane/runtime";
import { describe, expect, it } from "vitest";
import { ProvisionerEnvSchema, parseDuration } from "./config.js";

describe("parseDuration", () => {
  it("reads seconds, minutes, hours, days and their sums", () => {
    expect(parseDuration("90s")).toBe(90_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("30d")).toBe(30 * 86_400_000);
  });

  it("refuses anything else", () => {
    for (const bad of ["", "0s", "10", "1y", "-5m", "5 m"]) expect(parseDuration(bad)).toBeUndefined();
  });
});

describe("ProvisionerEnvSchema", () => {
  it("defaults the admin certificate lifetime to a year and names a bad value", () => {
    expect(parseEnv(ProvisionerEnvSchema, { NATS_URL: "nats://x" }).ADMIN_CERT_LIFETIME).toBe(365 * 86_400_000);
    expect(
      parseEnv(ProvisionerEnvSchema, { NATS_URL: "nats://x", ADMIN_CERT_LIFETIME: "45s" }).ADMIN_CERT_LIFETIME,
    ).toBe(45_000);
    expect(() => parseEnv(ProvisionerEnvSchema, { NATS_URL: "nats://x", ADMIN_CERT_LIFETIME: "soon" })).toThrow(
      /^ADMIN_CERT_LIFETIME: must be a positive duration/,
    );
  });
});

describe("TENANT_ROLE_BINDINGS", () => {
  it("is empty when unset and names a malformed entry", () => {
    expect(parseEnv(ProvisionerEnvSchema, { NATS_URL: "nats://x" }).TENANT_ROLE_BINDINGS).toEqual([]);
    expect(
      parseEnv(ProvisionerEnvSchema, { NATS_URL: "nats://x", TENANT_ROLE_BINDINGS: "r=ns/sa" }).TENANT_ROLE_BINDINGS,
    ).toEqual([{ clusterRole: "r", serviceAccount: { namespace: "ns", name: "sa" } }]);
    expect(() => parseEnv(ProvisionerEnvSchema, { NATS_URL: "nats://x", TENANT_ROLE_BINDINGS: "r=sa" })).toThrow(
      /^TENANT_ROLE_BINDINGS: entry "r=sa" is not/,
    );
  });
});
