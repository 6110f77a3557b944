import http from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Objects } from "./apply.js";
import { KubeApiError } from "./api-error.js";

const networkPolicy = {
  apiVersion: "networking.k8s.io/v1",
  kind: "NetworkPolicy",
  metadata: { name: "allow-same-namespace", namespace: "tp-a" },
  spec: {
    podSelector: {},
    policyTypes: ["Ingress", "Egress"],
    ingress: [{ from: [{ podSelector: {} }, { namespaceSelector: { matchLabels: { team: "a" } } }] }],
    egress: [{ to: [{ podSelector: {} }] }],
  },
};

const limitRange = {
  apiVersion: "v1",
  kind: "LimitRange",
  metadata: { name: "limits", namespace: "tp-a" },
  spec: {
    limits: [
      { type: "Container", default: { cpu: "1", memory: "1Gi" }, defaultRequest: { cpu: "100m" }, max: { cpu: "4" } },
    ],
  },
};

// A local HTTP endpoint standing in for the wire: it records what Objects sends.
interface Received {
  method: string;
  url: string;
  contentType: string | undefined;
  body: unknown;
}
let server: http.Server;
let received: Received[] = [];
let answer: (req: Received) => { status: number; body: unknown } = () => ({ status: 200, body: {} });

const discovery: Record<string, unknown> = {
  "/api/v1": {
    resources: [
      { name: "limitranges", kind: "LimitRange", namespaced: true },
      { name: "namespaces", kind: "Namespace", namespaced: false },
      { name: "namespaces/status", kind: "Namespace", namespaced: false },
    ],
  },
  "/apis/networking.k8s.io/v1": { resources: [{ name: "networkpolicies", kind: "NetworkPolicy", namespaced: true }] },
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const path = (req.url ?? "").split("?")[0]!;
      if (req.method === "GET" && path in discovery) {
        res.end(JSON.stringify(discovery[path]));
        return;
      }
      const r: Received = {
        method: req.method ?? "",
        url: req.url ?? "",
        contentType: req.headers["content-type"],
        body: text ? JSON.parse(text) : undefined,
      };
      received.push(r);
      const { status, body } = answer(r);
      res.statusCode = status;
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  received = [];
  answer = (r) => ({ status: 200, body: r.body ?? {} });
});

function objects(): Objects {
  const kc = new KubeConfig();
  const { port } = server.address() as AddressInfo;
  kc.loadFromClusterAndUser({ name: "local", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }, { name: "u" });
  return new Objects(kc, "tenantplane-test");
}

describe("Objects", () => {
  it("server-side applies exactly the object it is given, `from` and `default` included", async () => {
    const o = objects();
    await o.apply(networkPolicy);
    await o.apply(limitRange);
    expect(received.map((r) => [r.method, r.url, r.contentType])).toEqual([
      [
        "PATCH",
        "/apis/networking.k8s.io/v1/namespaces/tp-a/networkpolicies/allow-same-namespace?fieldManager=tenantplane-test&force=true",
        "application/apply-patch+yaml",
      ],
      [
        "PATCH",
        "/api/v1/namespaces/tp-a/limitranges/limits?fieldManager=tenantplane-test&force=true",
        "application/apply-patch+yaml",
      ],
    ]);
    expect(received[0]!.body).toEqual(networkPolicy);
    expect(received[1]!.body).toEqual(limitRange);
  });

  it("reads objects back as plain JSON, without model renaming", async () => {
    answer = () => ({ status: 200, body: networkPolicy });
    const read = await objects().get("networking.k8s.io/v1", "NetworkPolicy", "allow-same-namespace", "tp-a");
    expect(read).toEqual(networkPolicy);
  });

  it("follows the `continue` token of a list", async () => {
    answer = (r) =>
      r.url.includes("continue=page2")
        ? { status: 200, body: { items: [{ metadata: { name: "b" } }], metadata: {} } }
        : { status: 200, body: { items: [{ metadata: { name: "a" } }], metadata: { continue: "page2" } } };
    const items = await objects().list("v1", "LimitRange", { namespace: "tp-a", labelSelector: "x=y" });
    expect(items.map((i) => i.metadata?.name)).toEqual(["a", "b"]);
    expect(items[0]).toMatchObject({ apiVersion: "v1", kind: "LimitRange" });
    expect(received[0]!.url).toBe("/api/v1/namespaces/tp-a/limitranges?labelSelector=x%3Dy&limit=500");
  });

  it("throws the server's Status as a KubeApiError with the HTTP status as code and the object as target", async () => {
    const status = {
      kind: "Status",
      status: "Failure",
      reason: "Invalid",
      code: 422,
      message: 'LimitRange "limits" is invalid: spec.limits[0].default[cpu]: Invalid value',
      details: { causes: [{ field: "spec.limits[0].default[cpu]", message: "Invalid value" }] },
    };
    answer = () => ({ status: 422, body: status });
    const err = await objects()
      .apply(limitRange)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({
      code: 422,
      body: status,
      message: `PATCH /api/v1/namespaces/tp-a/limitranges/limits: HTTP 422: ${status.message}`,
      target: { kind: "LimitRange", name: "limits", namespace: "tp-a" },
      isWrite: true,
    });
  });

  it("treats 404 as absence on get and delete", async () => {
    answer = () => ({ status: 404, body: { kind: "Status", code: 404 } });
    const o = objects();
    expect(await o.get("v1", "Namespace", "nope")).toBeUndefined();
    expect(await o.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: "nope" } })).toBe(false);
    expect(received.map((r) => r.url)).toEqual(["/api/v1/namespaces/nope", "/api/v1/namespaces/nope"]);
  });

  it("reports an unserved kind as an error without an HTTP status, never as absence", async () => {
    await expect(objects().get("example.com/v1", "Widget", "w")).rejects.toThrow(/does not serve kind Widget/);
  });

  it("creates with POST and patches finalizers with a JSON merge patch", async () => {
    const o = objects();
    await o.create({ apiVersion: "v1", kind: "LimitRange", metadata: { name: "x", namespace: "tp-a" } });
    await o.mergePatch(
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "tp-a" } },
      { metadata: { finalizers: [] } },
    );
    expect(received.map((r) => [r.method, r.url, r.contentType, r.body])).toEqual([
      [
        "POST",
        "/api/v1/namespaces/tp-a/limitranges?fieldManager=tenantplane-test",
        "application/json",
        { apiVersion: "v1", kind: "LimitRange", metadata: { name: "x", namespace: "tp-a" } },
      ],
      [
        "PATCH",
        "/api/v1/namespaces/tp-a?fieldManager=tenantplane-test",
        "application/merge-patch+json",
        { metadata: { finalizers: [] } },
      ],
    ]);
  });
});
