import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fnv1a32, partitionOf } from "./partition-of.js";

describe("fnv1a32", () => {
  // Reference vectors from the FNV specification's test suite.
  it.each([
    ["", 0x811c9dc5],
    ["a", 0xe40c292c],
    ["foobar", 0xbf9cf968],
  ])("hashes %j to the published value", (input, expected) => {
    expect(fnv1a32(input)).toBe(expected);
  });

  it("hashes UTF-8 bytes, not UTF-16 code units", () => {
    // "é" is one UTF-16 unit but two UTF-8 bytes (0xc3 0xa9); hashing the bytes by hand must agree.
    let h = 0x811c9dc5;
    for (const b of [0xc3, 0xa9]) h = Math.imul(h ^ b, 0x01000193);
    expect(fnv1a32("é")).toBe(h >>> 0);
  });

  it("always returns an unsigned 32-bit integer", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (s) => {
        const h = fnv1a32(s);
        expect(Number.isInteger(h) && h >= 0 && h <= 0xffffffff).toBe(true);
      }),
    );
  });
});

describe("partitionOf", () => {
  it("is the hash modulo the partition count", () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 65_536 }), (tenant, p) => {
        const n = partitionOf(tenant, p);
        expect(n).toBe(fnv1a32(tenant) % p);
        expect(n >= 0 && n < p).toBe(true);
      }),
    );
  });

  it.each([0, -1, 1.5, Number.NaN, 65_537])("rejects a partition count of %s", (p) => {
    expect(() => partitionOf("t", p)).toThrow(RangeError);
  });
});
