import { describe, expect, it } from "vitest";
import { pkiSecret, readPkiSecret } from "./pki-secret.js";
import { InvalidPkiSecretError, generateTenantPki } from "./pki.js";

describe("pkiSecret / readPkiSecret", () => {
  it("stores the PKI base64-encoded under k3s's file names and reads it back", async () => {
    const pki = await generateTenantPki("acme");
    const secret = pkiSecret("acme", pki);
    expect(secret.metadata).toEqual({
      name: "acme-pki",
      namespace: "tp-acme",
      labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "acme" },
    });
    expect(secret.type).toBe("Opaque");
    expect(Buffer.from(secret.data?.["server-ca.crt"] ?? "", "base64").toString()).toBe(pki.serverCa.certPem);
    expect(readPkiSecret(secret)).toEqual(pki);
  });

  it("names the first missing key of an empty Secret", () => {
    expect(() => readPkiSecret({})).toThrow(InvalidPkiSecretError);
    expect(() => readPkiSecret({})).toThrow(/missing server-ca\.crt/);
  });
});
