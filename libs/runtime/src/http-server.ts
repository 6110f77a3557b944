import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** Health and metrics endpoints of a service. */
export interface HttpServerOptions {
  port: number;
  host?: string;
  registry: Registry;
  /** Ready means: connected and consuming. Liveness only means the event loop answers. */
  ready: () => boolean;
}

/** A running health server; `close` stops accepting and resolves when idle. */
export interface RunningHttpServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves /healthz, /readyz and /metrics; everything else is 404. */
export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    } else if (path === "/readyz") {
      const ok = opts.ready();
      res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(ok ? "ok" : "not ready");
    } else if (path === "/metrics") {
      opts.registry.metrics().then(
        (body) => res.writeHead(200, { "content-type": opts.registry.contentType }).end(body),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
