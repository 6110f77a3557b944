import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeConfigFor, localCertificate } from "./internal/test-tls.js";
import { JsonClient } from "./json-client.js";

// A local TLS endpoint (the client pools only TLS connections itself, as API servers speak
// TLS): watches stay open until the client leaves; anything else answers at once.
let server: https.Server;
let ca: string;
let openWatches = 0;

beforeAll(async () => {
  const { cert, key } = localCertificate();
  ca = cert;
  server = https.createServer({ cert: ca, key }, (req, res) => {
    const url = new URL(req.url ?? "", "https://x");
    res.writeHead(200, { "Content-Type": "application/json" });
    if (url.searchParams.get("watch") === "true") {
      openWatches++;
      res.write("\n");
      req.on("close", () => openWatches--);
      return;
    }
    res.end(JSON.stringify({ kind: "Status", status: "Success" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(maxSockets: number): JsonClient {
  return new JsonClient(kubeConfigFor(server, ca), { maxSockets, timeoutMs: 5_000 });
}

describe("JsonClient connections", () => {
  it("answers requests while more watches are open than its request pool has sockets", async () => {
    const c = client(2);
    const abort = new AbortController();
    const watches = Array.from({ length: 5 }, () => c.stream("/api/v1/pods", { watch: true }, abort.signal));
    // A watch opens its connection on the generator's first next().
    const reading = watches.map((w) => w.next().catch(() => undefined));
    await expect.poll(() => openWatches, { timeout: 5_000 }).toBe(5);
    const answers = await Promise.all([1, 2, 3].map(() => c.request<{ status: string }>("GET", "/api/v1/pods/x")));
    expect(answers.map((a) => a.status)).toEqual(["Success", "Success", "Success"]);
    abort.abort();
    await Promise.all(reading);
  });
});
