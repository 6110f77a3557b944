import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import https from "node:https";
import type { TLSSocket } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { httpStatusOf, normalizeError } from "@tenantplane/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, KubeApiError } from "./api-error.js";
import { kubeConfigFor, localCertificate } from "./internal/test-tls.js";
import { JsonClient, LineSplitter, METADATA_ONLY, resourcePath } from "./json-client.js";
import { RequestBudget } from "./token-bucket.js";

// A local TLS endpoint (the client pools only TLS connections itself, as API servers speak
// TLS). It asks for a client certificate (any will do) and answers with what it saw: the
// certificate's name, the bearer token, the User-Agent. Watches stay open until the client
// leaves or /end-watches ends them; /push sends every open watch an event naming its peer.
let server: https.Server;
let ca: string;
let caKey: string;
let handshakes = 0;
/** Open connections by the client certificate's common name ("" without one). */
const connections = new Map<string, number>();
const watches = new Set<{ res: ServerResponse; cn: string }>();

function peerName(socket: TLSSocket): string {
  return String(socket.getPeerCertificate().subject?.CN ?? "");
}

beforeAll(async () => {
  const { cert, key } = localCertificate();
  ca = cert;
  caKey = key;
  server = https.createServer({ cert: ca, key, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const url = new URL(req.url ?? "", "https://x");
    const cn = peerName(req.socket as TLSSocket);
    if (url.pathname === "/slow") return;
    if (url.pathname === "/refused") {
      res.writeHead(422, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", reason: "Invalid", message: 'ConfigMap "c" is invalid', code: 422 }));
      return;
    }
    if (url.pathname === "/gateway") {
      res.writeHead(502, { "Content-Type": "text/html" });
      res.end("<html>bad gateway</html>");
      return;
    }
    if (url.pathname === "/push" || url.pathname === "/end-watches") {
      for (const w of watches) {
        if (url.pathname === "/push") w.res.write(JSON.stringify({ type: "ADDED", cn: w.cn }) + "\n");
        else w.res.end();
      }
      if (url.pathname === "/end-watches") watches.clear();
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    if (url.searchParams.get("watch") === "true") {
      const watch = { res, cn };
      watches.add(watch);
      res.write("\n");
      req.on("close", () => watches.delete(watch));
      return;
    }
    res.end(
      JSON.stringify({
        status: "Success",
        cn,
        url: req.url,
        authorization: req.headers.authorization,
        userAgent: req.headers["user-agent"],
      }),
    );
  });
  server.on("secureConnection", (socket: TLSSocket) => {
    handshakes++;
    const cn = peerName(socket);
    connections.set(cn, (connections.get(cn) ?? 0) + 1);
    socket.on("close", () => connections.set(cn, connections.get(cn)! - 1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Echo {
  status: string;
  cn: string;
  url: string;
  authorization?: string;
  userAgent?: string;
}

function client(maxSockets: number): JsonClient {
  return new JsonClient(kubeConfigFor(server, ca), { maxSockets, timeoutMs: 5_000 });
}

describe("JsonClient connections", () => {
  it("answers requests while more watches are open than its request pool has sockets", async () => {
    const c = client(2);
    const abort = new AbortController();
    const streams = Array.from({ length: 5 }, () => c.stream("/api/v1/pods", { watch: true }, abort.signal));
    // A watch opens its connection on the generator's first next().
    const reading = streams.map((w) => w.next().catch(() => undefined));
    await expect.poll(() => watches.size, { timeout: 5_000 }).toBe(5);
    const answers = await Promise.all([1, 2, 3].map(() => c.request<Echo>("GET", "/api/v1/pods/x")));
    expect(answers.map((a) => a.status)).toEqual(["Success", "Success", "Success"]);
    abort.abort();
    await Promise.all(reading);
    c.close();
    await expect.poll(() => watches.size).toBe(0);
  });

  it("keeps its TLS connections open across requests instead of one handshake per request", async () => {
    const kc = kubeConfigFor(server, ca, "first");
    const c = new JsonClient(kc);
    const before = handshakes;
    for (let i = 0; i < 20; i++) await c.request("GET", "/api/v1/namespaces/x");
    expect(handshakes - before).toBe(1);
    await Promise.all(Array.from({ length: 10 }, () => c.request("GET", "/api/v1/pods")));
    expect(handshakes - before).toBeLessThanOrEqual(10);

    // Credentials other than TLS ones are read per request, over the same connections.
    kc.users[0] = { ...kc.users[0]!, token: "second" };
    const opened = handshakes;
    const answer = await c.request<Echo>("GET", "/version");
    expect(answer.authorization).toBe("Bearer second");
    expect(handshakes).toBe(opened);
    c.close();
  });

  it("keeps the server URL's path prefix, leaves out unset query values and sends its User-Agent", async () => {
    const kc = kubeConfigFor(server, ca);
    kc.clusters[0] = { ...kc.clusters[0]!, server: `${kc.clusters[0]!.server}/k8s/clusters/c1/` };
    const c = new JsonClient(kc, { userAgent: "tenantplane-test/1" });
    const answer = await c.request<Echo>("GET", "/api/v1/pods", {
      query: { labelSelector: "a=b", continue: "", limit: 5, fieldSelector: undefined },
    });
    expect(answer.url).toBe("/k8s/clusters/c1/api/v1/pods?labelSelector=a%3Db&limit=5");
    expect(answer.userAgent).toBe("tenantplane-test/1");
    c.close();
  });

  it("waits for its request budget before every request", async () => {
    let now = 0;
    const slept: number[] = [];
    const budget = new RequestBudget(
      2,
      1,
      () => now,
      async (ms) => {
        slept.push(ms);
        now += ms;
      },
    );
    const c = new JsonClient(kubeConfigFor(server, ca), { budget });
    for (let i = 0; i < 3; i++) await c.request("GET", "/api/v1/pods");
    expect(slept).toEqual([500, 500]);
    c.close();
  });

  it("fails a request that gets no answer in time as ETIMEDOUT, naming it", async () => {
    const c = client(2);
    const err = await c.request("GET", "/slow", { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "ETIMEDOUT", message: "GET /slow: no answer within 100 ms" });
    expect(normalizeError(err).transient).toBe(true);
    c.close();
  });
});

describe("JsonClient errors", () => {
  it("throws a KubeApiError (an ApiError) naming method, path and the server's message, with the Status and target", async () => {
    const c = client(2);
    const target = { kind: "ConfigMap", name: "c", namespace: "a" };
    const err = await c.request("PATCH", "/refused", { body: {}, target }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      code: 422,
      message: 'PATCH /refused: HTTP 422: ConfigMap "c" is invalid',
      body: { reason: "Invalid", message: 'ConfigMap "c" is invalid' },
      method: "PATCH",
      path: "/refused",
      target,
      isWrite: true,
    });
    expect(httpStatusOf(err)).toBe(422);
    expect(normalizeError(err)).toMatchObject({ code: "HTTP422", transient: false });

    const gateway = await c.request("GET", "/gateway").catch((e: unknown) => e);
    expect(gateway).toMatchObject({
      code: 502,
      body: { message: "<html>bad gateway</html>" },
      message: "GET /gateway: HTTP 502: <html>bad gateway</html>",
      isWrite: false,
    });
    expect(normalizeError(gateway).transient).toBe(true);
    c.close();
  });

  it("reads an ApiError's Status from the answer's text as given", () => {
    const e = new ApiError(403, JSON.stringify({ reason: "Forbidden", message: "no" }), "POST /x");
    expect(e).toMatchObject({
      code: 403,
      body: { reason: "Forbidden", message: "no" },
      message: "POST /x: HTTP 403: no",
    });
    expect(new ApiError(500, "", "GET /y").message).toBe("GET /y: HTTP 500");
  });
});

describe("JsonClient certificate rotation", () => {
  it("presents a client certificate rotated in its files from the next request on, and retires the old connections", async () => {
    const dir = mkdtempSync(join(tmpdir(), "json-client-rotation-"));
    const certFile = join(dir, "client.crt");
    const keyFile = join(dir, "client.key");
    const issue = (name: string) => {
      const { cert, key } = localCertificate(name);
      writeFileSync(certFile, cert);
      writeFileSync(keyFile, key);
    };
    try {
      issue("alice");
      const c = new JsonClient(kubeConfigFor(server, ca, "", { certFile, keyFile }), { timeoutMs: 5_000 });
      expect((await c.request<Echo>("GET", "/api/v1/x")).cn).toBe("alice");
      const abort = new AbortController();
      const before = c.stream("/api/v1/pods", { watch: true }, abort.signal);
      const firstBefore = before.next();
      await expect.poll(() => watches.size).toBe(1);
      await c.request("GET", "/push");
      expect((await firstBefore).value).toEqual({ type: "ADDED", cn: "alice" });
      expect(connections.get("alice")).toBe(2);

      // Caught between the two writes: the certificate does not match the key.
      const alicesKey = readFileSync(keyFile);
      issue("bob");
      const bobsKey = readFileSync(keyFile);
      writeFileSync(keyFile, alicesKey);
      await expect(c.request("GET", "/api/v1/x")).rejects.toThrow(/key values mismatch/);
      expect(connections.get("alice")).toBe(2);
      writeFileSync(keyFile, bobsKey);
      expect((await c.request<Echo>("GET", "/api/v1/x")).cn).toBe("bob");
      // The old pool's idle connection closes; its watch's stays until the watch ends.
      await expect.poll(() => connections.get("alice")).toBe(1);
      const after = c.stream("/api/v1/pods", { watch: true }, abort.signal);
      const firstAfter = after.next();
      await expect.poll(() => watches.size).toBe(2);
      const secondBefore = before.next();
      await c.request("GET", "/push");
      expect((await firstAfter).value).toEqual({ type: "ADDED", cn: "bob" });
      expect((await secondBefore).value).toEqual({ type: "ADDED", cn: "alice" });

      // Ended by the server, the old watch's connection closes instead of returning to a pool;
      // the new one's is kept for the next watch.
      const ends = [before.next(), after.next()];
      await c.request("GET", "/end-watches");
      expect((await Promise.all(ends)).map((r) => r.done)).toEqual([true, true]);
      await expect.poll(() => connections.get("alice")).toBe(0);
      const bobs = connections.get("bob");
      const handshakesBefore = handshakes;
      const again = c.stream("/api/v1/pods", { watch: true }, abort.signal);
      // Aborted before its answer arrived, a watch's open rejects: either end is fine here.
      const reading = again.next().catch(() => undefined);
      await expect.poll(() => watches.size).toBe(1);
      expect(handshakes).toBe(handshakesBefore);
      expect(connections.get("bob")).toBe(bobs);
      abort.abort();
      await reading;
      c.close();
      await expect.poll(() => connections.get("bob")).toBe(0);
    } finally {
      rmSync(dir, { recursive: true });
    }
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

describe("LineSplitter bytes", () => {
  it("gives each line's bytes once, undecoded, leaving out empty lines", () => {
    const bytes = Buffer.from('{"a":"é"}\n\n {"b":1} \n{"c"', "utf8");
    const split = new LineSplitter();
    const lines: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 3) lines.push(...split.pushBytes(bytes.subarray(i, i + 3)));
    expect(lines.map((l) => l.toString("utf8"))).toEqual(['{"a":"é"}', ' {"b":1} ']);
    expect(split.pushBytes(Buffer.from(":2}\n")).map((l) => l.toString("utf8"))).toEqual(['{"c":2}']);
  });
});

describe("JsonClient watch stream", () => {
  it("gives every event of a backlog of megabyte events whole, each cut over many TLS records", async () => {
    const names: string[] = [];
    await withBigWatch(30, async (c) => {
      for await (const e of c.stream("/api/v1/configmaps", { watch: true }, new AbortController().signal)) {
        const { object } = e as { object: { metadata: { name: string }; data: { payload: string } } };
        expect(object.data.payload).toHaveLength(1_000_000);
        names.push(object.metadata.name);
      }
    });
    expect(names).toEqual(Array.from({ length: 30 }, (_, i) => `c${i}`));
  });

  it("offers each line of at least minBytes to peek, whole, and yields its answer instead of parsing it", async () => {
    const seen: number[] = [];
    const out: unknown[] = [];
    await withBigWatch(4, async (c) => {
      const large = {
        minBytes: 1_000_000,
        // Every other line is peeked away; the rest are parsed as usual.
        peek: (line: Buffer) => (seen.push(line.length) % 2 === 1 ? { peeked: seen.length } : undefined),
      };
      for await (const e of c.stream("/api/v1/configmaps", { watch: true }, new AbortController().signal, { large })) {
        const parsed = e as { peeked?: number; object?: { metadata: { name: string } } };
        out.push(parsed.peeked ?? parsed.object?.metadata.name);
      }
    });
    const lineBytes = Buffer.byteLength(
      JSON.stringify({ type: "ADDED", object: { metadata: { name: "c0" }, data: { payload: "x".repeat(1_000_000) } } }),
    );
    expect(seen).toEqual([lineBytes, lineBytes, lineBytes, lineBytes]);
    expect(out).toEqual([1, "c1", 3, "c3"]);
  });
});

/** Runs `use` with a client of a watch server (its own process) answering `events` megabyte events at once. */
async function withBigWatch(events: number, use: (c: JsonClient) => Promise<void>): Promise<void> {
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
    try {
      await use(c);
    } finally {
      c.close();
    }
  } finally {
    server.kill();
  }
}

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

describe("JsonClient answers", () => {
  it("sends the Accept header asked for and counts every byte of the answer it reads, multi-byte text intact", async () => {
    const server = https.createServer({ cert: ca, key: caKey }, (req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      // Written in two pieces, the second starting inside a multi-byte character.
      const bytes = Buffer.from(JSON.stringify({ accept: req.headers.accept, text: "é€😀".repeat(20_000) }));
      res.write(bytes.subarray(0, 40_001));
      setTimeout(() => res.end(bytes.subarray(40_001)), 20);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      let received = 0;
      const c = new JsonClient(kubeConfigFor(server, ca), { timeoutMs: 5_000, onReceived: (n) => (received += n) });
      const plain = await c.request<{ accept: string; text: string }>("GET", "/api/v1/x");
      const partial = await c.request<{ accept: string; text: string }>("GET", "/api/v1/x", { accept: METADATA_ONLY });
      expect(plain.accept).toBe("application/json");
      expect(plain.text).toBe("é€😀".repeat(20_000));
      expect(partial.accept).toBe(METADATA_ONLY);
      expect(received).toBe(Buffer.byteLength(JSON.stringify(plain)) + Buffer.byteLength(JSON.stringify(partial)));
      c.close();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("resourcePath", () => {
  it("puts core kinds under /api, grouped ones under /apis, and escapes names", () => {
    expect(resourcePath("v1", "configmaps", "a", "b")).toBe("/api/v1/namespaces/a/configmaps/b");
    expect(resourcePath("apps/v1", "deployments", "a")).toBe("/apis/apps/v1/namespaces/a/deployments");
    expect(resourcePath("v1", "nodes", undefined, "n/1")).toBe("/api/v1/nodes/n%2F1");
  });
});
