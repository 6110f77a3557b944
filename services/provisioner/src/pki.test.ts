// Must precede @peculiar/x509, which cannot load without the Reflect metadata API.
// @peculiar/x509 resolves its providers through tsyringe, which needs the Reflect metadata API.
import "reflect-metadata";
import { X509Certificate, createPrivateKey } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { beforeAll, describe, expect, it } from "vitest";
import {
  InvalidPkiSecretError,
  PKI_FILES,
  generateTenantPki,
  parsePkiSecret,
  pkiSecretData,
  signClientCertificate,
  type TenantPki,
} from "./pki.js";

const NOW = new Date("2026-03-01T12:00:00Z");
const DAY_MS = 86_400_000;

let pki: TenantPki;
beforeAll(async () => {
  pki = await generateTenantPki("acme", NOW);
});

function parseInvalid(data: Record<string, string>): InvalidPkiSecretError {
  try {
    parsePkiSecret(data);
  } catch (error) {
    if (error instanceof InvalidPkiSecretError) return error;
    throw error;
  }
  throw new Error("expected parsePkiSecret to throw");
}

describe("generateTenantPki", () => {
  it("creates three self-signed P-256 CAs named after the tenant, valid for ten years", () => {
    const cas = [
      [pki.serverCa, "CN=tenantplane-acme-server-ca"],
      [pki.clientCa, "CN=tenantplane-acme-client-ca"],
      [pki.requestHeaderCa, "CN=tenantplane-acme-request-header-ca"],
    ] as const;
    for (const [ca, subject] of cas) {
      const cert = new X509Certificate(ca.certPem);
      expect(cert.subject).toBe(subject);
      expect(cert.ca).toBe(true);
      expect(cert.checkIssued(cert)).toBe(true);
      expect(cert.verify(cert.publicKey)).toBe(true);
      expect(cert.checkPrivateKey(createPrivateKey(ca.keyPem))).toBe(true);
      expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
      expect(new Date(cert.validTo).getTime() - NOW.getTime()).toBe(3650 * DAY_MS);
      expect(new Date(cert.validFrom).getTime()).toBeLessThan(NOW.getTime());
      expect(ca.keyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    }
  });

  it("marks CA certificates with critical basicConstraints and certificate-signing key usage", () => {
    const cert = new x509.X509Certificate(pki.serverCa.certPem);
    const basic = cert.getExtension(x509.BasicConstraintsExtension);
    const usage = cert.getExtension(x509.KeyUsagesExtension);
    expect(basic?.ca).toBe(true);
    expect(basic?.critical).toBe(true);
    expect(usage?.critical).toBe(true);
    expect((usage?.usages ?? 0) & x509.KeyUsageFlags.keyCertSign).toBe(x509.KeyUsageFlags.keyCertSign);
    expect(cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId).toMatch(/^[0-9a-f]{40}$/);
  });

  it("uses a distinct key for every CA and an SEC1 P-256 service-account key", () => {
    const keys = [pki.serverCa.keyPem, pki.clientCa.keyPem, pki.requestHeaderCa.keyPem, pki.serviceAccountKeyPem];
    expect(new Set(keys).size).toBe(4);
    expect(pki.serviceAccountKeyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    const sa = createPrivateKey(pki.serviceAccountKeyPem);
    expect(sa.asymmetricKeyType).toBe("ec");
    expect(sa.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
  });

  it("never returns the same PKI twice", async () => {
    const other = await generateTenantPki("acme", NOW);
    expect(other.serverCa.certPem).not.toBe(pki.serverCa.certPem);
    expect(other.serviceAccountKeyPem).not.toBe(pki.serviceAccountKeyPem);
  });
});

describe("pkiSecretData / parsePkiSecret", () => {
  it("stores each file under k3s's file name", () => {
    const data = pkiSecretData(pki);
    expect(Object.keys(data).sort()).toEqual([
      "client-ca.crt",
      "client-ca.key",
      "request-header-ca.crt",
      "request-header-ca.key",
      "server-ca.crt",
      "server-ca.key",
      "service.key",
    ]);
    expect(data["server-ca.crt"]).toBe(pki.serverCa.certPem);
    expect(data["client-ca.key"]).toBe(pki.clientCa.keyPem);
    expect(data["service.key"]).toBe(pki.serviceAccountKeyPem);
  });

  it("round-trips through Secret data", () => {
    expect(parsePkiSecret(pkiSecretData(pki))).toEqual(pki);
  });

  it("names the missing key", () => {
    for (const key of Object.values(PKI_FILES)) {
      const data = pkiSecretData(pki);
      delete data[key];
      const error = parseInvalid(data);
      expect(error.key).toBe(key);
      expect(error.message).toContain(`missing ${key}`);
    }
  });

  it("treats a blank value as missing", () => {
    const error = parseInvalid({ ...pkiSecretData(pki), "client-ca.crt": "  \n" });
    expect(error.key).toBe("client-ca.crt");
  });

  it("rejects a key that does not belong to its certificate", () => {
    const data = { ...pkiSecretData(pki), "server-ca.key": pki.clientCa.keyPem };
    const error = parseInvalid(data);
    expect(error.key).toBe("server-ca.key");
    expect(error.message).toContain("does not belong to the certificate in server-ca.crt");
  });

  it("rejects a leaf certificate stored as a CA", async () => {
    const leaf = await signClientCertificate(pki.clientCa, { commonName: "x", lifetimeMs: 1 * DAY_MS }, NOW);
    const error = parseInvalid({
      ...pkiSecretData(pki),
      "request-header-ca.crt": leaf.certPem,
      "request-header-ca.key": leaf.keyPem,
    });
    expect(error.key).toBe("request-header-ca.crt");
    expect(error.message).toContain("not a CA certificate");
  });

  it("rejects values that are not PEM", () => {
    expect(parseInvalid({ ...pkiSecretData(pki), "server-ca.crt": "hello" }).key).toBe("server-ca.crt");
    expect(parseInvalid({ ...pkiSecretData(pki), "service.key": "hello" }).key).toBe("service.key");
  });
});

describe("signClientCertificate", () => {
  it("issues a clientAuth certificate that chains to the CA", async () => {
    const issued = await signClientCertificate(
      pki.clientCa,
      { commonName: "tenantplane:admin", organizations: ["system:masters", "ops"], lifetimeMs: 30 * DAY_MS },
      NOW,
    );
    const ca = new x509.X509Certificate(pki.clientCa.certPem);
    const cert = new x509.X509Certificate(issued.certPem);
    expect(cert.issuer).toBe(ca.subject);
    expect(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
    expect(cert.subject).toBe("CN=tenantplane:admin, O=system:masters, O=ops");
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual([x509.ExtendedKeyUsage.clientAuth]);
    expect(cert.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(false);
    expect(cert.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId).toBe(
      ca.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId,
    );
    expect(cert.notAfter.getTime() - NOW.getTime()).toBe(30 * DAY_MS);

    // Independent check with OpenSSL through node:crypto.
    const nodeCert = new X509Certificate(issued.certPem);
    const nodeCa = new X509Certificate(pki.clientCa.certPem);
    expect(nodeCert.checkIssued(nodeCa)).toBe(true);
    expect(nodeCert.verify(nodeCa.publicKey)).toBe(true);
    expect(nodeCert.checkPrivateKey(createPrivateKey(issued.keyPem))).toBe(true);
    expect(nodeCert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
  });

  it("signs alike under a CA generated here and the same CA read back from its PEM", async () => {
    const readBack = parsePkiSecret(pkiSecretData(pki)).clientCa;
    const [fresh, reread] = await Promise.all(
      [pki.clientCa, readBack].map((ca) => signClientCertificate(ca, { commonName: "u", lifetimeMs: DAY_MS }, NOW)),
    );
    const nodeCa = new X509Certificate(pki.clientCa.certPem);
    const akiOf = (pem: string) =>
      new x509.X509Certificate(pem).getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
    for (const issued of [fresh!, reread!]) {
      const cert = new X509Certificate(issued.certPem);
      expect(cert.checkIssued(nodeCa)).toBe(true);
      expect(cert.verify(nodeCa.publicKey)).toBe(true);
      expect(akiOf(issued.certPem)).toBe(
        new x509.X509Certificate(pki.clientCa.certPem).getExtension(x509.SubjectKeyIdentifierExtension)?.keyId,
      );
    }
    expect(new X509Certificate(reread!.certPem).issuer).toBe(new X509Certificate(fresh!.certPem).issuer);
  });

  it("says the validity it encoded, cut to whole seconds", async () => {
    const now = new Date("2026-03-01T12:00:00.987Z");
    const issued = await signClientCertificate(pki.clientCa, { commonName: "u", lifetimeMs: DAY_MS + 600 }, now);
    const cert = new X509Certificate(issued.certPem);
    expect(issued.notAfter).toEqual(new Date(cert.validTo));
    expect(issued.notBefore).toEqual(new Date(cert.validFrom));
    expect(issued.notAfter).toEqual(new Date("2026-03-02T12:00:01Z"));
  });

  it("does not verify against a different CA", async () => {
    const issued = await signClientCertificate(pki.clientCa, { commonName: "u", lifetimeMs: 1 * DAY_MS }, NOW);
    const nodeCert = new X509Certificate(issued.certPem);
    expect(nodeCert.verify(new X509Certificate(pki.serverCa.certPem).publicKey)).toBe(false);
  });

  it("never outlives its CA", async () => {
    const issued = await signClientCertificate(pki.clientCa, { commonName: "u", lifetimeMs: 40_000 * DAY_MS }, NOW);
    const cert = new x509.X509Certificate(issued.certPem);
    expect(cert.notAfter.getTime()).toBe(new x509.X509Certificate(pki.clientCa.certPem).notAfter.getTime());
  });

  it("rejects a non-positive validity", async () => {
    await expect(signClientCertificate(pki.clientCa, { commonName: "u", lifetimeMs: 0 * DAY_MS }, NOW)).rejects.toThrow(
      /lifetimeMs must be a positive number/,
    );
  });

  it("rejects a CA key that is not P-256", async () => {
    const rsa = (await import("node:crypto")).generateKeyPairSync("rsa", { modulusLength: 1024 });
    const keyPem = rsa.privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    await expect(
      signClientCertificate(
        { certPem: pki.clientCa.certPem, keyPem },
        { commonName: "u", lifetimeMs: 1 * DAY_MS },
        NOW,
      ),
    ).rejects.toThrow(/ECDSA P-256/);
  });
});
