import { request } from "node:https";

/** TLS material for {@link httpsGet}. */
export interface TlsClientOptions {
  caPem: string;
  certPem?: string;
  keyPem?: string;
}

/**
 * GETs `url` over TLS trusting only `caPem`, with optional extra request headers; resolves with
 * status and body, never throws on HTTP errors.
 */
export async function httpsGet(
  url: string,
  tls: TlsClientOptions,
  options: { headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ status: number; body: string }> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "GET",
        ca: tls.caPem,
        cert: tls.certPem,
        key: tls.keyPem,
        headers: options.headers,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`GET ${url} timed out after ${timeoutMs}ms`)));
    req.on("error", reject);
    req.end();
  });
}
