import type { JsonClient, ListWatch, ListWatchOptions, RawObject } from "@tenantplane/kube";
import { LABEL_KIND } from "@tenantplane/mapping";
import { describe, expect, it } from "vitest";
import { openHostWatch, unionWatch } from "./host-copy-watch.js";
import { SharedWatches } from "./shared-watches.js";

const logger = {
  error: () => undefined,
  child: () => logger,
} as unknown as ListWatchOptions["logger"];

const object = (name: string, resourceVersion = "1"): RawObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "tp-a", resourceVersion },
});

/** A watch over a fixed cache, as a started list-watch would hold it. */
function cached(objects: RawObject[], isCurrent = true) {
  const cache = new Map(objects.map((o) => [o.metadata.name, o]));
  const state = { current: isCurrent, stopped: false, reconsidered: [] as string[] };
  const watch: ListWatch = {
    get: (_namespace, name) => cache.get(name),
    list: () => [...cache.values()],
    current: () => state.current,
    synced: Promise.resolve(),
    reconsider: (obj) => {
      const held = cache.get(obj.metadata.name);
      if (held?.metadata.resourceVersion !== obj.metadata.resourceVersion) return false;
      state.reconsidered.push(obj.metadata.name);
      return true;
    },
    stop: () => {
      state.stopped = true;
    },
  };
  return { watch, state };
}

describe("openHostWatch", () => {
  const opened = (kind: string) => {
    const started: ListWatchOptions[] = [];
    const watches = new SharedWatches((opts) => {
      started.push(opts);
      return cached([]).watch;
    });
    openHostWatch(watches, {
      client: {} as JsonClient,
      path: "/api/v1/namespaces/tp-a/x",
      apiVersion: "v1",
      kind,
      labelSelector: "managed=yes",
      pageSize: 4,
      logger,
      onEvent: () => undefined,
    });
    return started.map((o) => ({ selector: o.labelSelector, metadataOnly: o.metadataOnly ?? false, page: o.pageSize }));
  };

  it("reads ConfigMap and Secret sync copies as metadata only and tenantplane's own objects of those kinds whole", () => {
    for (const kind of ["ConfigMap", "Secret"]) {
      expect(opened(kind)).toEqual([
        { selector: `managed=yes,${LABEL_KIND}`, metadataOnly: true, page: 500 },
        { selector: `managed=yes,!${LABEL_KIND}`, metadataOnly: false, page: 4 },
      ]);
    }
  });

  it("reads every other kind whole, in one watch", () => {
    for (const kind of ["Pod", "Service", "PersistentVolumeClaim"]) {
      expect(opened(kind)).toEqual([{ selector: "managed=yes", metadataOnly: false, page: 4 }]);
    }
  });
});

describe("unionWatch", () => {
  it("finds an object in either watch, lists both, and is current only while both are", () => {
    const copies = cached([object("copy")]);
    const own = cached([object("record")], false);
    const union = unionWatch(copies.watch, own.watch);
    expect(union.get("tp-a", "copy")?.metadata.name).toBe("copy");
    expect(union.get("tp-a", "record")?.metadata.name).toBe("record");
    expect(union.get("tp-a", "neither")).toBeUndefined();
    expect(union.list().map((o) => o.metadata.name)).toEqual(["copy", "record"]);
    expect(union.current()).toBe(false);
    own.state.current = true;
    expect(union.current()).toBe(true);
  });

  it("hands a fetched version to the watch that holds it, and stops both", async () => {
    const copies = cached([object("copy", "7")]);
    const own = cached([object("record", "3")]);
    const union = unionWatch(copies.watch, own.watch);
    await expect(union.synced).resolves.toBeUndefined();
    expect(union.reconsider(object("record", "3"))).toBe(true);
    expect(union.reconsider(object("copy", "6"))).toBe(false);
    expect([copies.state.reconsidered, own.state.reconsidered]).toEqual([[], ["record"]]);
    union.stop();
    expect([copies.state.stopped, own.state.stopped]).toEqual([true, true]);
  });
});
