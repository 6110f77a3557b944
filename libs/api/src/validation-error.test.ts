import { describe, expect, it } from "vitest";
import * as z from "zod";
import { describeSubject, formatFieldPath, parseOrThrow, ValidationError } from "./validation-error.js";

describe("formatFieldPath", () => {
  it("writes fields with dots, indexes and odd keys in brackets", () => {
    expect(formatFieldPath(["spec", "cidrs", 0, "cidr"])).toBe("spec.cidrs[0].cidr");
    expect(formatFieldPath(["spec", "hard", "requests.cpu"])).toBe("spec.hard[requests.cpu]");
    expect(formatFieldPath(["spec", "hard", "pods"])).toBe("spec.hard.pods");
    expect(formatFieldPath([])).toBe("<root>");
  });
});

describe("parseOrThrow", () => {
  const schema = z.object({ spec: z.object({ size: z.string(), count: z.number() }) });

  it("returns the parsed value", () => {
    expect(parseOrThrow(schema, { spec: { size: "1", count: 2 } }, "Thing")).toEqual({ spec: { size: "1", count: 2 } });
  });

  it("throws a ValidationError listing every bad field", () => {
    let error: unknown;
    try {
      parseOrThrow(schema, { spec: { size: 1, count: "x" } }, 'Thing "a"');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    const { issues, message, subject } = error as ValidationError;
    expect(subject).toBe('Thing "a"');
    expect(issues.map((i) => i.path)).toEqual(["spec.size", "spec.count"]);
    expect(message).toMatch(/^Thing "a" is invalid: spec\.size: .+; spec\.count: /);
  });
});

describe("describeSubject", () => {
  it("adds the name when there is one", () => {
    expect(describeSubject("TenantCluster", { metadata: { name: "dev" } })).toBe('TenantCluster "dev"');
    expect(describeSubject("TenantCluster", null)).toBe("TenantCluster");
    expect(describeSubject("TenantCluster", { metadata: { name: 3 } })).toBe("TenantCluster");
  });
});
