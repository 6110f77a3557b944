import {
  Agent as HttpAgent,
  request as httpRequest,
  type Agent,
  type ClientRequest,
  type IncomingMessage,
} from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { KubeApiError, statusFromText, type RequestTarget } from "./api-error.js";
import { resourcePath as pathOf } from "./internal/resource-paths.js";
import { secureContextOf, sameTls, tlsAgent, tlsOf, type TlsIdentity } from "./internal/tls-agent.js";
import type { RequestBudget } from "./token-bucket.js";

/** Query parameters; undefined and empty values are left out (the API server reads both as unset). */
export type Query = Record<string, string | number | boolean | undefined>;

/** How a {@link JsonClient} connects and paces its requests. */
export interface JsonClientOptions {
  /** Milliseconds a request may wait for its answer (the socket idle) before it fails as ETIMEDOUT; default 30 s. */
  timeoutMs?: number;
  /** Sent as User-Agent, so the API server's audit log and metrics tell each service apart. */
  userAgent?: string;
  /** Request connections kept open at once (default 64); watches have their own, uncapped. */
  maxSockets?: number;
  /**
   * Keep connections open between requests (default true). A client used now and then (a
   * readiness probe) says false: it keeps only its TLS context, which is the costly part.
   */
  keepAlive?: boolean;
  /** Paces every request and watch (QPS and burst), so many tenants at once cannot flood the API server. */
  budget?: RequestBudget;
  /** Told the size of every piece of an answer or watch stream as it arrives (bytes read, for a metric). */
  onReceived?: (bytes: number) => void;
}

/** One request's parts beside method and path. */
export interface JsonRequest {
  query?: Query;
  /** Sent exactly as `JSON.stringify` writes it. */
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** The object the request is about, carried into the KubeApiError. */
  target?: RequestTarget;
  /** Overrides the client's `timeoutMs` for this request. */
  timeoutMs?: number;
  /** The Accept header (default `application/json`), e.g. {@link METADATA_ONLY} for an answer without the object's body. */
  accept?: string;
}

/** What a watch stream may do beside parsing each line whole. */
export interface StreamOptions {
  large?: LargeLines;
  /** The Accept header, e.g. {@link METADATA_ONLY}. */
  accept?: string;
}

/**
 * Accept headers asking the API server for objects as `PartialObjectMetadata` (metadata only,
 * the way client-go's metadata informers read): for one object, a write's answer or a watch's
 * events, and for a list. Plain JSON follows as the fallback for a server (an aggregated API)
 * that cannot convert, so a caller must still accept whole objects.
 */
export const METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json";
export const METADATA_ONLY_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json";

/** The core REST path of a namespaced kind's collection or object, e.g. `/api/v1/namespaces/a/pods/b`. */
export function resourcePath(
  apiVersion: string,
  plural: string,
  namespace?: string | undefined,
  name?: string | undefined,
): string {
  return pathOf(apiVersion, { resource: plural, namespaced: namespace !== undefined }, namespace, name);
}

/**
 * The connections of one TLS identity: requests in a capped pool, watches in an uncapped one
 * (each watch holds its connection for minutes; sharing the capped pool would let enough open
 * watches take every socket and leave every request queued behind them for good).
 */
interface Pool {
  tls: TlsIdentity;
  requests: Agent;
  watches: Agent;
}

/**
 * The JSON client for one cluster, used by every service, Objects and the leader elector. The
 * KubeConfig gives the server, TLS and credentials, applied per request: a rotated token, and a
 * client certificate or CA read from files, are picked up by the next request (a new TLS
 * identity gets new pools; the old pools' idle connections are closed, those in use finish).
 * Bodies go out as plain `JSON.stringify` (never a typed model serialiser, which drops keys such
 * as `from` or `default`) and answers are parsed JSON, never model instances. A non-2xx answer
 * rejects with a {@link KubeApiError}. Credentials are never logged.
 */
export class JsonClient {
  /** The server URL without a trailing slash; request paths are appended (a path prefix stays). */
  private readonly server: string;
  private readonly proxied: boolean;
  private pool: Pool | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly opts: JsonClientOptions = {},
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    this.server = cluster.server.replace(/\/+$/, "");
    this.proxied = !!cluster.proxyUrl;
  }

  /** The server URL without credentials, safe to log. */
  get serverUrl(): string {
    return new URL(this.server).origin;
  }

  /** Closes the pooled connections (a client for a one-off probe must not leave them open). */
  close(): void {
    this.pool?.requests.destroy();
    this.pool?.watches.destroy();
    this.pool = undefined;
  }

  /** One request; resolves with the parsed body, rejects with {@link KubeApiError} on a non-2xx status. */
  async request<T>(method: string, path: string, init: JsonRequest = {}): Promise<T> {
    const res = await this.open(method, path, init, false);
    const text = await readAll(res, this.opts.onReceived);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw new KubeApiError(method, path, status, statusFromText(text), init.target);
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  /**
   * Opens a streaming GET (a watch) and yields each newline-delimited JSON value.
   * Ends when the server closes the stream or `signal` aborts.
   */
  async *stream(path: string, query: Query, signal: AbortSignal, opts: StreamOptions = {}): AsyncGenerator<unknown> {
    const { large, accept } = opts;
    const res = await this.open("GET", path, { query, signal, ...(accept === undefined ? {} : { accept }) }, true);
    if ((res.statusCode ?? 0) !== 200) {
      throw new KubeApiError(
        "GET",
        path,
        res.statusCode ?? 0,
        statusFromText(await readAll(res, this.opts.onReceived)),
      );
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
        this.opts.onReceived?.(chunk.length);
        for (const line of lines.pushBytes(chunk)) {
          const peeked = large !== undefined && line.length >= large.minBytes ? large.peek(line) : undefined;
          if (peeked !== undefined) yield peeked;
          else {
            const text = line.toString("utf8").trim();
            if (text !== "") yield JSON.parse(text);
          }
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

  private async open(method: string, path: string, init: JsonRequest, watch: boolean): Promise<IncomingMessage> {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(init.query ?? {})) {
      if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
    }
    await this.opts.budget?.wait();
    const headers: Record<string, string> = { Accept: init.accept ?? "application/json" };
    if (this.opts.userAgent) headers["User-Agent"] = this.opts.userAgent;
    const options: RequestOptions = { method, headers };
    // Per request: a token, and certificate or CA files, may have rotated since the last one.
    await this.kc.applyToHTTPSOptions(options);
    const plain = url.protocol === "http:";
    // Through a proxy the kubeconfig's own agent (a proxy agent it made for this request) carries
    // the request; otherwise this client's pools do.
    if (!this.proxied) options.agent = this.agentFor(options, plain, watch);
    // One JSON.stringify per write; a large body is encoded to bytes once, and written in pieces.
    const text = init.body === undefined ? undefined : JSON.stringify(init.body);
    const body = text !== undefined && text.length > BODY_PIECE_BYTES ? Buffer.from(text, "utf8") : text;
    if (body !== undefined) {
      headers["Content-Type"] = init.contentType ?? "application/json";
      headers["Content-Length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.length);
    }
    const send = plain ? httpRequest : httpsRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, { ...options, ...(init.signal ? { signal: init.signal } : {}) }, resolve);
      req.on("error", reject);
      if (!watch) {
        const timeoutMs = init.timeoutMs ?? this.opts.timeoutMs ?? REQUEST_TIMEOUT_MS;
        req.setTimeout(timeoutMs, () =>
          req.destroy(new TimeoutError(`${method} ${path}: no answer within ${timeoutMs} ms`)),
        );
      }
      writeBody(req, body).catch((err: unknown) => req.destroy(err instanceof Error ? err : new Error(String(err))));
    });
  }

  // The TLS settings (CA, client certificate) belong to the pool, not to each request: a request
  // with other ones (rotated files) gets a new pool, and the old one is retired.
  private agentFor(options: RequestOptions, plain: boolean, watch: boolean): Agent {
    const tls = tlsOf(options);
    if (this.pool === undefined || !sameTls(this.pool.tls, tls)) {
      // Made first: material that does not load (a new certificate whose key is not written yet)
      // fails this request only, and the old pool stays until a new one is made.
      const next = this.newPool(tls, plain);
      if (this.pool) {
        retire(this.pool.requests);
        retire(this.pool.watches);
      }
      this.pool = next;
    }
    return watch ? this.pool.watches : this.pool.requests;
  }

  private newPool(tls: TlsIdentity, plain: boolean): Pool {
    const keepAlive = this.opts.keepAlive ?? true;
    const requests = { keepAlive, maxSockets: this.opts.maxSockets ?? MAX_SOCKETS };
    const watches = { keepAlive };
    if (plain) return { tls, requests: new HttpAgent(requests), watches: new HttpAgent(watches) };
    const context = secureContextOf(tls);
    return { tls, requests: tlsAgent(tls, context, requests), watches: tlsAgent(tls, context, watches) };
  }
}

/**
 * Stops `agent` pooling: its idle connections close now, those in use (a request on its way, an
 * open watch) when their answer ends, through Node's hook for whether a freed socket is kept.
 */
function retire(agent: Agent): void {
  agent.keepSocketAlive = () => false;
  for (const idle of Object.values(agent.freeSockets)) for (const socket of idle ?? []) socket.destroy();
}

/** Request connections per client by default; more requests wait for one. */
const MAX_SOCKETS = 64;

// A request the server does not answer in this time fails as ETIMEDOUT, which the error
// normaliser treats as transient.
const REQUEST_TIMEOUT_MS = 30_000;

/** Longest run of watch events handled before the event loop is served. */
const STREAM_SLICE_MS = 10;

/** A request body is written (and, over TLS, encrypted) this many bytes at a time. */
const BODY_PIECE_BYTES = 64 * 1024;

/**
 * Sends `body` and ends the request. A large body goes in pieces with the event loop served
 * between them: written whole, a megabyte object is encrypted in one synchronous stretch
 * (tens of ms) when the socket takes it.
 */
async function writeBody(req: ClientRequest, body: string | Buffer | undefined): Promise<void> {
  if (Buffer.isBuffer(body)) {
    for (let at = 0; at < body.length; at += BODY_PIECE_BYTES) {
      if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      // Failed or timed out meanwhile: its error is already reported.
      if (req.destroyed) return;
      req.write(body.subarray(at, at + BODY_PIECE_BYTES));
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
    return this.pushBytes(bytes)
      .map((line) => line.toString("utf8").trim())
      .filter((line) => line !== "");
  }

  /** The lines `chunk` completes, as bytes (not decoded, not trimmed), empty ones left out. */
  pushBytes(bytes: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let from = 0;
    for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE, from)) {
      this.pieces.push(bytes.subarray(from, nl));
      const line = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces);
      this.pieces = [];
      if (line.length > 0) out.push(line);
      from = nl + 1;
    }
    if (from < bytes.length) this.pieces.push(bytes.subarray(from));
    return out;
  }
}

/**
 * Lines of a stream long enough to be worth a look before they are decoded and parsed: `peek`
 * gives what to yield for one instead (from its bytes alone), or undefined to parse it whole.
 */
export interface LargeLines {
  minBytes: number;
  peek(line: Buffer): unknown;
}

const NEWLINE = 0x0a;

class TimeoutError extends Error {
  readonly code = "ETIMEDOUT";
  constructor(message: string) {
    super(message);
    this.name = "TimeoutError";
  }
}

async function readAll(res: IncomingMessage, onReceived?: (bytes: number) => void): Promise<string> {
  const pieces: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) {
    onReceived?.(chunk.length);
    pieces.push(chunk);
  }
  return Buffer.concat(pieces).toString("utf8");
}
