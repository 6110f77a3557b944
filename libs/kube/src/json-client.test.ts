import { spawn } from "node:child_process";
import https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeConfigFor, localCertificate } from "./internal/test-tls.js";
import { JsonClient, LineSplitter } from "./json-client.js";

// A local TLS endpoint (the client pools only TLS connections itself, as API servers speak
// TLS): watches stay open until the client leaves; anything else answers at once.
let server: https.Server;
let ca: string;
let caKey: string;
let openWatches = 0;

beforeAll(async () => {
  const { cert, key } = localCertificate();
  ca = cert;
  caKey = key;
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

describe("LineSplitter", () => {
  it("gives each line once, whole, however the bytes are cut", () => {
    const text = '{"a":1}\n\n  {"b":"é€😀"}  \n{"c":[1,2]}\n{"partial":';
    const bytes = Buffer.from(text, "utf8");
    for (const size of [1, 2, 3, 5, 7, bytes.length]) {
      const split = new LineSplitter();
      const lines: string[] = [];
      for (let i = 0; i < bytes.length; i += size) lines.push(...split.push(bytes.subarray(i, i + size)));
      expect(lines, `chunks of ${size} bytes`).toEqual(['{"a":1}', '{"b":"é€😀"}', '{"c":[1,2]}']);
      expect(split.push("1}\n")).toEqual(['{"partial":1}']);
    }
  });
});

describe("JsonClient watch stream", () => {
  it("gives every event of a backlog of megabyte events whole, each cut over many TLS records", async () => {
    const events = 30;
    // The server in a process of its own, so only the client's work holds this event loop.
    const server = spawn(process.execPath, ["-e", BIG_WATCH_SERVER], {
      env: { ...process.env, CERT: ca, KEY: caKey, EVENTS: String(events) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        server.stdout.once("data", (d: Buffer) => resolve(Number(d.toString())));
        server.once("exit", (code) => reject(new Error(`watch server exited with ${code}`)));
      });
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: "c", server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca).toString("base64") }],
        users: [{ name: "u", token: "t" }],
        contexts: [{ name: "x", cluster: "c", user: "u" }],
        currentContext: "x",
      });
      const c = new JsonClient(kc, { timeoutMs: 5_000 });
      const names: string[] = [];
      try {
        for await (const e of c.stream("/api/v1/configmaps", { watch: true }, new AbortController().signal)) {
          const { object } = e as { object: { metadata: { name: string }; data: { payload: string } } };
          expect(object.data.payload).toHaveLength(1_000_000);
          names.push(object.metadata.name);
        }
      } finally {
        c.close();
      }
      expect(names).toEqual(Array.from({ length: events }, (_, i) => `c${i}`));
    } finally {
      server.kill();
    }
  });
});

/** Answers one watch with EVENTS events of 1 MB in one write: the whole backlog at once. */
const BIG_WATCH_SERVER = `
const https = require("node:https");
const payload = "x".repeat(1000000);
const events = Number(process.env.EVENTS);
const body = Buffer.from(Array.from({ length: events }, (_, i) =>
  JSON.stringify({ type: "ADDED", object: { metadata: { name: "c" + i }, data: { payload } } }) + "\\n").join(""));
const server = https.createServer({ cert: process.env.CERT, key: process.env.KEY }, (req, res) => {
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(body);
});
server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port)));
`;

describe("JsonClient request body", () => {
  it("sends a body of megabytes whole, in order, with its Content-Length", async () => {
    const received = https.createServer({ cert: ca, key: caKey }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        res.writeHead(201, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ length: req.headers["content-length"], text }));
      });
    });
    await new Promise<void>((resolve) => received.listen(0, "127.0.0.1", resolve));
    try {
      const c = new JsonClient(kubeConfigFor(received, ca), { timeoutMs: 5_000 });
      // Multi-byte characters across the pieces' edges: the bytes are cut, never the text.
      const body = { data: { payload: "aé€😀".repeat(150_000) }, small: 1 };
      const answers = await Promise.all(
        [body, { small: 2 }].map((b) => c.request<{ length: string; text: string }>("POST", "/api/v1/x", { body: b })),
      );
      expect(answers.map((a) => JSON.parse(a.text) as unknown)).toEqual([body, { small: 2 }]);
      expect(Number(answers[0]!.length)).toBe(Buffer.byteLength(JSON.stringify(body)));
      c.close();
    } finally {
      received.closeAllConnections();
      await new Promise((resolve) => received.close(resolve));
    }
  });
});
