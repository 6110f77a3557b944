import http from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { createLogger } from "@tenantplane/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonClient } from "./json-client.js";
import { ObjectCache, matchesSelector } from "./object-cache.js";

describe("matchesSelector", () => {
  const labels = { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "a" };

  it("understands equality, inequality, existence and absence", () => {
    expect(matchesSelector(labels, "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/tenant==a")).toBe(true);
    expect(matchesSelector(labels, "tenantplane.io/tenant!=a")).toBe(false);
    expect(matchesSelector(labels, "tenantplane.io/tenant")).toBe(true);
    expect(matchesSelector(labels, "!tenantplane.io/virtual-namespace")).toBe(true);
    expect(matchesSelector(labels, "!tenantplane.io/tenant")).toBe(false);
  });

  it("matches everything with an empty selector and nothing on a missing label", () => {
    expect(matchesSelector(undefined, "")).toBe(true);
    expect(matchesSelector(undefined, "a=b")).toBe(false);
  });
});

// A local HTTP endpoint standing in for the wire: Secrets in tp-a and tp-b, where tp-b refuses
// the first lists (its RoleBinding not seen yet); watches stay open until the client leaves.
let server: http.Server;
const openWatches = new Set<string>();
const watchStreams = new Map<string, http.ServerResponse>();
let refusalsLeft = 0;
const secret = (namespace: string, name: string) => ({
  metadata: { name, namespace, resourceVersion: "5", labels: { "app.kubernetes.io/managed-by": "tenantplane" } },
});

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "", "http://x");
    const namespace = /^\/api\/v1\/namespaces\/([^/]+)\/secrets$/.exec(url.pathname)?.[1];
    if (!namespace) {
      res.statusCode = 404;
      res.end("{}");
      return;
    }
    if (url.searchParams.get("watch") === "true") {
      openWatches.add(namespace);
      watchStreams.set(namespace, res);
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write("");
      req.on("close", () => {
        openWatches.delete(namespace);
        watchStreams.delete(namespace);
      });
      return;
    }
    if (namespace === "tp-b" && refusalsLeft > 0) {
      refusalsLeft--;
      res.statusCode = 403;
      res.end(JSON.stringify({ message: "forbidden" }));
      return;
    }
    res.end(JSON.stringify({ metadata: { resourceVersion: "5" }, items: [secret(namespace, `${namespace}-pki`)] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function cache(): ObjectCache {
  const kc = new KubeConfig();
  const { port } = server.address() as AddressInfo;
  kc.loadFromClusterAndUser({ name: "local", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }, { name: "u" });
  return new ObjectCache({
    client: new JsonClient(kc),
    kinds: [
      {
        apiVersion: "v1",
        kind: "Secret",
        resource: { resource: "secrets", namespaced: true },
        labelSelector: "app.kubernetes.io/managed-by=tenantplane",
        perNamespace: true,
      },
    ],
    logger: createLogger("test", "silent"),
  });
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(condition()).toBe(true);
}

describe("ObjectCache, a kind cached per namespace", () => {
  it("answers only in the namespaces it was told to watch, and forgets one it is told to unwatch", async () => {
    const c = cache();
    try {
      await c.synced();
      expect(c.get("v1", "Secret", "tp-a-pki", "tp-a")).toBeUndefined();
      expect(c.list("v1", "Secret", { namespace: "tp-a" })).toBeUndefined();

      c.watchNamespace("tp-a");
      c.watchNamespace("tp-a");
      await until(() => c.covers("v1", "Secret", "tp-a") && openWatches.has("tp-a"));
      expect(c.get("v1", "Secret", "tp-a-pki", "tp-a")?.metadata?.name).toBe("tp-a-pki");
      expect(c.get("v1", "Secret", "other", "tp-a")).toBeNull();
      const ours = { namespace: "tp-a", labelSelector: "app.kubernetes.io/managed-by=tenantplane" };
      expect(c.list("v1", "Secret", ours)?.map((s) => s.metadata?.name)).toEqual(["tp-a-pki"]);
      // A selector wider than the cache's could match objects it never holds.
      expect(c.list("v1", "Secret", { namespace: "tp-a" })).toBeUndefined();
      // Nothing about namespaces it does not watch, nor about all of them at once.
      expect(c.get("v1", "Secret", "tp-b-pki", "tp-b")).toBeUndefined();
      expect(c.list("v1", "Secret", { labelSelector: ours.labelSelector })).toBeUndefined();
      c.observe("v1", "Secret", "written", "tp-b", secret("tp-b", "written"));
      expect(c.get("v1", "Secret", "written", "tp-b")).toBeUndefined();
      // A write of ours in a watched namespace is seen at once.
      c.observe("v1", "Secret", "written", "tp-a", secret("tp-a", "written"));
      expect(c.get("v1", "Secret", "written", "tp-a")?.metadata?.name).toBe("written");
      expect(c.sizes()).toEqual({ "v1/Secret": 1 });

      c.unwatchNamespace("tp-a");
      expect(c.covers("v1", "Secret", "tp-a")).toBe(false);
      expect(c.get("v1", "Secret", "tp-a-pki", "tp-a")).toBeUndefined();
      await until(() => !openWatches.has("tp-a"));
    } finally {
      c.stop();
    }
  });

  it("retries a namespace whose list is refused until its binding is seen", async () => {
    refusalsLeft = 2;
    const c = cache();
    try {
      c.watchNamespace("tp-b");
      await until(() => c.covers("v1", "Secret", "tp-b"));
      expect(refusalsLeft).toBe(0);
      expect(c.get("v1", "Secret", "tp-b-pki", "tp-b")?.metadata?.name).toBe("tp-b-pki");
    } finally {
      c.stop();
    }
  });
});

describe("ObjectCache, the service's own writes", () => {
  const at = (name: string, resourceVersion: string) => ({
    metadata: { ...secret("tp-a", name).metadata, resourceVersion },
  });
  const send = (type: string, object: unknown) =>
    watchStreams.get("tp-a")!.write(`${JSON.stringify({ type, object })}\n`);

  it("holds back a watch event that overtakes the answer to a write of ours, then calls it ours", async () => {
    const c = cache();
    const seen: Array<{ name: string; version: string | undefined; ours: boolean }> = [];
    c.onChange((e) =>
      seen.push({ name: e.object.metadata.name, version: e.object.metadata.resourceVersion, ours: e.ours }),
    );
    try {
      c.watchNamespace("tp-a");
      await until(() => c.covers("v1", "Secret", "tp-a") && watchStreams.has("tp-a"));
      seen.length = 0; // the list's own adds

      // The create's event arrives before its answer.
      const done = c.writing("v1", "Secret", "mine", "tp-a");
      send("ADDED", at("mine", "7"));
      await new Promise((r) => setTimeout(r, 150));
      expect(seen).toEqual([]);
      c.observe("v1", "Secret", "mine", "tp-a", at("mine", "7"));
      done();
      expect(seen).toEqual([{ name: "mine", version: "7", ours: true }]);

      // Someone else's change while a write of ours is on its way is still theirs once it answers.
      const again = c.writing("v1", "Secret", "mine", "tp-a");
      send("MODIFIED", at("mine", "8"));
      await new Promise((r) => setTimeout(r, 150));
      c.observe("v1", "Secret", "mine", "tp-a", at("mine", "9"));
      again();
      send("MODIFIED", at("mine", "9"));
      await until(() => seen.length === 3);
      expect(seen.slice(1)).toEqual([
        { name: "mine", version: "8", ours: false },
        { name: "mine", version: "9", ours: true },
      ]);

      // With no write on its way nothing waits; a failed write releases what it held.
      send("MODIFIED", at("other", "10"));
      await until(() => seen.length === 4);
      expect(seen[3]).toEqual({ name: "other", version: "10", ours: false });
      const failed = c.writing("v1", "Secret", "other", "tp-a");
      send("MODIFIED", at("other", "11"));
      await new Promise((r) => setTimeout(r, 150));
      expect(seen).toHaveLength(4);
      failed();
      failed();
      expect(seen[4]).toEqual({ name: "other", version: "11", ours: false });
      expect(seen).toHaveLength(5);
    } finally {
      c.stop();
    }
  });

  it("does not let the answer to a write of ours hide a newer version the watch already holds", async () => {
    const c = cache();
    try {
      c.watchNamespace("tp-a");
      await until(() => c.covers("v1", "Secret", "tp-a") && watchStreams.has("tp-a"));
      // Our write and then someone else's both reach the watch before our write's answer does.
      const done = c.writing("v1", "Secret", "raced", "tp-a");
      send("ADDED", at("raced", "20"));
      send("MODIFIED", at("raced", "21"));
      await until(() => c.get("v1", "Secret", "raced", "tp-a")?.metadata?.resourceVersion === "21");
      c.observe("v1", "Secret", "raced", "tp-a", at("raced", "20"));
      done();
      expect(c.get("v1", "Secret", "raced", "tp-a")?.metadata?.resourceVersion).toBe("21");

      // An answer newer than the watch still shows at once.
      c.observe("v1", "Secret", "raced", "tp-a", at("raced", "22"));
      expect(c.get("v1", "Secret", "raced", "tp-a")?.metadata?.resourceVersion).toBe("22");
    } finally {
      c.stop();
    }
  });
});
