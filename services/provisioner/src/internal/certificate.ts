import { createHash, randomBytes, sign, type KeyObject, type X509Certificate } from "node:crypto";
import {
  bitString,
  boolean,
  children,
  explicit,
  implicit,
  namedBits,
  objectIdentifier,
  octetString,
  sequence,
  set,
  time,
  unsignedInteger,
  utf8String,
  type Der,
} from "./der.js";

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  basicConstraints: "2.5.29.19",
  authorityKeyIdentifier: "2.5.29.35",
  extendedKeyUsage: "2.5.29.37",
} as const;

/** KeyUsage bit numbers (RFC 5280 4.2.1.3). */
export const KEY_USAGE = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 } as const;
/** ExtendedKeyUsage id-kp-clientAuth. */
export const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

/** What one certificate says; every certificate here is signed with ECDSA over SHA-256. */
export interface CertificateSpec {
  /** The subject's Name (see {@link distinguishedName}). */
  subject: Der;
  /** The issuer's Name, byte for byte as in the issuer's certificate (the subject for a self-signed one). */
  issuer: Der;
  /** The subject's public key. */
  publicKey: KeyObject;
  /** The issuer's private key (an ECDSA key). */
  signingKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  ca: boolean;
  keyUsage: ReadonlyArray<number>;
  extendedKeyUsage?: readonly string[];
  /** The issuer's key identifier; left out for a self-signed certificate. */
  authorityKeyId?: Buffer;
}

/** A Name of one common name and any number of organizations, each its own RDN, CN first. */
export function distinguishedName(attrs: { commonName: string; organizations?: readonly string[] }): Der {
  const rdn = (oid: string, value: string) => set(sequence(objectIdentifier(oid), utf8String(value)));
  return sequence(
    rdn(OID.commonName, attrs.commonName),
    ...(attrs.organizations ?? []).map((o) => rdn(OID.organization, o)),
  );
}

/**
 * The key identifier of RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits, which
 * is what the PKI's certificates have always used (so leaves of older CAs chain the same way).
 */
export function keyIdentifier(publicKey: KeyObject): Buffer {
  return identifierOf(spkiOf(publicKey));
}

// SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (no unused bits) } up to the point.
const P256_SPKI_PREFIX = Buffer.from("3059301306072a8648ce3d020106082a8648ce3d03010703420004", "hex");

/**
 * A public key's DER SubjectPublicKeyInfo. A P-256 key's is put together from its coordinates:
 * OpenSSL's DER encoder takes about twenty times as long as exporting them, and a new tenant's
 * PKI encodes a handful of keys. Any other key goes through the encoder.
 */
export function spkiOf(publicKey: KeyObject): Der {
  const jwk = publicKey.asymmetricKeyType === "ec" ? publicKey.export({ format: "jwk" }) : undefined;
  const x = jwk?.crv === "P-256" && jwk.x ? Buffer.from(jwk.x, "base64url") : undefined;
  const y = jwk?.crv === "P-256" && jwk.y ? Buffer.from(jwk.y, "base64url") : undefined;
  if (x?.length === 32 && y?.length === 32) return Buffer.concat([P256_SPKI_PREFIX, x, y]);
  return publicKey.export({ type: "spki", format: "der" });
}

function identifierOf(spkiDer: Der): Buffer {
  const spki = children(spkiDer)[0];
  const bits = spki && children(spki.content)[1];
  if (!bits || bits.tag !== 0x03) throw new Error("not a SubjectPublicKeyInfo");
  return createHash("sha1").update(bits.content.subarray(1)).digest();
}

/** A certificate's subject Name, byte for byte, to be the issuer of what it signs. */
export function subjectOf(cert: X509Certificate): Der {
  const certificate = children(cert.raw)[0];
  const tbs = certificate && children(certificate.content)[0];
  const fields = tbs ? children(tbs.content) : [];
  // version is [0] and optional: serial, signature, issuer, validity, then the subject.
  const subject = fields[fields[0]?.tag === 0xa0 ? 5 : 4];
  if (!subject || subject.tag !== 0x30) throw new Error("certificate has no subject");
  return subject.whole;
}

/** Builds and signs an X.509 v3 certificate; returns it as PEM. */
export function issueCertificate(spec: CertificateSpec): string {
  const serial = randomBytes(16);
  // Positive, 16 bytes long, never zero (RFC 5280 4.1.2.2).
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const algorithm = sequence(objectIdentifier(OID.ecdsaWithSha256));
  const spki = spkiOf(spec.publicKey);
  const extension = (oid: string, critical: boolean, value: Der) =>
    sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
  const extensions = [
    // cA defaults to FALSE, and DER leaves a default out.
    extension(OID.basicConstraints, true, sequence(...(spec.ca ? [boolean(true)] : []))),
    extension(OID.keyUsage, true, namedBits(spec.keyUsage)),
    ...(spec.extendedKeyUsage?.length
      ? [extension(OID.extendedKeyUsage, false, sequence(...spec.extendedKeyUsage.map(objectIdentifier)))]
      : []),
    extension(OID.subjectKeyIdentifier, false, octetString(identifierOf(spki))),
    ...(spec.authorityKeyId
      ? [extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, spec.authorityKeyId)))]
      : []),
  ];
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm,
    spec.issuer,
    sequence(time(spec.notBefore), time(spec.notAfter)),
    spec.subject,
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = sign("sha256", tbs, { key: spec.signingKey, dsaEncoding: "der" });
  const der = sequence(tbs, algorithm, bitString(signature));
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}
