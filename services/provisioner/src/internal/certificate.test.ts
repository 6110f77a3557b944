import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { spkiOf } from "./certificate.js";

describe("spkiOf", () => {
  it("encodes P-256 keys exactly as OpenSSL does, coordinates with leading zero bytes included", () => {
    // At least 600 keys, and on until each coordinate has started with a zero byte (one key in
    // 256 each): a fixed count would miss that case about one run in a hundred.
    const leadingZero = { x: 0, y: 0 };
    let keys = 0;
    while (keys < 600 || leadingZero.x === 0 || leadingZero.y === 0) {
      const { publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
      const openssl = publicKey.export({ type: "spki", format: "der" });
      if (openssl[27] === 0) leadingZero.x++;
      if (openssl[59] === 0) leadingZero.y++;
      expect(spkiOf(publicKey).equals(openssl)).toBe(true);
      expect(++keys).toBeLessThan(50_000);
    }
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
