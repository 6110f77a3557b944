import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { spkiOf } from "./certificate.js";

describe("spkiOf", () => {
  it("encodes P-256 keys exactly as OpenSSL does, coordinates with leading zero bytes included", () => {
    // 600 keys: a coordinate starting with a zero byte turns up with near certainty.
    let leadingZero = 0;
    for (let i = 0; i < 600; i++) {
      const { publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
      const openssl = publicKey.export({ type: "spki", format: "der" });
      if (openssl[27] === 0 || openssl[59] === 0) leadingZero++;
      expect(spkiOf(publicKey).equals(openssl)).toBe(true);
    }
    expect(leadingZero).toBeGreaterThan(0);
  });

  it("leaves other keys to OpenSSL's encoder", () => {
    const keys = [
      generateKeyPairSync("ec", { namedCurve: "secp384r1" }).publicKey,
      generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey,
      generateKeyPairSync("ed25519").publicKey,
    ];
    for (const key of keys) expect(spkiOf(key).equals(key.export({ type: "spki", format: "der" }))).toBe(true);
  });
});
