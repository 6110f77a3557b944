import { describe, expect, it } from "vitest";
import { boundedText, MAX_DECISION_TEXT, TRUNCATED } from "./bounded-text.js";
import { DecisionSchema } from "./decision.js";
import { stampDecision } from "./publisher.js";

const bytes = (s: string) => Buffer.byteLength(s);

describe("boundedText", () => {
  it("keeps a text that fits, and cuts a longer one to the bound with the mark", () => {
    expect(boundedText("short")).toBe("short");
    const fits = "a".repeat(MAX_DECISION_TEXT);
    expect(boundedText(fits)).toBe(fits);
    const cut = boundedText("a".repeat(200_000));
    expect(bytes(cut)).toBe(MAX_DECISION_TEXT);
    expect(cut.endsWith(TRUNCATED)).toBe(true);
  });

  it("counts bytes, not characters, and never splits a character", () => {
    for (const ch of ["é", "€", "😀"]) {
      const cut = boundedText(ch.repeat(1_000), 100);
      expect(bytes(cut)).toBeLessThanOrEqual(100);
      expect(cut.endsWith(TRUNCATED)).toBe(true);
      expect([...cut.slice(0, -TRUNCATED.length)].every((c) => c === ch)).toBe(true);
    }
  });

  it("is idempotent and depends only on the prefix, so quoting a bounded text bounds alike", () => {
    const long = "ü".repeat(5_000);
    expect(boundedText(boundedText(long))).toBe(boundedText(long));
    expect(boundedText(`Invalid: ${boundedText(long)}`)).toBe(boundedText(`Invalid: ${long}`));
  });

  it("refuses a bound that leaves no room for the mark", () => {
    expect(() => boundedText("x".repeat(100), 5)).toThrow(RangeError);
  });
});

describe("a Decision's free text", () => {
  const planned = {
    tenant: "dev",
    action: "Fail" as const,
    kind: "ConfigMap",
    tenantRef: { namespace: "default", name: "big" },
    hostRef: { namespace: "tp-dev", name: "big-x-default-x-dev" },
    reason: `Invalid: ${"v".repeat(300_000)}`,
    error: { code: 422, reason: `Invalid${"r".repeat(5_000)}`, message: "m".repeat(300_000) },
  };

  it("carries at most 1 KiB per field whichever way it is parsed, marked where cut", () => {
    for (const d of [stampDecision(planned, "sync-worker"), DecisionSchema.parse(stampDecision(planned, "x"))]) {
      expect(bytes(d.reason)).toBeLessThanOrEqual(MAX_DECISION_TEXT);
      expect(bytes(d.error!.message)).toBeLessThanOrEqual(MAX_DECISION_TEXT);
      expect(bytes(d.error!.reason)).toBeLessThanOrEqual(MAX_DECISION_TEXT);
      expect(d.reason.startsWith("Invalid: vvv")).toBe(true);
      expect([d.reason, d.error!.message, d.error!.reason].every((t) => t.endsWith(TRUNCATED))).toBe(true);
      // The whole message on the stream stays a few KiB, whatever the tenant wrote.
      expect(bytes(JSON.stringify(d))).toBeLessThan(4 * 1024);
    }
  });

  it("leaves a reason within the bound as it was", () => {
    const d = stampDecision({ ...planned, reason: "host ConfigMap absent", error: undefined }, "sync-worker");
    expect(d.reason).toBe("host ConfigMap absent");
  });
});
