import { TerminalError, TransientError } from "@tenantplane/runtime";
import { describe, expect, it } from "vitest";
import { settlementFor, UNCLASSIFIED_RETRY_LIMIT } from "./settlement.js";

describe("settlementFor", () => {
  it("acks success", () => {
    expect(settlementFor(undefined, 1)).toEqual({ outcome: "ack" });
  });

  it("naks transient errors with a delay that grows with deliveries", () => {
    const first = settlementFor(new TransientError("conflict"), 1);
    expect(first).toMatchObject({ outcome: "nak", reason: "conflict", waiting: false });
    const ceilings = [1, 5, 10].map((n) => {
      const s = settlementFor(Object.assign(new Error("x"), { code: 503 }), n);
      return s.outcome === "nak" ? s.delayMs : -1;
    });
    expect(ceilings.every((d) => d >= 500 && d <= 60_000)).toBe(true);
  });

  it("polls at the pace a waiting error asks for", () => {
    const waiting = new TransientError("pod not ready", { retryAfterMs: 3000 });
    expect(settlementFor(waiting, 9)).toMatchObject({ outcome: "nak", delayMs: 3000, waiting: true });
    expect(settlementFor(waiting, 11)).toMatchObject({ delayMs: 6000 });
    expect(settlementFor(waiting, 31)).toMatchObject({ delayMs: 24_000 });
    expect(settlementFor(waiting, 500)).toMatchObject({ delayMs: 60_000 });
  });

  it("retries an unclassified error a bounded number of times, classified transient ones without end", () => {
    const unknown = new Error("something nobody classified");
    expect(settlementFor(unknown, UNCLASSIFIED_RETRY_LIMIT - 1).outcome).toBe("nak");
    expect(settlementFor(unknown, UNCLASSIFIED_RETRY_LIMIT)).toMatchObject({
      outcome: "term",
      reason: expect.stringContaining(`after ${UNCLASSIFIED_RETRY_LIMIT} deliveries`),
    });
    expect(settlementFor(Object.assign(new Error("x"), { code: 503 }), 1000).outcome).toBe("nak");
  });

  it("terms terminal errors with the code in the reason", () => {
    expect(settlementFor(new TerminalError("bad spec", { code: "Invalid" }), 1)).toEqual({
      outcome: "term",
      reason: "Invalid: bad spec",
    });
    expect(settlementFor(Object.assign(new Error("forbidden"), { code: 403 }), 1)).toMatchObject({ outcome: "term" });
  });
});
