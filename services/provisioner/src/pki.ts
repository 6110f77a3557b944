import { X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import {
  CLIENT_AUTH,
  KEY_USAGE,
  distinguishedName,
  issueCertificate,
  keyIdentifier,
  subjectOf,
} from "./internal/certificate.js";

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

/** A certificate just signed, with the validity it encodes (whole seconds, as X.509 keeps them). */
export interface IssuedCertificate extends KeyPairPem {
  notBefore: Date;
  notAfter: Date;
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
  return {
    serverCa: createCa(`tenantplane-${tenant}-server-ca`, now),
    clientCa: createCa(`tenantplane-${tenant}-client-ca`, now),
    requestHeaderCa: createCa(`tenantplane-${tenant}-request-header-ca`, now),
    serviceAccountKeyPem: privateKeyPem(generateKeyPair().privateKey),
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
): Promise<IssuedCertificate> {
  return signLeaf(ca, {
    subject: { commonName: request.commonName, organizations: request.organizations ?? [] },
    usage: CLIENT_AUTH,
    lifetimeMs: request.lifetimeMs,
    now,
  });
}

function createCa(commonName: string, now: Date): KeyPairPem {
  const keys = generateKeyPair();
  const name = distinguishedName({ commonName });
  const notAfter = new Date(now.getTime() + CA_VALIDITY_DAYS * DAY_MS);
  const certPem = issueCertificate({
    subject: name,
    issuer: name,
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter,
    ca: true,
    keyUsage: [KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign, KEY_USAGE.digitalSignature],
  });
  const ca = { certPem, keyPem: privateKeyPem(keys.privateKey) };
  issuers.set(ca, {
    signingKey: keys.privateKey,
    subject: name,
    keyId: keyIdentifier(keys.publicKey),
    validTo: wholeSeconds(notAfter),
  });
  return ca;
}

/** What signing under a CA takes from it: its key, its subject as encoded, its key id and expiry. */
interface Issuer {
  signingKey: KeyObject;
  subject: Buffer;
  keyId: Buffer;
  validTo: Date;
}

// Per CA object: a PKI generated in this process, or read back once from its Secret (which
// readPkiSecret remembers by content), is parsed at most once. OpenSSL's decoders take about a
// millisecond per key, which every kubeconfig signed in a burst of new tenants paid again.
const issuers = new WeakMap<KeyPairPem, Issuer>();

function issuerOf(ca: KeyPairPem): Issuer {
  const known = issuers.get(ca);
  if (known) return known;
  const caCert = new X509Certificate(ca.certPem);
  const signingKey = createPrivateKey(ca.keyPem);
  if (signingKey.asymmetricKeyType !== "ec" || signingKey.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw new Error("the CA key must be an ECDSA P-256 key: regenerate the tenant PKI");
  }
  const issuer = {
    signingKey,
    // The CA's encoded subject is reused verbatim: verifiers match issuer to subject byte for byte.
    subject: subjectOf(caCert),
    keyId: keyIdentifier(caCert.publicKey),
    validTo: new Date(caCert.validTo),
  };
  issuers.set(ca, issuer);
  return issuer;
}

interface LeafSpec {
  subject: { commonName: string; organizations: readonly string[] };
  /** The ExtendedKeyUsage OID. */
  usage: string;
  lifetimeMs: number;
  now: Date;
}

function signLeaf(ca: KeyPairPem, spec: LeafSpec): IssuedCertificate {
  if (!(spec.lifetimeMs > 0)) {
    throw new Error(`lifetimeMs must be a positive number, got ${spec.lifetimeMs}`);
  }
  const issuer = issuerOf(ca);
  const keys = generateKeyPair();
  const notAfter = new Date(Math.min(spec.now.getTime() + spec.lifetimeMs, issuer.validTo.getTime()));
  // A short-lived certificate is backdated by at most a tenth of its lifetime, so renewal at
  // two thirds of notBefore..notAfter still falls after it was issued.
  const notBefore = new Date(spec.now.getTime() - Math.min(BACKDATE_MS, spec.lifetimeMs / 10));
  const certPem = issueCertificate({
    subject: distinguishedName(spec.subject),
    issuer: issuer.subject,
    publicKey: keys.publicKey,
    signingKey: issuer.signingKey,
    notBefore,
    notAfter,
    ca: false,
    keyUsage: [KEY_USAGE.digitalSignature],
    extendedKeyUsage: [spec.usage],
    authorityKeyId: issuer.keyId,
  });
  return {
    certPem,
    keyPem: privateKeyPem(keys.privateKey),
    notBefore: wholeSeconds(notBefore),
    notAfter: wholeSeconds(notAfter),
  };
}

// A certificate's times are encoded to the second, cut, not rounded.
function wholeSeconds(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 1000) * 1000);
}

// Synchronous: a P-256 key takes well under a millisecond, less than handing it to a thread.
function generateKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync("ec", { namedCurve: "prime256v1" });
}

// SEC1 rather than PKCS#8: kube-apiserver's --service-account-key-file reader only recognises
// EC keys in SEC1 form, while every other consumer (k3s, client-go, Node) accepts both.
function privateKeyPem(key: KeyObject): string {
  return key.export({ format: "pem", type: "sec1" }).toString();
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
