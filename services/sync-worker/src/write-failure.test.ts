import { ApiError } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { hostAnswerOf, WriteFailure } from "./write-failure.js";

const status = (code: number, reason: string, message: string) =>
  new ApiError(code, JSON.stringify({ kind: "Status", status: "Failure", reason, message, code }), "POST /api/v1/x");

describe("hostAnswerOf", () => {
  it("takes the status code, reason and message from the API server's Status", () => {
    const quota = 'pods "web" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1';
    expect(hostAnswerOf(status(403, "Forbidden", quota), "Create")).toEqual({
      code: 403,
      reason: "Forbidden",
      message: quota,
      attempted: "Create",
    });
    expect(hostAnswerOf(status(422, "Invalid", 'Service "s" is invalid: spec.x'))).toMatchObject({
      code: 422,
      reason: "Invalid",
    });
  });

  it("names the reason from the code when the body has none, and says when no answer came", () => {
    expect(hostAnswerOf(new ApiError(503, "upstream connect error", "PUT /x"))).toMatchObject({
      code: 503,
      reason: "ServiceUnavailable",
    });
    const timeout = Object.assign(new Error("POST /api/v1/pods: timed out"), { code: "ETIMEDOUT" });
    expect(hostAnswerOf(timeout, "Update")).toEqual({
      code: 0,
      reason: "ETIMEDOUT",
      message: "POST /api/v1/pods: timed out",
      attempted: "Update",
    });
  });

  it("is what a WriteFailure's cause says", () => {
    const d = {
      tenant: "dev",
      action: "Create" as const,
      kind: "Pod",
      tenantRef: { namespace: "shop", name: "web" },
      hostRef: { namespace: "tp-dev", name: "web-x-shop-x-dev" },
      reason: "host Pod absent",
    };
    const failure = new WriteFailure(d, "Create", status(403, "Forbidden", "no"));
    expect(failure.message).toBe("Create Pod tp-dev/web-x-shop-x-dev failed");
    expect(hostAnswerOf(failure.cause, failure.attempted)).toMatchObject({ code: 403, attempted: "Create" });
  });
});

describe("hostAnswerOf with the tenant's text echoed back", () => {
  it("keeps at most 1 KiB of the host's message and reason, cut and marked", () => {
    const echoed = `ConfigMap "big" is invalid: data[k]: Invalid value: "${"é".repeat(200_000)}": too long`;
    const answer = hostAnswerOf(status(422, `Invalid${"x".repeat(5_000)}`, echoed), "Update");
    expect(Buffer.byteLength(answer.message)).toBeLessThanOrEqual(1024);
    expect(answer.message.startsWith('ConfigMap "big" is invalid: data[k]: Invalid value: "éé')).toBe(true);
    expect(answer.message.endsWith("…(truncated)")).toBe(true);
    expect(Buffer.byteLength(answer.reason)).toBeLessThanOrEqual(1024);
    expect(answer.reason.endsWith("…(truncated)")).toBe(true);
    // A short answer is kept whole.
    expect(hostAnswerOf(status(403, "Forbidden", "no"))).toMatchObject({ reason: "Forbidden", message: "no" });
  });
});
