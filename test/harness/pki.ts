import { createPrivateKey, webcrypto } from "node:crypto";

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
type SigningAlgorithm = webcrypto.AlgorithmIdentifier | webcrypto.EcdsaParams | webcrypto.RsaHashedImportParams;
// @peculiar/x509 resolves its providers through tsyringe, which needs the Reflect metadata API.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto);

const subtle = webcrypto.subtle;
const ecdsa = { name: "ECDSA", namedCurve: "P-256" } as const;
const ecdsaSha256 = { name: "ECDSA", hash: "SHA-256" } as const;
const oneDay = 24 * 60 * 60 * 1000;

/** A PEM certificate with its PEM (PKCS#8) private key. */
export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

/** Options for a leaf certificate signed by a CA. */
export interface LeafOptions {
  /** Subject common name (the Kubernetes user name for client certificates). */
  commonName: string;
  /** Subject organisations (the Kubernetes groups for client certificates). */
  organizations?: string[];
  /** DNS names for the subjectAltName extension. */
  dnsNames?: string[];
  /** IP addresses for the subjectAltName extension. */
  ipAddresses?: string[];
  /** Which extended key usages the certificate carries. */
  usage: "server" | "client" | "both";
}

/** Generates a self-signed ECDSA P-256 CA valid for ten days. */
export async function generateCa(commonName: string): Promise<KeyPairPem> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: distinguishedName(commonName, []),
    notBefore: new Date(Date.now() - oneDay),
    notAfter: new Date(Date.now() + 10 * oneDay),
    signingAlgorithm: ecdsaSha256,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString("pem"), keyPem: await privateKeyPem(keys.privateKey) };
}

/**
 * Signs a fresh ECDSA P-256 leaf certificate with the given CA. The CA key may be any
 * PEM private key Node can read (PKCS#8, SEC1 EC or PKCS#1 RSA), as a caller's CA may be.
 */
export async function signLeaf(ca: KeyPairPem, options: LeafOptions): Promise<KeyPairPem> {
  const keys = await generateKeys();
  const caCert = new x509.X509Certificate(ca.certPem);
  const signer = await importSigningKey(ca.keyPem);
  const usages = {
    server: [x509.ExtendedKeyUsage.serverAuth],
    client: [x509.ExtendedKeyUsage.clientAuth],
    both: [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
  }[options.usage];
  const altNames: x509.JsonGeneralNames = [
    ...(options.dnsNames ?? []).map((value) => ({ type: "dns" as const, value })),
    ...(options.ipAddresses ?? []).map((value) => ({ type: "ip" as const, value })),
  ];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(usages),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
  ];
  if (altNames.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(altNames));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: distinguishedName(options.commonName, options.organizations ?? []),
    issuer: caCert.subjectName,
    notBefore: new Date(Date.now() - oneDay),
    notAfter: new Date(Date.now() + 10 * oneDay),
    signingAlgorithm: signer.algorithm,
    publicKey: keys.publicKey,
    signingKey: signer.key,
    extensions,
  });
  return { certPem: cert.toString("pem"), keyPem: await privateKeyPem(keys.privateKey) };
}

/** Generates an ECDSA P-256 private key as PKCS#8 PEM (for service-account token signing). */
export async function generatePrivateKeyPem(): Promise<string> {
  return privateKeyPem((await generateKeys()).privateKey);
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await subtle.generateKey(ecdsa, true, ["sign", "verify"])) as CryptoKeyPair;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY");
}

async function importSigningKey(pem: string): Promise<{ key: CryptoKey; algorithm: SigningAlgorithm }> {
  const keyObject = createPrivateKey(pem);
  const der = keyObject.export({ format: "der", type: "pkcs8" });
  switch (keyObject.asymmetricKeyType) {
    case "ec": {
      const curve = keyObject.asymmetricKeyDetails?.namedCurve;
      const namedCurve = { prime256v1: "P-256", secp384r1: "P-384", secp521r1: "P-521" }[curve ?? ""];
      if (namedCurve === undefined) throw new Error(`CA key uses unsupported EC curve ${curve ?? "unknown"}`);
      const hash = { "P-256": "SHA-256", "P-384": "SHA-384", "P-521": "SHA-512" }[namedCurve];
      const key = await subtle.importKey("pkcs8", der, { name: "ECDSA", namedCurve }, false, ["sign"]);
      return { key, algorithm: { name: "ECDSA", hash } as webcrypto.EcdsaParams };
    }
    case "rsa": {
      const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
      return { key: await subtle.importKey("pkcs8", der, algorithm, false, ["sign"]), algorithm };
    }
    case "ed25519": {
      const algorithm = { name: "Ed25519" };
      return { key: await subtle.importKey("pkcs8", der, algorithm, false, ["sign"]), algorithm };
    }
    default:
      throw new Error(
        `CA key type ${keyObject.asymmetricKeyType ?? "unknown"} is not supported; use EC, RSA or Ed25519`,
      );
  }
}

function distinguishedName(commonName: string, organizations: string[]): x509.JsonName {
  const name: x509.JsonName = organizations.map((o) => ({ O: [o] }));
  name.push({ CN: [commonName] });
  return name;
}

function randomSerial(): string {
  // A positive 16-byte serial: clear the top bit so DER does not read it as negative.
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString("hex");
}
