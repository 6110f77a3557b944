/** A Kubernetes `Status` cause: which field the server refused and why. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** The part of a Kubernetes `Status` body that callers act on. */
export interface ApiStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; kind?: string; causes?: StatusCause[] };
}

/** The object a request was about, for error messages that name it. */
export interface RequestTarget {
  kind: string;
  name: string;
  namespace?: string | undefined;
}

/**
 * An answer of the API server with a non-2xx status. `code` is the HTTP status (the shape
 * `httpStatusOf` and `normalizeError` classify), `body` the server's Status; an answer that is
 * not a JSON object (a proxy's HTML page) keeps its first KiB as `body.message`. The message
 * names the request and quotes the server: `POST /api/v1/x: HTTP 403: <Status message>`.
 * The JsonClient throws only its subclass {@link KubeApiError}.
 */
export class ApiError extends Error {
  readonly code: number;
  readonly body: ApiStatus;

  /** `body` is the Status or the answer's text as received; `what` names the request (`POST /api/v1/x`). */
  constructor(code: number, body: ApiStatus | string, what: string) {
    const status = typeof body === "string" ? statusFromText(body) : body;
    super(`${what}: HTTP ${code}${status.message ? `: ${status.message}` : ""}`);
    this.name = "ApiError";
    this.code = code;
    this.body = status;
  }
}

/**
 * The API server's refusal of one request, as the JsonClient (and so Objects and the leader
 * elector) throws it: an {@link ApiError} that also keeps the method, the path and, when the
 * caller named one, the object the request was about.
 */
export class KubeApiError extends ApiError {
  readonly method: string;
  readonly path: string;
  /** The object the request was about, when the caller named one. */
  readonly target: RequestTarget | undefined;

  constructor(method: string, path: string, code: number, body: ApiStatus | string, target?: RequestTarget) {
    super(code, body, `${method} ${path}`);
    this.name = "KubeApiError";
    this.method = method;
    this.path = path;
    this.target = target;
  }

  /** True for a refused write (create, apply, patch, update): the request reached the server and was judged. */
  get isWrite(): boolean {
    return this.method === "POST" || this.method === "PUT" || this.method === "PATCH";
  }
}

/** The Status in an answer's text; text that is not a JSON object becomes the message, cut to a KiB. */
export function statusFromText(text: string): ApiStatus {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as ApiStatus;
  } catch {
    // not JSON: kept as text below
  }
  return text === "" ? {} : { message: text.slice(0, 1024) };
}
