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
 * An HTTP error answered by the API server. `code` is the HTTP status (the shape
 * `httpStatusOf` and `normalizeError` classify), `body` the server's Status.
 */
export class KubeApiError extends Error {
  readonly code: number;
  readonly body: ApiStatus;
  readonly method: string;
  readonly path: string;
  /** The object the request was about, when the caller named one. */
  readonly target: RequestTarget | undefined;

  constructor(method: string, path: string, code: number, body: ApiStatus, target?: RequestTarget) {
    super(body.message || `${method} ${path}: HTTP ${code}`);
    this.name = "KubeApiError";
    this.code = code;
    this.body = body;
    this.method = method;
    this.path = path;
    this.target = target;
  }

  /** True for a refused write (create, apply, patch, update): the request reached the server and was judged. */
  get isWrite(): boolean {
    return this.method === "POST" || this.method === "PUT" || this.method === "PATCH";
  }
}
