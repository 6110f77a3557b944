import { X509Certificate, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { distinguishedName, issueCertificate, keyIdentifier, subjectOf } from "./certificate.js";
import { children, namedBits, objectIdentifier, octetString, time, unsignedInteger } from "./der.js";

const hex = (b: Buffer) => b.toString("hex");

describe("DER", () => {
  it("encodes lengths past 127 in long form and reads them back", () => {
    const long = octetString(Buffer.alloc(300, 7));
    expect(hex(long.subarray(0, 4))).toBe("0482012c");
    const [read] = children(long);
    expect(read?.content.length).toBe(300);
    expect(read?.whole.length).toBe(304);
  });

  it("encodes integers minimally and positive", () => {
    expect(hex(unsignedInteger(Buffer.from([0, 0, 5])))).toBe("020105");
    expect(hex(unsignedInteger(Buffer.from([0x80])))).toBe("02020080");
    expect(hex(unsignedInteger(Buffer.from([0])))).toBe("020100");
  });

  it("encodes object identifiers with base-128 arcs", () => {
    // ecdsa-with-SHA256, as in every certificate it signs.
    expect(hex(objectIdentifier("1.2.840.10045.4.3.2"))).toBe("06082a8648ce3d040302");
    expect(() => objectIdentifier("1")).toThrow(/bad OID/);
  });

  it("encodes named bits without trailing zero bits", () => {
    expect(hex(namedBits([0]))).toBe("03020780"); // digitalSignature
    expect(hex(namedBits([0, 5, 6]))).toBe("03020186"); // + keyCertSign, cRLSign
  });

  it("switches from UTCTime to GeneralizedTime in 2050", () => {
    expect(time(new Date("2049-12-31T23:59:59.900Z")).toString("latin1")).toBe("\x17\x0d491231235959Z");
    expect(time(new Date("2050-01-01T00:00:00Z")).toString("latin1")).toBe("\x18\x0f20500101000000Z");
  });
});

describe("issueCertificate", () => {
  it("makes a certificate OpenSSL reads back field by field, past 2050 too", () => {
    const ca = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    const name = distinguishedName({ commonName: "ca é", organizations: ["a", "b"] });
    const pem = issueCertificate({
      subject: name,
      issuer: name,
      publicKey: ca.publicKey,
      signingKey: ca.privateKey,
      notBefore: new Date("2026-01-01T00:00:00Z"),
      notAfter: new Date("2061-06-01T12:30:45Z"),
      ca: true,
      keyUsage: [5, 6],
    });
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe("CN=ca é\nO=a\nO=b");
    expect(cert.ca).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(new Date(cert.validTo).toISOString()).toBe("2061-06-01T12:30:45.000Z");
    expect(new Date(cert.validFrom).toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(subjectOf(cert).equals(name)).toBe(true);
    expect(cert.publicKey.equals(ca.publicKey)).toBe(true);
    expect(keyIdentifier(ca.publicKey)).toHaveLength(20);
  });
});
