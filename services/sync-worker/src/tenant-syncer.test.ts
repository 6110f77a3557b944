import { defaultSyncPolicySpec } from "@tenantplane/api";
import type { JsonClient, ListWatch, ListWatchOptions, RawObject, RequestBudget } from "@tenantplane/kube";
import type { Logger } from "@tenantplane/runtime";
import { defaultHostRules } from "@tenantplane/sync";
import { afterEach, describe, expect, it } from "vitest";
import { HostWriter } from "./host-writer.js";
import { SharedWatches } from "./shared-watches.js";
import type { TenantEvents } from "./tenant-events.js";
import { TenantSyncer } from "./tenant-syncer.js";

const noop = () => undefined;
const logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => logger } as unknown as Logger;

/**
 * Watches that list what the test gives them through the watch's own transform, a few objects
 * per turn of the event loop, as a list-watch does page by page.
 */
function fakeWatches(tenantObjects: RawObject[]) {
  const start = (opts: ListWatchOptions): ListWatch => {
    const given =
      opts.path === "/api/v1/configmaps"
        ? tenantObjects
        : opts.path === "/api/v1/namespaces"
          ? [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "bench" } }]
          : [];
    const transform = opts.transform ?? ((x: RawObject) => x);
    const cache = new Map<string, RawObject>();
    const synced = (async () => {
      for (const [i, o] of given.entries()) {
        cache.set(`${o.metadata.namespace}/${o.metadata.name}`, transform(o));
        if (i % 4 === 3) await new Promise((r) => setImmediate(r));
      }
    })();
    return {
      get: (ns, name) => cache.get(`${ns}/${name}`),
      list: () => [...cache.values()],
      current: () => true,
      synced,
      reconsider: () => false,
      stop: noop,
    };
  };
  return new SharedWatches(start);
}

const configMap = (i: number, bytes: number): RawObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "bench", name: `cm-${i}`, uid: `u${i}`, resourceVersion: String(i) },
  data: { payload: String(i).padStart(bytes, "x") },
});

let syncer: TenantSyncer | undefined;
afterEach(() => syncer?.stop());

/** A syncer over `objects` with `limits`; resolves once its first full pass is done. */
async function firstPass(
  objects: RawObject[],
  limits: { objectsPerKind: number; objectBytes: number; totalBytes: number },
) {
  const queued: string[] = [];
  const client = {} as JsonClient;
  const writer = new HostWriter(client, "test", { wait: () => Promise.resolve() } as unknown as RequestBudget);
  let passed!: () => void;
  const done = new Promise<void>((r) => (passed = r));
  const s: TenantSyncer = new TenantSyncer({
    tenant: "big",
    policy: defaultSyncPolicySpec,
    policyName: undefined,
    rules: defaultHostRules,
    hashKey: "test-key-0123456789",
    tenantClient: client,
    hostClient: client,
    watches: fakeWatches(objects),
    writer,
    logger,
    enqueue: (key) => queued.push(key),
    publish: () => Promise.resolve(),
    warn: () => Promise.resolve(),
    events: { warn: () => Promise.resolve() } as unknown as TenantEvents,
    onStatus: () => {
      if (s.counts().lastFullPass !== undefined) passed();
    },
    mayWrite: () => true,
    writeToken: () => Promise.resolve(),
    limits,
    leaseValidMs: () => 5_000,
    observe: { outcome: noop, latency: noop },
    tenantCaPem: "",
    tokenRefreshMaxSeconds: 86_400,
  });
  syncer = s;
  s.start();
  await done;
  return { syncer: s, queued };
}

describe("TenantSyncer with a big tenant", () => {
  it("keeps objects beyond the tenant's limits as stubs, queues each (its Skip) and reports the limit", async () => {
    const objects = Array.from({ length: 40 }, (_, i) => configMap(i, 20_000));
    const { syncer: s, queued } = await firstPass(objects, {
      objectsPerKind: 1_000,
      objectBytes: 50_000,
      totalBytes: 400_000,
    });
    // Each ConfigMap is about 20.2 KB as JSON: 19 fit in 400 000 bytes.
    expect(queued).toHaveLength(40);
    expect(s.counts().limited).toBe(
      "21 objects not synced, over the tenant limits: 21 beyond 390.6 KiB in total (the chart value services.sync-worker.env.TENANT_MAX_BYTES)",
    );
  });
});
