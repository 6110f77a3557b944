import { describe, expect, it } from "vitest";
import { QuantitySchema, ResourceListSchema } from "./quantity.js";

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
