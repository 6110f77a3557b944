import { describe, expect, it } from "vitest";
import { decodeSecretData, encodeSecretData } from "./secret-data.js";

describe("secret data", () => {
  it("encodes to base64 and decodes back, including non-ASCII text", () => {
    const data = encodeSecretData({ a: "hello", b: "grüße\n" });
    expect(data).toEqual({ a: "aGVsbG8=", b: Buffer.from("grüße\n").toString("base64") });
    expect(decodeSecretData({ data })).toEqual({ a: "hello", b: "grüße\n" });
  });

  it("decodes a Secret without data to an empty record", () => {
    expect(decodeSecretData({})).toEqual({});
  });
});
