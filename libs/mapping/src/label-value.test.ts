import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isLabelValue, labelValue } from "./label-value.js";

/** Property budget: cases per fast-check property. */
const LABEL_VALUE_RUNS = 2000;

describe("labelValue", () => {
  it("passes valid values through unchanged", () => {
    for (const value of ["", "dev", "Pod", "my_ns.v1-2", "a".repeat(63)]) {
      expect(labelValue(value)).toBe(value);
    }
  });

  it("hashes values that are too long, keeping a readable prefix", () => {
    const value = labelValue("a".repeat(64));
    expect(value).toMatch(/^a{46}-[0-9a-f]{16}$/);
  });

  it("hashes values with characters a label value cannot hold", () => {
    expect(labelValue("team/é")).toMatch(/^team---[0-9a-f]{16}$/);
    expect(labelValue("-lead")).toMatch(/^lead-[0-9a-f]{16}$/);
    expect(labelValue("ü")).toMatch(/^tp-[0-9a-f]{16}$/);
  });

  it("always returns a valid label value, deterministically, distinct for distinct invalid inputs", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), fc.string({ maxLength: 200 }), (a, b) => {
        expect(isLabelValue(labelValue(a))).toBe(true);
        expect(labelValue(a)).toBe(labelValue(a));
        if (a !== b) expect(labelValue(a)).not.toBe(labelValue(b));
      }),
      { numRuns: LABEL_VALUE_RUNS },
    );
  });
});
