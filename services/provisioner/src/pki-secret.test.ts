import { describe, expect, it } from "vitest";
import { pkiSecret, readPkiSecret, rememberPkiSecret } from "./pki-secret.js";
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

  it("checks a Secret's content once, and still refuses a damaged copy of it", async () => {
    const pki = await generateTenantPki("acme");
    const secret = pkiSecret("acme", pki);
    const first = readPkiSecret(secret);
    // The same content read again (as every pass does) is the remembered result.
    expect(readPkiSecret({ data: { ...secret.data } })).toBe(first);
    // A key swapped for another CA's key is new content: checked, and refused.
    const swapped = { data: { ...secret.data, "server-ca.key": secret.data!["client-ca.key"]! } };
    expect(() => readPkiSecret(swapped)).toThrow(/server-ca\.key does not belong to the certificate in server-ca\.crt/);
    expect(() => readPkiSecret(swapped)).toThrow(InvalidPkiSecretError);
  });

  it("takes a PKI it was told about without checking it", async () => {
    const pki = await generateTenantPki("acme");
    const secret = pkiSecret("acme", pki);
    rememberPkiSecret(secret, pki);
    expect(readPkiSecret({ data: { ...secret.data } })).toBe(pki);
  });
});
