import type { JsonClient, ListWatch, ListWatchOptions, RawWatchEvent } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { SharedWatches } from "./shared-watches.js";

const logger = { error: () => undefined } as unknown as ListWatchOptions["logger"];
const event = (name: string): RawWatchEvent => ({
  type: "add",
  object: { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "a" } },
});

/** A start function that records what it started and lets the test drive each watch. */
function recorder() {
  const started: Array<{ opts: ListWatchOptions; stopped: boolean }> = [];
  const start = (opts: ListWatchOptions): ListWatch => {
    const entry = { opts, stopped: false };
    started.push(entry);
    return {
      get: () => undefined,
      list: () => [],
      current: () => true,
      synced: Promise.resolve(),
      reconsider: () => false,
      stop: () => {
        entry.stopped = true;
      },
    };
  };
  return { started, start };
}

describe("SharedWatches", () => {
  const tenant = {} as JsonClient;
  const host = {} as JsonClient;
  const opts = (client: JsonClient, path: string, onEvent: (e: RawWatchEvent) => void, labelSelector?: string) => ({
    client,
    path,
    apiVersion: "v1",
    kind: "Pod",
    logger,
    onEvent,
    ...(labelSelector ? { labelSelector } : {}),
  });

  it("starts one watch per client, path and selector, and gives every event to every subscriber", () => {
    const { started, start } = recorder();
    const watches = new SharedWatches(start);
    const seen: string[] = [];
    watches.open(opts(tenant, "/api/v1/pods", (e) => seen.push(`sync ${e.object.metadata.name}`)));
    watches.open(opts(tenant, "/api/v1/pods", (e) => seen.push(`back ${e.object.metadata.name}`)));
    watches.open(opts(host, "/api/v1/pods", () => undefined));
    watches.open(opts(tenant, "/api/v1/pods", () => undefined, "app=x"));
    expect(started).toHaveLength(3);
    started[0]!.opts.onEvent(event("p"));
    expect(seen).toEqual(["sync p", "back p"]);
  });

  it("stops the watch only when its last handle stops, and a stopped handle hears nothing", () => {
    const { started, start } = recorder();
    const watches = new SharedWatches(start);
    const seen: string[] = [];
    const first = watches.open(opts(tenant, "/api/v1/pods", () => seen.push("first")));
    const second = watches.open(opts(tenant, "/api/v1/pods", () => seen.push("second")));
    first.stop();
    first.stop();
    expect(started[0]!.stopped).toBe(false);
    started[0]!.opts.onEvent(event("p"));
    expect(seen).toEqual(["second"]);
    second.stop();
    expect(started[0]!.stopped).toBe(true);
    expect(watches.size).toBe(0);
    // A later open starts afresh.
    watches.open(opts(tenant, "/api/v1/pods", () => undefined));
    expect(started).toHaveLength(2);
  });

  it("keeps delivering to the others when one subscriber throws", () => {
    const { started, start } = recorder();
    const watches = new SharedWatches(start);
    const seen: string[] = [];
    watches.open(
      opts(tenant, "/api/v1/pods", () => {
        throw new Error("boom");
      }),
    );
    watches.open(opts(tenant, "/api/v1/pods", () => seen.push("ok")));
    started[0]!.opts.onEvent(event("p"));
    expect(seen).toEqual(["ok"]);
  });
});
