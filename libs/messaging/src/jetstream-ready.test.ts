import { JetStreamApiError } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { isJetStreamUnavailable, whenJetStreamAnswers } from "./jetstream-ready.js";

function named(name: string): Error {
  const err = new Error(name);
  err.name = name;
  return err;
}

describe("isJetStreamUnavailable", () => {
  it("retries what a forming cluster answers, not a refusal", () => {
    expect(isJetStreamUnavailable(named("TimeoutError"))).toBe(true);
    expect(isJetStreamUnavailable(named("NoResponders"))).toBe(true);
    expect(isJetStreamUnavailable(named("JetStreamNotEnabled"))).toBe(true);
    expect(
      isJetStreamUnavailable(
        new JetStreamApiError({ code: 503, err_code: 10008, description: "JetStream system temporarily unavailable" }),
      ),
    ).toBe(true);
    expect(
      isJetStreamUnavailable(
        new JetStreamApiError({ code: 400, err_code: 10065, description: "subjects overlap with an existing stream" }),
      ),
    ).toBe(false);
    expect(isJetStreamUnavailable(named("PermissionViolationError"))).toBe(false);
    expect(isJetStreamUnavailable("timeout")).toBe(false);
  });
});

describe("whenJetStreamAnswers", () => {
  it("waits out an unavailable JetStream and returns the task's result", async () => {
    let calls = 0;
    const retries: number[] = [];
    const result = await whenJetStreamAnswers(
      () => (++calls < 3 ? Promise.reject(named("TimeoutError")) : Promise.resolve("declared")),
      { onRetry: (_err, attempt) => retries.push(attempt), baseMs: 1, maxMs: 2 },
    );
    expect(result).toBe("declared");
    expect(calls).toBe(3);
    expect(retries).toEqual([1, 2]);
  });

  it("throws a refusal at once", async () => {
    let calls = 0;
    const refusal = new JetStreamApiError({ code: 400, err_code: 10058, description: "stream name already in use" });
    await expect(
      whenJetStreamAnswers(
        () => {
          calls++;
          return Promise.reject(refusal);
        },
        { onRetry: () => undefined, baseMs: 1 },
      ),
    ).rejects.toBe(refusal);
    expect(calls).toBe(1);
  });

  it("stops waiting when told to, with the last error", async () => {
    const halt = new AbortController();
    const timeout = named("TimeoutError");
    await expect(
      whenJetStreamAnswers(() => Promise.reject(timeout), {
        onRetry: () => halt.abort(),
        signal: halt.signal,
        baseMs: 10_000,
      }),
    ).rejects.toBe(timeout);
  });
});
