import http from "node:http";
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { KubeApiError, type ApiStatus, type RequestTarget } from "../api-error.js";
import type { RequestBudget } from "../token-bucket.js";
import { sameTls, tlsAgent, tlsOf, type TlsIdentity } from "./tls-agent.js";

/** One request: the body is sent exactly as `JSON.stringify` writes it. */
export interface RestRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** The object the request is about, carried into a KubeApiError. */
  target?: RequestTarget;
  /** Milliseconds to wait for the answer; defaults to 30 s. */
  timeoutMs?: number;
}

// A request the server does not answer in this time fails as ETIMEDOUT, which
// the error normaliser treats as transient.
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The JSON wire format of a request body. Plain JSON, never the typed client's
 * model serialiser: that one maps known properties only (`_from`, `_default`),
 * so a plain object's `from` or `default` would be dropped on the way.
 */
export function encodeBody(body: unknown): string {
  return JSON.stringify(body);
}

/**
 * Minimal JSON client for the Kubernetes API that uses the KubeConfig only for
 * the server address, TLS and credentials. Bodies go out as plain JSON and come
 * back as plain JSON: no model classes on either side.
 */
export class RestClient {
  private pool: { tls: TlsIdentity; agent: https.Agent } | undefined;

  constructor(
    private readonly kc: KubeConfig,
    /** Sent as User-Agent, so the API server's audit log and metrics tell each service apart. */
    private readonly userAgent?: string,
    /** Paces every request (QPS and burst), so many tenants at once cannot flood the API server. */
    private readonly budget?: RequestBudget,
  ) {}

  /** Sends one request and parses the JSON answer; a non-2xx answer throws KubeApiError. */
  async request<T>(req: RestRequest): Promise<T> {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) throw new Error("kubeconfig has no current cluster");
    await this.budget?.wait();
    const url = new URL(server.replace(/\/+$/, "") + req.path);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
    }
    const options: https.RequestOptions = { method: req.method, headers: { Accept: "application/json" } };
    // Applied per request so rotated service-account tokens and exec credentials are picked up.
    await this.kc.applyToHTTPSOptions(options);
    const payload = req.body === undefined ? undefined : encodeBody(req.body);
    const headers = { ...(options.headers as Record<string, string>) };
    if (this.userAgent) headers["User-Agent"] = this.userAgent;
    if (payload !== undefined) {
      headers["Content-Type"] = req.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(payload));
    }
    const plain = url.protocol === "http:";
    // The kubeconfig's agent is a TLS agent; a plain-HTTP server (a local proxy) takes none.
    if (plain) delete options.agent;
    // KubeConfig makes a new agent on every call, so each request would open (and hand-shake)
    // a TLS connection of its own; one keep-alive pool per TLS identity serves them all. A
    // proxy keeps the kubeconfig's own agent.
    else if (!this.kc.getCurrentCluster()?.proxyUrl) options.agent = this.pooledAgent(options);
    const transport = plain ? http : https;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const timeoutMs = req.timeoutMs ?? REQUEST_TIMEOUT_MS;
      const r = transport.request(url, { ...options, headers, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      r.on("timeout", () =>
        r.destroy(
          Object.assign(new Error(`${req.method} ${req.path}: no answer within ${timeoutMs} ms`), {
            code: "ETIMEDOUT",
          }),
        ),
      );
      r.on("error", reject);
      if (payload !== undefined) r.write(payload);
      r.end();
    });
    const parsed = parseJson(text);
    if (status < 200 || status >= 300) {
      const body: ApiStatus =
        parsed && typeof parsed === "object" ? (parsed as ApiStatus) : { message: text.slice(0, 1024) || undefined };
      throw new KubeApiError(req.method, req.path, status, body, req.target);
    }
    return parsed as T;
  }

  // Rotated credentials (a renewed client certificate) get a fresh pool; the old one's idle
  // connections are closed, those in use finish their request first.
  private pooledAgent(options: https.RequestOptions): https.Agent {
    const tls = tlsOf(options);
    if (this.pool === undefined || !sameTls(this.pool.tls, tls)) {
      for (const idle of Object.values(this.pool?.agent.freeSockets ?? {}))
        for (const socket of idle ?? []) socket.destroy();
      this.pool = { tls, agent: tlsAgent(tls, { keepAlive: true, maxSockets: MAX_SOCKETS }) };
    }
    return this.pool.agent;
  }
}

/** At most this many connections per client to one API server; more requests wait for one. */
const MAX_SOCKETS = 32;

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
