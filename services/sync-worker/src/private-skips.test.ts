import { defaultSyncPolicySpec } from "@tenantplane/api";
import type { JsonClient, ListWatch, ListWatchOptions, RawObject, RequestBudget } from "@tenantplane/kube";
import type { PlannedDecision } from "@tenantplane/messaging";
import type { Logger } from "@tenantplane/runtime";
import { defaultHostRules, PRIVATE_PLACEMENT, privateModeReason, withPlacement } from "@tenantplane/sync";
import { afterEach, describe, expect, it } from "vitest";
import { HostWriter } from "./host-writer.js";
import { SharedWatches } from "./shared-watches.js";
import { encodeKey } from "./source-key.js";
import type { TenantEvents } from "./tenant-events.js";
import { TenantSyncer } from "./tenant-syncer.js";

const noop = () => undefined;
const logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => logger } as unknown as Logger;

/** Caches the test fills by path (tenant Pods, Namespaces, Nodes); every host listing is empty. */
function watchesOver(caches: Map<string, Map<string, RawObject>>) {
  const start = (opts: ListWatchOptions): ListWatch => {
    let cache = caches.get(opts.path);
    if (cache === undefined) caches.set(opts.path, (cache = new Map()));
    const held = cache;
    return {
      get: (ns, name) => held.get(`${ns ?? ""}/${name}`),
      list: () => [...held.values()],
      current: () => true,
      synced: Promise.resolve(),
      reconsider: () => false,
      stop: noop,
    };
  };
  return new SharedWatches(start);
}

const pod = (name: string, resourceVersion: string, nodeName?: string): RawObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: "shop", name, uid: `uid-${name}`, resourceVersion },
  spec: { containers: [{ name: "c", image: "nginx" }], ...(nodeName === undefined ? {} : { nodeName }) },
});

let syncer: TenantSyncer | undefined;
afterEach(() => syncer?.stop());

describe("TenantSyncer in Private mode", () => {
  it("publishes a Pod's Skip once per Pod (not per change or pass), with a fixed id, no warnings, one write token", async () => {
    const pods = new Map([["shop/web", pod("web", "1")]]);
    const caches = new Map<string, Map<string, RawObject>>([
      ["/api/v1/pods", pods],
      ["/api/v1/namespaces", new Map([["/shop", { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } }]])],
      // A node joined to the tenant's API (no virtual-node label).
      ["/api/v1/nodes", new Map([["/own-1", { apiVersion: "v1", kind: "Node", metadata: { name: "own-1" } }]])],
    ]);
    const published: PlannedDecision[] = [];
    const warnings: string[] = [];
    let tokens = 0;
    const client = {} as JsonClient;
    const writer = new HostWriter(client, "test", { wait: () => Promise.resolve() } as unknown as RequestBudget);
    const s = new TenantSyncer({
      tenant: "dev",
      policy: defaultSyncPolicySpec,
      policyName: undefined,
      rules: withPlacement(defaultHostRules, PRIVATE_PLACEMENT),
      hashKey: "test-key-0123456789",
      tenantClient: client,
      hostClient: client,
      watches: watchesOver(caches),
      writer,
      logger,
      enqueue: noop,
      publish: (d) => {
        published.push(d);
        return Promise.resolve();
      },
      warn: (reason) => {
        warnings.push(reason);
        return Promise.resolve();
      },
      events: {
        warn: () => {
          warnings.push("tenant event");
          return Promise.resolve();
        },
      } as unknown as TenantEvents,
      onStatus: noop,
      mayWrite: () => true,
      writeToken: () => {
        tokens++;
        return Promise.resolve();
      },
      limits: { objectsPerKind: 1000, objectBytes: 1 << 20, totalBytes: 1 << 26 },
      leaseValidMs: () => 5_000,
      observe: { outcome: noop, latency: noop },
      tenantCaPem: "",
      tokenRefreshMaxSeconds: 86_400,
    });
    syncer = s;
    s.start();
    await new Promise((r) => setTimeout(r, 20));
    const key = encodeKey({ kind: "Pod", namespace: "shop", name: "web" });
    await s.process(key, Date.now());
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ action: "Skip", kind: "Pod", reason: privateModeReason("shop", "web") });
    expect(published[0]?.id).toBeDefined();
    // Its status and then its node change (the tenant's scheduler and kubelet): still one Skip.
    pods.set("shop/web", pod("web", "2"));
    await s.process(key, Date.now());
    pods.set("shop/web", pod("web", "3", "own-1"));
    await s.process(key, Date.now());
    expect(published).toHaveLength(1);
    expect(warnings).toEqual([]);
    expect(tokens).toBe(1);
    expect(s.counts().skipped).toBe(1);
    // A new Pod of the same name (another uid) is news.
    pods.set("shop/web", { ...pod("web", "4"), metadata: { ...pod("web", "4").metadata, uid: "uid-web-2" } });
    await s.process(key, Date.now());
    expect(published).toHaveLength(2);
  });
});
