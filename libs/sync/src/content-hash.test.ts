import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "@tenantplane/api";
import { contentHash } from "./content-hash.js";

/** Property budget: JSON values checked for key-order independence. */
const CANONICAL_RUNS = 500;

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

  it("is an HMAC under a key: different keys give unrelated hashes, and none equals the unkeyed one", () => {
    const secret = { data: { password: "aHVudGVyMg==" } };
    const keyed = contentHash(secret, "k1");
    expect(keyed).toMatch(/^[0-9a-f]{16}$/);
    expect(keyed).toBe(contentHash(secret, "k1"));
    expect(keyed).not.toBe(contentHash(secret, "k2"));
    expect(keyed).not.toBe(contentHash(secret));
  });
});
