import { describe, expect, it } from "vitest";
import {
  addQuantities,
  compareQuantities,
  isWholeQuantity,
  QuantitySchema,
  ResourceListSchema,
  subtractQuantities,
} from "./quantity.js";

describe("QuantitySchema", () => {
  it.each(["1", "500m", "0.5", ".5", "10Gi", "1Ki", "2e3", "1E", "100M", "0"])("accepts %s", (text) => {
    expect(QuantitySchema.parse(text)).toBe(text);
  });

  it("turns integers into their string form", () => {
    expect(QuantitySchema.parse(50)).toBe("50");
    expect(QuantitySchema.parse(0)).toBe("0");
  });

  it.each([["-1"], ["10 Gi"], ["10GB"], ["ten"], [""], ["1.5.2"], [-1], [0.5], [true], [null]])(
    "rejects %j with an actionable message",
    (input) => {
      const result = QuantitySchema.safeParse(input);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toBe("must be a quantity like 10Gi, 500m or 2");
    },
  );
});

describe("ResourceListSchema", () => {
  it("maps resource names to string quantities", () => {
    expect(ResourceListSchema.parse({ pods: 10, "requests.cpu": "2" })).toEqual({ pods: "10", "requests.cpu": "2" });
  });

  it("names the offending key", () => {
    const result = ResourceListSchema.safeParse({ "limits.memory": "lots" });
    expect(result.error?.issues[0]?.path).toEqual(["limits.memory"]);
  });
});

describe("compareQuantities", () => {
  it.each([
    ["1Gi", "1073741824", 0],
    ["100m", "0.1", 0],
    ["1", "1000m", 0],
    ["2e3", "2k", 0],
    ["500Mi", "1Gi", -1],
    ["1G", "1Gi", -1],
    ["4", "3999m", 1],
    ["0", "0m", 0],
    [50, "50", 0],
  ] as const)("compares %s with %s as %i", (a, b, expected) => {
    expect(compareQuantities(a, b)).toBe(expected);
    expect(compareQuantities(b, a)).toBe(expected === 0 ? 0 : -expected);
  });

  it("gives no answer for text that is not a quantity or is out of range", () => {
    expect(compareQuantities("ten", "1")).toBeUndefined();
    expect(compareQuantities("1e999", "1")).toBeUndefined();
  });
});

describe("isWholeQuantity", () => {
  it.each([
    ["2", true],
    ["2000m", true],
    ["1Ki", true],
    ["1.0", true],
    ["1e3", true],
    ["1.5", false],
    ["500m", false],
    ["x", false],
  ] as const)("%s is whole: %s", (text, whole) => {
    expect(isWholeQuantity(text)).toBe(whole);
  });
});

describe("addQuantities", () => {
  it.each([
    [["1", "200m"], "1200m"],
    [["8Gi", "288Mi"], "8480Mi"],
    [["50", "2"], "52"],
    [["24", "1", "200m"], "25200m"],
    [["1500", "500"], "2k"],
    [["100Gi", "5Gi"], "105Gi"],
    [["0.5", "0.25"], "750m"],
    [["1Gi", "1"], "1073741825"],
    [[], "0"],
  ])("adds %j exactly: %s", (texts, sum) => {
    expect(addQuantities(...texts)).toBe(sum);
    expect(compareQuantities(sum, sum)).toBe(0);
  });

  it("names what is not a quantity", () => {
    expect(() => addQuantities("1", "lots")).toThrow('"lots" is not a quantity');
  });
});

describe("subtractQuantities", () => {
  it.each([
    ["7200m", "1200m", "6"],
    ["8480Mi", "288Mi", "8Gi"],
    ["1", "2", "0"],
    ["52", "2", "50"],
  ])("%s - %s = %s, never below zero", (a, b, difference) => {
    expect(subtractQuantities(a, b)).toBe(difference);
  });
});
