import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical-json.js";

/** Property budget: JSON-like values compared with the reference printing. */
const RUNS = 2_000;

// The printing every stored hash was made with: each object rebuilt in sorted key order.
function reference(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

// Keys that exercise the ordering rules: array indexes (also the largest), near-indexes
// ("01", "4294967295", "-1", "1.5"), case and non-ASCII.
const awkwardKey = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "0",
    "1",
    "9",
    "10",
    "01",
    "4294967294",
    "4294967295",
    "-1",
    "1.5",
    "B",
    "a",
    "é",
    "😀",
    "__proto__",
    "__proto__x",
  ),
  fc.nat().map(String),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(null, undefined, true, false, 0, -0, 1.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY),
    fc.string(),
    fc.double(),
    fc.array(tie("any"), { maxLength: 4 }),
    fc.dictionary(awkwardKey, tie("any"), { maxKeys: 6 }),
  ),
})).any;

describe("canonicalJson", () => {
  it("prints what JSON.stringify prints for the value rebuilt with sorted keys", () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(reference(v));
      }),
      { numRuns: RUNS },
    );
  });

  it("orders array-index keys numerically before the others, which go by code unit", () => {
    expect(canonicalJson({ b: 1, 10: "x", a: { d: [3, { f: 1, e: 2 }], c: undefined }, 9: "y", B: 2 })).toBe(
      '{"9":"y","10":"x","B":2,"a":{"d":[3,{"e":2,"f":1}]},"b":1}',
    );
  });

  it("prints undefined, functions and symbols in arrays as null and honours toJSON", () => {
    expect(canonicalJson([undefined, () => 1, Symbol("s"), new Date(0)])).toBe(
      '[null,null,null,"1970-01-01T00:00:00.000Z"]',
    );
  });

  it("keeps a key named __proto__ (a ConfigMap key may be called that)", () => {
    expect(canonicalJson(JSON.parse('{"b":{"__proto__":"x"},"__proto__":1}'))).toBe(
      '{"__proto__":1,"b":{"__proto__":"x"}}',
    );
  });

  it("refuses a bigint as JSON.stringify does", () => {
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
  });
});
