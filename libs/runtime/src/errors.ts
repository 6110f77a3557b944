/**
 * The error family every service speaks. A transient error is worth retrying
 * (nak with backoff); a terminal one is not (term, and say why).
 */
export class TenantplaneError extends Error {
  readonly code: string;
  readonly transient: boolean;
  /** For transient errors that know when to look again (e.g. waiting for a pod): the retry delay. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, opts: { code: string; transient: boolean; cause?: unknown; retryAfterMs?: number }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = opts.code;
    this.transient = opts.transient;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Retrying later may succeed: timeouts, conflicts, throttling, 5xx, lost connections. */
export class TransientError extends TenantplaneError {
  constructor(message: string, opts: { code?: string; cause?: unknown; retryAfterMs?: number } = {}) {
    super(message, { ...opts, code: opts.code ?? "Transient", transient: true });
  }
}

/** Retrying cannot help until the input changes: invalid specs, forbidden requests, bad messages. */
export class TerminalError extends TenantplaneError {
  constructor(message: string, opts: { code?: string; cause?: unknown } = {}) {
    super(message, { code: opts.code ?? "Terminal", transient: false, cause: opts.cause });
  }
}

const TRANSIENT_NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * Turns anything thrown into a TenantplaneError. HTTP-shaped errors (a numeric
 * `code` 100-599, as the Kubernetes client throws) are classified by status:
 * 408/409/425/429/5xx are transient, other 4xx terminal. Network errors are
 * transient; unknown errors are transient with code `Unknown`, because dropping work
 * on a bug we have not classified is worse than retrying it a bounded number of
 * times: the messaging settlement policy terms an `Unknown` error after a fixed
 * number of deliveries (UNCLASSIFIED_RETRY_LIMIT), while consumers themselves allow
 * unlimited deliveries so that waiting for a known condition never runs out.
 */
export function normalizeError(err: unknown): TenantplaneError {
  if (err instanceof TenantplaneError) return err;
  const status = httpStatusOf(err);
  const message = describe(err);
  if (status !== undefined) {
    const transient = status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
    return transient
      ? new TransientError(message, { code: `HTTP${status}`, cause: err })
      : new TerminalError(message, { code: `HTTP${status}`, cause: err });
  }
  const sysCode = systemCodeOf(err);
  if (sysCode !== undefined && TRANSIENT_NETWORK_CODES.has(sysCode)) {
    return new TransientError(message, { code: sysCode, cause: err });
  }
  if (err instanceof Error && err.name === "ZodError") {
    return new TerminalError(message, { code: "Invalid", cause: err });
  }
  return new TransientError(message, { code: "Unknown", cause: err });
}

/** The HTTP status carried by an error, if it has one. */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "number" && code >= 100 && code < 600) return code;
  const status = (err as { statusCode?: unknown }).statusCode;
  if (typeof status === "number" && status >= 100 && status < 600) return status;
  return undefined;
}

function systemCodeOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** A one-line description safe for logs and conditions (Kubernetes Status messages preferred). */
export function describe(err: unknown): string {
  if (typeof err === "object" && err !== null) {
    const body = (err as { body?: unknown }).body;
    const parsed = typeof body === "string" ? safeJson(body) : body;
    if (parsed && typeof parsed === "object" && typeof (parsed as { message?: unknown }).message === "string") {
      return (parsed as { message: string }).message;
    }
  }
  if (err instanceof Error) return err.message.split("\n")[0] ?? err.name;
  return String(err);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
