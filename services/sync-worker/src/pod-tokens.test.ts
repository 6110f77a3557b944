import { KubeApiError, type JsonClient, type RawObject } from "@tenantplane/kube";
import { createLogger } from "@tenantplane/runtime";
import { describe, expect, it } from "vitest";
import type { HostWriter } from "./host-writer.js";
import {
  ANNOTATION_TOKEN_POD_UID,
  ANNOTATION_TOKEN_REFRESH_AT,
  dueTokenWork,
  podOfTokenSecret,
  PodTokenKeeper,
  type MintFailure,
  type PodTokenDeps,
} from "./pod-tokens.js";

const requests = JSON.stringify([{ key: "token-0", expirationSeconds: 3607 }]);
const pod = (name: string, annotations: Record<string, string> = { "tenantplane.io/token-requests": requests }) =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "tp-dev", uid: `uid-${name}`, annotations },
  }) as RawObject;
const secret = (pod: string, uid: string, refreshAt: string, data: Record<string, string> = { "token-0": "dA==" }) =>
  ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: `${pod}.token`,
      namespace: "tp-dev",
      annotations: { [ANNOTATION_TOKEN_POD_UID]: uid, [ANNOTATION_TOKEN_REFRESH_AT]: refreshAt },
    },
    data,
  }) as RawObject;

/** A keeper's dependencies with nothing to mint and nothing reported; tests override what they exercise. */
const keeperDeps = (overrides: Partial<PodTokenDeps>): PodTokenDeps => ({
  tenant: "dev",
  tenantClient: { request: () => Promise.reject(new Error("unused")) } as unknown as JsonClient,
  writer: {} as HostWriter,
  tenantCaPem: "ca",
  hostPods: () => [],
  hostPod: () => undefined,
  hostSecret: () => undefined,
  maxRefreshSeconds: 3600,
  mayWrite: () => true,
  writeToken: () => Promise.resolve(),
  publish: () => Promise.resolve(),
  logger: createLogger("test", "silent"),
  ...overrides,
});

describe("dueTokenWork", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  const due = (pods: RawObject[], secrets: RawObject[]) =>
    dueTokenWork(pods, (name) => secrets.find((s) => s.metadata.name === name), now).map((w) => [
      w.pod.metadata.name,
      w.why,
    ]);

  it("mints for a Pod with token requests and no Secret, never for one without requests", () => {
    expect(due([pod("a"), pod("b", {})], [])).toEqual([["a", "absent"]]);
  });

  it("refreshes when the refresh time has come, and only then", () => {
    expect(due([pod("a")], [secret("a", "uid-a", "2026-11-29T12:00:01Z")])).toEqual([]);
    expect(due([pod("a")], [secret("a", "uid-a", "2026-11-29T11:59:59Z")])).toEqual([["a", "due for refresh"]]);
  });

  it("replaces a Secret made for an earlier Pod of the same name, or lacking a token", () => {
    expect(due([pod("a")], [secret("a", "uid-old", "2026-11-30T00:00:00Z")])).toEqual([
      ["a", "made for an earlier Pod of that name"],
    ]);
    expect(due([pod("a")], [secret("a", "uid-a", "2026-11-30T00:00:00Z", {})])).toEqual([
      ["a", "lacks a requested token"],
    ]);
  });

  it("leaves a Pod that is being deleted alone", () => {
    const going = pod("a");
    going.metadata.deletionTimestamp = "2026-11-29T11:00:00Z";
    expect(due([going], [])).toEqual([]);
  });
});

describe("PodTokenKeeper failure reports", () => {
  const hostPod = pod("web-x-shop-x-dev", {
    "tenantplane.io/token-requests": requests,
    "tenantplane.io/virtual-namespace": "shop",
    "tenantplane.io/virtual-name": "web",
    "tenantplane.io/virtual-uid": "uid-web",
    "tenantplane.io/virtual-service-account": "temp",
  });
  const TOKEN_PATH = "/api/v1/namespaces/shop/serviceaccounts/temp/token";
  /** The API server's answer `code` with `reason` and `message`, as JsonClient throws it. */
  const statusError = (path: string, code: number, reason: string, message: string) =>
    new KubeApiError("POST", path, code, { kind: "Status", status: "Failure", reason, message, code });
  const notFound = (what: string) => statusError(TOKEN_PATH, 404, "NotFound", `${what} not found`);

  /** A keeper whose TokenRequests answer what `answer` says, its clock moved by hand. */
  function keeper(answer: () => Promise<unknown>, refuse?: () => Promise<never>) {
    const reports: MintFailure[] = [];
    const published: string[] = [];
    let now = Date.parse("2026-11-29T12:00:00Z");
    let secret: RawObject | undefined;
    const writer = {
      create: (obj: RawObject) => {
        if (refuse) return refuse();
        secret = obj;
        return Promise.resolve(obj);
      },
    } as unknown as HostWriter;
    const k = new PodTokenKeeper(
      keeperDeps({
        tenantClient: { request: answer } as unknown as JsonClient,
        writer,
        hostPods: () => [hostPod],
        hostPod: () => hostPod,
        hostSecret: () => secret,
        publish: (d) => {
          published.push(d.action);
          return Promise.resolve();
        },
        onFailure: (f) => reports.push(f),
        now: () => now,
      }),
    );
    const pass = async (advanceMs = 61_000) => {
      now += advanceMs;
      k.poke();
      await k.idle();
    };
    return { reports, published, pass, dropSecret: () => (secret = undefined) };
  }

  it("reports a refused TokenRequest once per answer, naming the ServiceAccount and the Secret", async () => {
    let error = notFound('serviceaccounts "temp"');
    const k = keeper(() => Promise.reject(error));
    await k.pass();
    await k.pass();
    expect(k.reports).toHaveLength(1);
    const [first] = k.reports;
    expect(first).toMatchObject({
      step: "TokenRequest",
      tenantRef: { namespace: "shop", name: "web" },
      hostRef: { namespace: "tp-dev", name: "web-x-shop-x-dev.token" },
      error: { code: 404, reason: "NotFound", message: 'serviceaccounts "temp" not found' },
    });
    expect(first!.message).toBe(
      'the tenant API refused a token for ServiceAccount shop/temp bound to this Pod (404 NotFound): serviceaccounts "temp" not found; ' +
        "its host copy web-x-shop-x-dev waits for token Secret tp-dev/web-x-shop-x-dev.token",
    );
    error = notFound('pods "web"');
    await k.pass();
    expect(k.reports).toHaveLength(2);
    expect(k.reports[1]!.instance).not.toBe(first!.instance);
    expect(k.published).toEqual([]);
  });

  it("reports the same answer again after a good mint ended the run of failures", async () => {
    let fail = true;
    const k = keeper(() =>
      fail
        ? Promise.reject(notFound('serviceaccounts "temp"'))
        : Promise.resolve({ status: { token: "t", expirationTimestamp: "2026-11-30T12:00:00Z" } }),
    );
    await k.pass();
    fail = false;
    await k.pass();
    expect(k.published).toEqual(["Create"]);
    fail = true;
    k.dropSecret();
    await k.pass();
    expect(k.reports.map((r) => r.error.reason)).toEqual(["NotFound", "NotFound"]);
    expect(k.reports[1]!.instance).not.toBe(k.reports[0]!.instance);
  });

  it("reports a transient answer only once it has lasted a minute", async () => {
    const busy = statusError(
      TOKEN_PATH,
      503,
      "ServiceUnavailable",
      "the server is currently unable to handle the request",
    );
    const k = keeper(() => Promise.reject(busy));
    await k.pass(1_000);
    await k.pass(30_000);
    expect(k.reports).toEqual([]);
    await k.pass(31_000);
    expect(k.reports.map((r) => r.error.code)).toEqual([503]);
  });

  it("reports a Secret the host refuses as the host's answer", async () => {
    const quota = statusError(
      "/api/v1/namespaces/tp-dev/secrets",
      403,
      "Forbidden",
      "exceeded quota: tenantplane-quota, requested: count/secrets=1",
    );
    const k = keeper(
      () => Promise.resolve({ status: { token: "t" } }),
      () => Promise.reject(quota),
    );
    await k.pass();
    expect(k.reports).toHaveLength(1);
    expect(k.reports[0]).toMatchObject({ step: "Secret", error: { code: 403, reason: "Forbidden" } });
    expect(k.reports[0]!.message).toBe(
      "the host refused this Pod's token Secret tp-dev/web-x-shop-x-dev.token (403 Forbidden): " +
        "exceeded quota: tenantplane-quota, requested: count/secrets=1; its host copy web-x-shop-x-dev waits for it",
    );
  });
});

describe("PodTokenKeeper and a host cache that lags behind its writes", () => {
  const hostPod = pod("api-x-shop-x-dev", {
    "tenantplane.io/token-requests": requests,
    "tenantplane.io/virtual-namespace": "shop",
    "tenantplane.io/virtual-name": "api",
    "tenantplane.io/virtual-uid": "uid-api",
  });

  it("mints once: a check before the cache shows the new Secret sees the write's answer", async () => {
    let mints = 0;
    let cached: RawObject | undefined;
    let stored: RawObject | undefined;
    const now = Date.parse("2026-11-29T12:00:00Z");
    const k = new PodTokenKeeper(
      keeperDeps({
        tenantClient: {
          request: () => {
            mints += 1;
            return Promise.resolve({ status: { token: "t", expirationTimestamp: "2026-11-29T13:00:07Z" } });
          },
        } as unknown as JsonClient,
        writer: {
          create: (obj: RawObject) => {
            stored = { ...obj, metadata: { ...obj.metadata, uid: "s1", resourceVersion: "41" } };
            return Promise.resolve(stored);
          },
        } as unknown as HostWriter,
        hostPods: () => [hostPod],
        hostPod: () => hostPod,
        hostSecret: () => cached,
        now: () => now,
      }),
    );
    k.poke();
    await k.idle();
    expect(mints).toBe(1);
    // The host Pod changes (it is scheduled) before the Secret's watch event arrives.
    k.pokePod(hostPod.metadata.name);
    await k.idle();
    expect(mints).toBe(1);
    // The cache catches up with the same version: still nothing to mint.
    cached = stored;
    k.poke();
    await k.idle();
    expect(mints).toBe(1);
    // Someone deletes the Secret: the cache shows it gone after having shown it, so it is made again.
    cached = undefined;
    k.poke();
    await k.idle();
    expect(mints).toBe(2);
  });
});

describe("PodTokenKeeper checks of changed Pods", () => {
  it("reads only the Pods it is told changed; the periodic check reads them all", async () => {
    const pods = [pod("a"), pod("b"), pod("c")];
    const read: string[] = [];
    let listed = 0;
    const k = new PodTokenKeeper(
      keeperDeps({
        hostPods: () => {
          listed += 1;
          return [];
        },
        hostPod: (name) => {
          read.push(name);
          return pods.find((p) => p.metadata.name === name);
        },
        mayWrite: () => false,
      }),
    );
    k.poke();
    await k.idle();
    expect(listed).toBe(1);
    k.pokePod("b");
    await k.idle();
    expect(read).toEqual(["b"]);
    expect(listed).toBe(1);
    k.poke();
    await k.idle();
    expect(listed).toBe(2);
  });

  it("names the Pod of a token Secret, and no Pod for another Secret", () => {
    expect(podOfTokenSecret("web-x-shop-x-dev.token")).toBe("web-x-shop-x-dev");
    expect(podOfTokenSecret("web-x-shop-x-dev")).toBeUndefined();
  });
});
