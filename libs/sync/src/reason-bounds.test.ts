import { describe, expect, it } from "vitest";
import { boundedReason, describeViolations, tenantText } from "./internal/violation.js";

const bytes = (s: string) => Buffer.byteLength(s);

describe("reasons carry at most 1 KiB of tenant text", () => {
  it("cuts one tenant value to 200 bytes, marked, whatever its characters", () => {
    for (const ch of ["x", "é", "😀"]) {
      const quoted = tenantText(ch.repeat(100_000));
      expect(bytes(quoted)).toBeLessThanOrEqual(200);
      expect(quoted.endsWith("…(truncated)")).toBe(true);
    }
    expect(tenantText("short")).toBe("short");
  });

  it("bounds a whole reason to 1 KiB, marked", () => {
    const reason = boundedReason(`refused: ${"😀".repeat(10_000)}`);
    expect(bytes(reason)).toBeLessThanOrEqual(1024);
    expect(reason.startsWith("refused: 😀")).toBe(true);
    expect(reason.endsWith("…(truncated)")).toBe(true);
    expect(boundedReason("fine")).toBe("fine");
  });

  it("lists violations while they fit, so the count of the rest survives the bound", () => {
    const big = (i: number) => ({
      field: `metadata.annotations[${tenantText("k".repeat(500), 128)}]`,
      problem: `value ${tenantText(`${i}${"v".repeat(5_000)}`)} is forbidden`,
    });
    const described = describeViolations(Array.from({ length: 10 }, (_, i) => big(i)));
    expect(described).toMatch(/; and \d+ more$/);
    expect(bytes(boundedReason(`refused by host rules: ${described}`))).toBe(
      bytes(`refused by host rules: ${described}`),
    );
    const small = describeViolations([
      { field: "a", problem: "p" },
      { field: "b", problem: "q" },
    ]);
    expect(small).toBe("a: p; b: q");
  });
});
