import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonClient } from "./json-client.js";

// A local TLS endpoint (the client pools only TLS connections itself, as API servers speak
// TLS): watches stay open until the client leaves; anything else answers at once.
let server: https.Server;
let ca: string;
let openWatches = 0;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "json-client-"));
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
      ...["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"],
      ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
    ],
    { stdio: "ignore" },
  );
  ca = readFileSync(join(dir, "cert.pem"), "utf8");
  const key = readFileSync(join(dir, "key.pem"), "utf8");
  rmSync(dir, { recursive: true });
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
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: "c",
        server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
        caData: Buffer.from(ca).toString("base64"),
      },
    ],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return new JsonClient(kc, { maxSockets, timeoutMs: 5_000 });
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
