import { boundedText, type DecisionError, type PlannedDecision } from "@tenantplane/messaging";
import { normalizeError } from "@tenantplane/runtime";

/** The host writes a Fail can be about. */
export type AttemptedWrite = NonNullable<DecisionError["attempted"]>;

/**
 * A host write of `decision` that threw: carries what was being written, so the failure can
 * be explained as a Fail Decision about that object. `cause` is what the host client threw.
 */
export class WriteFailure extends Error {
  constructor(
    readonly decision: PlannedDecision,
    readonly attempted: AttemptedWrite,
    override readonly cause: unknown,
  ) {
    super(`${attempted} ${decision.kind} ${decision.hostRef.namespace}/${decision.hostRef.name} failed`, { cause });
    this.name = "WriteFailure";
  }
}

/** Status reasons of HTTP codes, for an answer whose body carries none (a proxy's 502, a bare 500). */
const REASONS: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  408: "Timeout",
  409: "Conflict",
  410: "Gone",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/**
 * The host API server's answer in `err` as a Decision's `error`: HTTP status, the Status
 * reason and message from its body. An error without an HTTP answer (a timeout, a refused
 * connection) has code 0 and its system code as reason (`ETIMEDOUT`). The server's words echo
 * the tenant's fields (a 422 quotes the refused value whole), so reason and message are bounded
 * to a Decision's 1 KiB each, cut and marked, here where the Fail and its Events are made.
 */
export function hostAnswerOf(err: unknown, attempted?: AttemptedWrite): DecisionError {
  const e = normalizeError(err);
  const code = /^HTTP(\d{3})$/.exec(e.code)?.[1];
  const status = code === undefined ? undefined : Number(code);
  const body = statusBody(err);
  const reason = body?.reason || (status === undefined ? e.code : (REASONS[status] ?? "Unknown"));
  return {
    code: status ?? 0,
    reason: boundedText(reason),
    message: boundedText(body?.message || e.message),
    ...(attempted === undefined ? {} : { attempted }),
  };
}

// JsonClient's ApiError carries the parsed Status; an error of another client may carry the text.
function statusBody(err: unknown): { reason?: string; message?: string } | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const body = (err as { body?: unknown }).body;
  let parsed: unknown = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { reason, message } = parsed as { reason?: unknown; message?: unknown };
  return {
    ...(typeof reason === "string" ? { reason } : {}),
    ...(typeof message === "string" ? { message } : {}),
  };
}
