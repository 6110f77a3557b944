import fc from "fast-check";
import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "@tenantplane/api";
import { contentHash, contentHashSteps, HASH_SLICE_CHARS } from "./content-hash.js";

/** Property budget: JSON values checked for key-order independence. */
const CANONICAL_RUNS = 500;
/** Property budget: values with long strings (several slices each) hashed both ways. */
const LONG_RUNS = 60;

/** The hash as every host copy made so far carries it: the digest of canonicalJson's whole text. */
function wholeTextHash(value: unknown, key?: string): string {
  const digest = key === undefined ? createHash("sha256") : createHmac("sha256", key);
  return digest.update(canonicalJson(value)).digest("hex").slice(0, 16);
}

/** A string of about `length` code units from `units`, with surrogate pairs and escapes where slices end. */
function longText(units: string[], length: number): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...units), { minLength: 1, maxLength: 8 }).chain((pattern) =>
    fc.integer({ min: -3, max: 3 }).map((shift) => {
      const unit = pattern.join("");
      return unit.repeat(Math.ceil((length + shift) / unit.length)).slice(0, length + shift);
    }),
  );
}

function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversedKeys(v)]),
  );
}

describe("canonicalJson", () => {
  it("sorts keys at every depth, keeps array order and drops undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[3,{"e":2,"f":1}]},"b":1}',
    );
  });

  it("prints equal content equally whatever the key order", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(reversedKeys(value))).toBe(canonicalJson(value));
      }),
      { numRuns: CANONICAL_RUNS },
    );
  });
});

describe("contentHash", () => {
  it("is 16 hex digits and changes with the content", () => {
    expect(contentHash({ a: 1 })).toMatch(/^[0-9a-f]{16}$/);
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
    expect(contentHash([1, 2])).not.toBe(contentHash([2, 1]));
  });

  it("is the digest of canonicalJson's text, byte for byte, for any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.string(), { nil: undefined }), (value, key) => {
        expect(contentHash(value, key)).toBe(wholeTextHash(value, key));
        // Beside a long string, the value is written in pieces (a small one is printed whole).
        const pieced = { value, pad: "p".repeat(HASH_SLICE_CHARS) };
        expect(contentHash(pieced, key)).toBe(wholeTextHash(pieced, key));
      }),
      { numRuns: CANONICAL_RUNS },
    );
  });

  it("hashes long strings in slices to the same digest: escapes, surrogate pairs and lone halves at slice ends", () => {
    // "\ud83d\ude00" is one pair; "\ud800" alone is escaped by JSON; quotes, backslashes and controls too.
    const units = ["x", "\ud83d\ude00", "\ud800", "\udc00", '"', "\\", "\n", "\u0001", "é", "\u2028"];
    const long = fc.oneof(
      longText(units, HASH_SLICE_CHARS),
      longText(units, HASH_SLICE_CHARS * 2 + 1),
      longText(["x"], HASH_SLICE_CHARS * 3),
    );
    fc.assert(
      fc.property(
        long,
        long,
        fc.jsonValue({ maxDepth: 2 }),
        fc.option(fc.string(), { nil: undefined }),
        (a, b, other, key) => {
          const value = { kind: "ConfigMap", data: { a, b, [a.slice(0, 3)]: other }, list: [b, other, a] };
          expect(contentHash(value, key)).toBe(wholeTextHash(value, key));
        },
      ),
      { numRuns: LONG_RUNS },
    );
  });

  it("follows canonicalJson on undefined members, non-finite numbers, toJSON, index-like and __proto__ keys", () => {
    const proto = JSON.parse('{"__proto__":{"b":1,"a":2}}') as unknown;
    const values: unknown[] = [
      { b: undefined, a: [undefined, () => 1, Symbol("s"), Number.NaN, -0, 1e21], c: () => 1 },
      { 10: "ten", 9: "nine", a: 1, "01": "not an index", 4294967295: "not an index either", "-1": 2 },
      { when: new Date(0), nested: { toJSON: (key: string) => ({ key, z: 1, y: [new Date(1)] }) } },
      proto,
      { long: "y".repeat(HASH_SLICE_CHARS * 2), when: { toJSON: () => "z".repeat(HASH_SLICE_CHARS + 5) } },
      [],
      {},
      "top",
      12,
      null,
    ];
    for (const value of values) {
      expect(contentHash(value, "k")).toBe(wholeTextHash(value, "k"));
      const pieced = [value, "p".repeat(HASH_SLICE_CHARS)];
      expect(contentHash(pieced, "k")).toBe(wholeTextHash(pieced, "k"));
    }
  });

  it("stays the hash host copies already carry (fixed vectors)", () => {
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a-x-b-x-t", namespace: "tp-t", labels: { z: "1", a: "2" } },
      data: { payload: "x".repeat(HASH_SLICE_CHARS * 3 + 7), "ü\ud83d\ude00": '"q"' },
    };
    // Printed by the hash as it was before it was fed in pieces.
    expect(contentHash(configMap, "key")).toBe("3b8db9d618cb305f");
    expect(contentHash({ a: 1, b: [true, null, "s"] })).toBe(wholeTextHash({ a: 1, b: [true, null, "s"] }));
  });

  it("pauses between slices of a large value and gives the same hash when driven step by step", () => {
    const value = { data: { payload: "x".repeat(1_000_000) }, metadata: { name: "big" } };
    const steps = contentHashSteps(value, "k");
    let pauses = 0;
    let next = steps.next();
    for (; next.done !== true; next = steps.next()) pauses++;
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(1_000_000 / HASH_SLICE_CHARS));
    expect(next.value).toBe(wholeTextHash(value, "k"));
  });

  it("is an HMAC under a key: different keys give unrelated hashes, and none equals the unkeyed one", () => {
    const secret = { data: { password: "aHVudGVyMg==" } };
    const keyed = contentHash(secret, "k1");
    expect(keyed).toMatch(/^[0-9a-f]{16}$/);
    expect(keyed).toBe(contentHash(secret, "k1"));
    expect(keyed).not.toBe(contentHash(secret, "k2"));
    expect(keyed).not.toBe(contentHash(secret));
  });
});
