import { X509Certificate, createPrivateKey, createPublicKey, webcrypto } from "node:crypto";
import type * as X509 from "@peculiar/x509";

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

// @peculiar/x509 and what it pulls in cost about 19 MiB resident once loaded. Only minting
// needs it (reading a stored PKI back uses node:crypto), so a provisioner that mints
// nothing never loads it.
let x509Module: Promise<typeof X509> | undefined;
const loadX509 = () => (x509Module ??= import("./internal/x509.js").then((m) => m.x509));

const EC_KEY: webcrypto.EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
const SIGNING: webcrypto.EcdsaParams = { name: "ECDSA", hash: "SHA-256" };
const DAY_MS = 24 * 60 * 60 * 1000;
const CA_VALIDITY_DAYS = 3650;
// Certificates start a few minutes in the past so a control plane whose clock runs slightly
// behind the provisioner's does not reject them as not yet valid.
const BACKDATE_MS = 5 * 60 * 1000;

/** A PEM certificate with its PEM private key (SEC1 "EC PRIVATE KEY"). */
export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

/**
 * Everything a tenant control plane needs to trust and be trusted: the three CAs k3s would
 * otherwise generate at first start, and the service-account token signing key.
 */
export interface TenantPki {
  serverCa: KeyPairPem;
  clientCa: KeyPairPem;
  requestHeaderCa: KeyPairPem;
  serviceAccountKeyPem: string;
}

/** File names k3s reads from `<data-dir>/server/tls/`; also the keys of the PKI Secret. */
export const PKI_FILES = {
  serverCaCert: "server-ca.crt",
  serverCaKey: "server-ca.key",
  clientCaCert: "client-ca.crt",
  clientCaKey: "client-ca.key",
  requestHeaderCaCert: "request-header-ca.crt",
  requestHeaderCaKey: "request-header-ca.key",
  serviceAccountKey: "service.key",
} as const;

/** Raised when the stored PKI Secret cannot be used; `key` names the Secret key at fault. */
export class InvalidPkiSecretError extends Error {
  override readonly name = "InvalidPkiSecretError";
  constructor(
    readonly key: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a client certificate asserts: user name (CN), groups (O) and lifetime. */
export interface ClientCertificateRequest {
  commonName: string;
  organizations?: readonly string[];
  /** Milliseconds from issuance to expiry (capped at the CA's own expiry). */
  lifetimeMs: number;
}

/**
 * Generates a fresh, independent PKI for one tenant: three self-signed ECDSA P-256 CAs valid
 * for ten years and a P-256 service-account signing key. Never reuses key material.
 */
export async function generateTenantPki(tenant: string, now: Date = new Date()): Promise<TenantPki> {
  const [serverCa, clientCa, requestHeaderCa, serviceAccountKeys] = await Promise.all([
    createCa(`tenantplane-${tenant}-server-ca`, now),
    createCa(`tenantplane-${tenant}-client-ca`, now),
    createCa(`tenantplane-${tenant}-request-header-ca`, now),
    generateKeyPair(),
  ]);
  return {
    serverCa,
    clientCa,
    requestHeaderCa,
    serviceAccountKeyPem: await exportPrivateKeyPem(serviceAccountKeys.privateKey),
  };
}

/** Serialises a PKI into Secret data (PEM strings, not yet base64) keyed by k3s's file names. */
export function pkiSecretData(pki: TenantPki): Record<string, string> {
  return {
    [PKI_FILES.serverCaCert]: pki.serverCa.certPem,
    [PKI_FILES.serverCaKey]: pki.serverCa.keyPem,
    [PKI_FILES.clientCaCert]: pki.clientCa.certPem,
    [PKI_FILES.clientCaKey]: pki.clientCa.keyPem,
    [PKI_FILES.requestHeaderCaCert]: pki.requestHeaderCa.certPem,
    [PKI_FILES.requestHeaderCaKey]: pki.requestHeaderCa.keyPem,
    [PKI_FILES.serviceAccountKey]: pki.serviceAccountKeyPem,
  };
}

/**
 * Reads a PKI back from Secret data (values already base64-decoded). Checks every entry is
 * present and parses, that each CA is a CA and that each key belongs to its certificate;
 * throws InvalidPkiSecretError naming the offending key otherwise.
 */
export function parsePkiSecret(data: Readonly<Record<string, string | undefined>>): TenantPki {
  const ca = (certKey: string, keyKey: string): KeyPairPem => {
    const certPem = required(data, certKey);
    const keyPem = required(data, keyKey);
    const cert = parseCertificate(certKey, certPem);
    if (!cert.ca) {
      throw new InvalidPkiSecretError(
        certKey,
        `${certKey} is not a CA certificate (basicConstraints CA:TRUE missing): regenerate the PKI Secret`,
      );
    }
    const publicDer = publicKeyDerOf(keyKey, keyPem);
    if (!cert.publicKey.export({ format: "der", type: "spki" }).equals(publicDer)) {
      throw new InvalidPkiSecretError(
        keyKey,
        `${keyKey} does not belong to the certificate in ${certKey}: ` +
          "store the matching key or regenerate the PKI Secret",
      );
    }
    return { certPem, keyPem };
  };
  const pki: TenantPki = {
    serverCa: ca(PKI_FILES.serverCaCert, PKI_FILES.serverCaKey),
    clientCa: ca(PKI_FILES.clientCaCert, PKI_FILES.clientCaKey),
    requestHeaderCa: ca(PKI_FILES.requestHeaderCaCert, PKI_FILES.requestHeaderCaKey),
    serviceAccountKeyPem: required(data, PKI_FILES.serviceAccountKey),
  };
  publicKeyDerOf(PKI_FILES.serviceAccountKey, pki.serviceAccountKeyPem);
  return pki;
}

/**
 * Issues a client certificate (EKU clientAuth) under `ca` with a fresh P-256 key. Kubernetes
 * reads the user from the CN and the groups from the O entries.
 */
export async function signClientCertificate(
  ca: KeyPairPem,
  request: ClientCertificateRequest,
  now: Date = new Date(),
): Promise<KeyPairPem> {
  const x509 = await loadX509();
  const subject: X509.JsonName = [{ CN: [request.commonName] }];
  for (const org of request.organizations ?? []) subject.push({ O: [org] });
  return signLeaf(ca, {
    subject,
    usage: x509.ExtendedKeyUsage.clientAuth,
    lifetimeMs: request.lifetimeMs,
    now,
  });
}

async function createCa(commonName: string, now: Date): Promise<KeyPairPem> {
  const x509 = await loadX509();
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: [{ CN: [commonName] }],
    keys,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + CA_VALIDITY_DAYS * DAY_MS),
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString("pem"), keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

interface LeafSpec {
  subject: X509.JsonName;
  usage: X509.ExtendedKeyUsage;
  lifetimeMs: number;
  now: Date;
}

async function signLeaf(ca: KeyPairPem, spec: LeafSpec): Promise<KeyPairPem> {
  if (!(spec.lifetimeMs > 0)) {
    throw new Error(`lifetimeMs must be a positive number, got ${spec.lifetimeMs}`);
  }
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importPrivateKey(ca.keyPem);
  const keys = await generateKeyPair();
  const notAfter = new Date(Math.min(spec.now.getTime() + spec.lifetimeMs, caCert.notAfter.getTime()));
  const authorityKeyId = caCert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  const cert = await x509.X509CertificateGenerator.create({
    subject: spec.subject,
    // The CA's encoded subject is reused verbatim: verifiers match issuer to subject byte for byte.
    issuer: caCert.subjectName,
    publicKey: keys.publicKey,
    signingKey: caKey,
    // A short-lived certificate is backdated by at most a tenth of its lifetime, so renewal at
    // two thirds of notBefore..notAfter still falls after it was issued.
    notBefore: new Date(spec.now.getTime() - Math.min(BACKDATE_MS, spec.lifetimeMs / 10)),
    notAfter,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([spec.usage], false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ...(authorityKeyId ? [new x509.AuthorityKeyIdentifierExtension(authorityKeyId)] : []),
    ],
  });
  return { certPem: cert.toString("pem"), keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

function generateKeyPair(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"]);
}

// SEC1 rather than PKCS#8: kube-apiserver's --service-account-key-file reader only recognises
// EC keys in SEC1 form, while every other consumer (k3s, client-go, Node) accepts both.
async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", key));
  return createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" })
    .export({ format: "pem", type: "sec1" })
    .toString();
}

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw new Error("the CA key must be an ECDSA P-256 key: regenerate the tenant PKI");
  }
  const pkcs8 = key.export({ format: "der", type: "pkcs8" });
  return webcrypto.subtle.importKey("pkcs8", pkcs8, EC_KEY, false, ["sign"]);
}

function required(data: Readonly<Record<string, string | undefined>>, key: string): string {
  const value = data[key];
  if (value === undefined || value.trim() === "") {
    throw new InvalidPkiSecretError(
      key,
      `PKI Secret is missing ${key}: restore it, or delete the Secret so a new PKI is generated ` +
        "(existing kubeconfigs stop working)",
    );
  }
  return value;
}

function parseCertificate(key: string, pem: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (cause) {
    throw new InvalidPkiSecretError(key, `${key} is not a PEM certificate: regenerate the PKI Secret`, {
      cause,
    });
  }
}

function publicKeyDerOf(key: string, pem: string): Buffer {
  try {
    return createPublicKey(createPrivateKey(pem)).export({ format: "der", type: "spki" });
  } catch (cause) {
    throw new InvalidPkiSecretError(key, `${key} is not a PEM private key: regenerate the PKI Secret`, {
      cause,
    });
  }
}
