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
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write("");
      req.on("close", () => openWatches.delete(namespace));
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
