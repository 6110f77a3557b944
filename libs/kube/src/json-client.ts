import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { tlsAgent, tlsOf } from "./internal/tls-agent.js";

/** An API error with the server's HTTP status as `code`, as `httpStatusOf` and `normalizeError` expect. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: HTTP ${code}${statusMessage(body)}`);
    this.name = "ApiError";
  }
}

/** Query parameters; undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** The core REST path of a namespaced kind's collection or object, e.g. `/api/v1/namespaces/a/pods/b`. */
export function resourcePath(
  apiVersion: string,
  plural: string,
  namespace?: string | undefined,
  name?: string | undefined,
): string {
  const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${base}${ns}/${plural}${name === undefined ? "" : `/${encodeURIComponent(name)}`}`;
}

/**
 * A thin JSON client for one cluster: bodies are sent exactly as given (no typed model
 * serialiser, which drops keys such as `from` or `default`) and answers are parsed
 * JSON, never model instances. Credentials come from the KubeConfig and are never logged.
 */
export class JsonClient {
  private readonly server: URL;
  /** One keep-alive pool per client, so requests reuse TLS connections whatever the Node default. */
  private agent: HttpAgent | undefined;
  /**
   * Watches get their own uncapped pool: each holds its connection for minutes, and sharing
   * the capped request pool would let enough open watches (one per kind per tenant) take
   * every socket and leave every request queued behind them for good.
   */
  private watchAgent: HttpAgent | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly opts: {
      timeoutMs?: number;
      userAgent?: string;
      /** Request connections kept open at once (default 64); watches have their own, uncapped. */
      maxSockets?: number;
      /**
       * Keep connections open between requests (default true). A client used now and then (a
       * readiness probe) says false: it keeps only its TLS context, which is the costly part.
       */
      keepAlive?: boolean;
    } = {},
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    this.server = new URL(cluster.server);
  }

  /** The server URL without credentials, safe to log. */
  get serverUrl(): string {
    return this.server.origin;
  }

  /** Closes the pooled connections (a client for a one-off probe must not leave them open). */
  close(): void {
    this.agent?.destroy();
    this.watchAgent?.destroy();
    this.agent = undefined;
    this.watchAgent = undefined;
  }

  /** One request; resolves with the parsed body, rejects with {@link ApiError} on a non-2xx status. */
  async request<T>(
    method: string,
    path: string,
    init: { query?: Query; body?: unknown; contentType?: string; signal?: AbortSignal } = {},
  ) {
    const res = await this.open(method, path, init);
    const text = await readAll(res);
    if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
      throw new ApiError(res.statusCode ?? 0, text, `${method} ${path}`);
    }
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  /**
   * Opens a streaming GET (a watch) and yields each newline-delimited JSON value.
   * Ends when the server closes the stream or `signal` aborts.
   */
  async *stream(path: string, query: Query, signal: AbortSignal): AsyncGenerator<unknown> {
    const res = await this.open("GET", path, { query, signal, stream: true });
    if ((res.statusCode ?? 0) !== 200) {
      throw new ApiError(res.statusCode ?? 0, await readAll(res), `watch ${path}`);
    }
    const lines = new LineSplitter();
    let slice = performance.now();
    // A backlog of large events (a tenant writing megabytes) would otherwise be read, parsed and
    // handled in microtasks only: hand the event loop back every few ms, or timers and other
    // sockets (lease renewals, other tenants) wait for the whole backlog.
    const yieldIfDue = async () => {
      if (performance.now() - slice < STREAM_SLICE_MS) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
      slice = performance.now();
    };
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        for (const line of lines.push(chunk)) {
          yield JSON.parse(line);
          await yieldIfDue();
        }
        await yieldIfDue();
      }
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    } finally {
      res.destroy();
    }
  }

  private async open(
    method: string,
    path: string,
    init: { query?: Query; body?: unknown; contentType?: string; signal?: AbortSignal; stream?: boolean },
  ): Promise<IncomingMessage> {
    const url = new URL(path, this.server);
    for (const [key, value] of Object.entries(init.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const options: RequestOptions = {
      method,
      headers: {
        Accept: "application/json",
        ...(this.opts.userAgent ? { "User-Agent": this.opts.userAgent } : {}),
      } as Record<string, string>,
    };
    // Per request: credentials (a token file may rotate) come from the KubeConfig each time.
    await this.kc.applyToHTTPSOptions(options);
    options.agent = init.stream
      ? (this.watchAgent ??= this.newAgent(url, options, { keepAlive: false }))
      : (this.agent ??= this.newAgent(url, options, {
          keepAlive: this.opts.keepAlive ?? true,
          maxSockets: this.opts.maxSockets ?? 64,
        }));
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    const headers = options.headers as Record<string, string>;
    if (body !== undefined) {
      headers["Content-Type"] = init.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(body));
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, { ...options, ...(init.signal ? { signal: init.signal } : {}) }, resolve);
      req.on("error", reject);
      if (!init.stream) {
        req.setTimeout(this.opts.timeoutMs ?? 30_000, () => req.destroy(new TimeoutError(`${method} ${url.pathname}`)));
      }
      writeBody(req, body).catch((err: unknown) => req.destroy(err instanceof Error ? err : new Error(String(err))));
    });
  }

  // The server's TLS settings (CA, client certificate) belong to the pool, not to each request.
  private newAgent(url: URL, options: RequestOptions, pool: { keepAlive: boolean; maxSockets?: number }): HttpAgent {
    if (url.protocol !== "https:") return new HttpAgent(pool);
    return tlsAgent(tlsOf(options), pool);
  }
}

/** Longest run of watch events handled before the event loop is served. */
const STREAM_SLICE_MS = 10;

/** A request body is written (and, over TLS, encrypted) this many bytes at a time. */
const BODY_PIECE_BYTES = 64 * 1024;

/**
 * Sends `body` and ends the request. A large body goes in pieces with the event loop served
 * between them: written whole, a megabyte object is encrypted in one synchronous stretch
 * (tens of ms) when the socket takes it.
 */
async function writeBody(req: ClientRequest, body: string | undefined): Promise<void> {
  if (body !== undefined && body.length > BODY_PIECE_BYTES) {
    const bytes = Buffer.from(body, "utf8");
    for (let at = 0; at < bytes.length; at += BODY_PIECE_BYTES) {
      if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      // Failed or timed out meanwhile: its error is already reported.
      if (req.destroyed) return;
      req.write(bytes.subarray(at, at + BODY_PIECE_BYTES));
    }
  } else if (body !== undefined) req.write(body);
  req.end();
}

/**
 * Splits a byte stream into its non-empty lines, each read once: a chunk is searched for a
 * newline only itself and the pieces of a line are joined once, when its end arrives. (Appending
 * each chunk to one string and searching it from the start copies a megabyte line once per
 * chunk: tens of milliseconds of one synchronous stretch per event.) A newline byte never occurs
 * inside a multi-byte UTF-8 character, so lines split on bytes decode whole.
 */
export class LineSplitter {
  private pieces: Buffer[] = [];

  /** The lines `chunk` completes, trimmed, blank ones left out. */
  push(chunk: Buffer | string): string[] {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    const out: string[] = [];
    let from = 0;
    for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE, from)) {
      this.pieces.push(bytes.subarray(from, nl));
      const line = (this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces)).toString("utf8").trim();
      this.pieces = [];
      if (line !== "") out.push(line);
      from = nl + 1;
    }
    if (from < bytes.length) this.pieces.push(bytes.subarray(from));
    return out;
  }
}

const NEWLINE = 0x0a;

class TimeoutError extends Error {
  readonly code = "ETIMEDOUT";
  constructor(what: string) {
    super(`${what}: timed out`);
    this.name = "TimeoutError";
  }
}

async function readAll(res: IncomingMessage): Promise<string> {
  res.setEncoding("utf8");
  let text = "";
  for await (const chunk of res as AsyncIterable<string>) text += chunk;
  return text;
}

function statusMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    return typeof parsed.message === "string" ? `: ${parsed.message}` : "";
  } catch {
    return "";
  }
}
