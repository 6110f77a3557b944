import { describe, expect, it } from "vitest";
import { quantitiesEqual, quantityValue } from "./quantity.js";

describe("quantityValue", () => {
  it.each([
    ["5Gi", 5 * 2 ** 30],
    ["5120Mi", 5 * 2 ** 30],
    ["500m", 0.5],
    ["2", 2],
    ["1e3", 1000],
    ["1.5k", 1500],
    [".5Ki", 512],
  ])("%s = %d", (text, value) => {
    expect(quantityValue(text)).toBeCloseTo(value, 9);
  });

  it("rejects malformed quantities", () => {
    expect(quantityValue("5 GB")).toBeUndefined();
    expect(quantityValue("Gi")).toBeUndefined();
    expect(quantityValue("")).toBeUndefined();
  });
});

describe("quantitiesEqual", () => {
  it("compares amounts, not spellings", () => {
    expect(quantitiesEqual("5Gi", "5120Mi")).toBe(true);
    expect(quantitiesEqual("1G", "1000M")).toBe(true);
    expect(quantitiesEqual("5Gi", "5G")).toBe(false);
    expect(quantitiesEqual("5Gi", "10Gi")).toBe(false);
  });

  it("treats unset and malformed values strictly", () => {
    expect(quantitiesEqual(undefined, undefined)).toBe(true);
    expect(quantitiesEqual(undefined, "5Gi")).toBe(false);
    expect(quantitiesEqual("junk", "junk")).toBe(true);
    expect(quantitiesEqual("junk", "5Gi")).toBe(false);
  });
});
