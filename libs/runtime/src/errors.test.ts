import { describe, expect, it } from "vitest";
import * as z from "zod";
import { TerminalError, TransientError, normalizeError } from "./errors.js";

describe("normalizeError", () => {
  it.each([408, 409, 429, 500, 503])("treats HTTP %i as transient", (code) => {
    const err = normalizeError(Object.assign(new Error("x"), { code }));
    expect(err).toBeInstanceOf(TransientError);
    expect(err.code).toBe(`HTTP${code}`);
  });

  it.each([400, 403, 404, 422])("treats HTTP %i as terminal", (code) => {
    expect(normalizeError(Object.assign(new Error("x"), { code }))).toBeInstanceOf(TerminalError);
  });

  it("prefers the Kubernetes Status message from the body", () => {
    const err = { code: 422, body: JSON.stringify({ kind: "Status", message: "spec.size: Invalid value" }) };
    expect(normalizeError(err).message).toBe("spec.size: Invalid value");
  });

  it("treats network errors as transient, found through the cause chain", () => {
    const inner = Object.assign(new Error("connect"), { code: "ECONNREFUSED" });
    const err = normalizeError(new Error("fetch failed", { cause: inner }));
    expect(err.transient).toBe(true);
    expect(err.code).toBe("ECONNREFUSED");
  });

  it("treats schema violations as terminal", () => {
    const parsed = z.object({ a: z.string() }).safeParse({});
    expect(normalizeError(parsed.error).transient).toBe(false);
  });

  it("returns tenantplane errors unchanged", () => {
    const original = new TerminalError("nope", { code: "Bad" });
    expect(normalizeError(original)).toBe(original);
  });
});
