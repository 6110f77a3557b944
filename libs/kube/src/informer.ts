import { makeInformer, type KubeConfig, type KubernetesObject, type ListPromise } from "@kubernetes/client-node";
import { backoffDelay, type Logger } from "@tenantplane/runtime";

/** What a watch reports: the event type and the object as the server last saw it. */
export type WatchEvent<T> = { type: "add" | "update" | "delete"; object: T };

/** A started watch; `stop` ends it for good. */
export interface RunningWatch<T extends KubernetesObject> {
  /** Objects as of the latest list/watch event (the informer's cache). */
  list(): readonly T[];
  /** One object from the cache by name (and namespace), or undefined. */
  get(name: string, namespace?: string): T | undefined;
  /** Resolves once the first list has been delivered. */
  synced: Promise<void>;
  stop(): Promise<void>;
}

/**
 * List+watch with a local cache. The callback never throws into the watch:
 * errors are logged and counted by the caller. On any watch error (including
 * 410 Gone) the informer relists after a jittered backoff, so a restart of the
 * API server or an expired resourceVersion only delays events.
 */
export function startWatch<T extends KubernetesObject>(opts: {
  kc: KubeConfig;
  path: string;
  list: ListPromise<T>;
  onEvent: (event: WatchEvent<T>) => void | Promise<void>;
  logger: Logger;
  labelSelector?: string;
}): RunningWatch<T> {
  const informer = makeInformer(opts.kc, opts.path, opts.list, opts.labelSelector);
  let stopped = false;
  let attempt = 0;
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  const deliver = (type: WatchEvent<T>["type"]) => (object: T) => {
    void (async () => {
      try {
        await opts.onEvent({ type, object });
      } catch (err) {
        opts.logger.error({ err, path: opts.path, type }, "watch handler failed");
      }
    })();
  };
  informer.on("add", deliver("add"));
  informer.on("update", deliver("update"));
  informer.on("delete", deliver("delete"));
  let failedDuringStart = false;
  const retry = (err: unknown) => {
    failedDuringStart = true;
    if (stopped) return;
    const delayMs = backoffDelay(attempt++, 500, 30_000);
    opts.logger.warn({ err, path: opts.path, delayMs }, "watch failed; relisting");
    setTimeout(() => {
      if (!stopped) run();
    }, delayMs);
  };
  // The informer reports list/watch failures through "error" and then stops;
  // restarting it relists (and a 410 Gone has already cleared its resourceVersion).
  const run = () => {
    failedDuringStart = false;
    informer.start().then(() => {
      if (!failedDuringStart && !stopped) {
        attempt = 0;
        markSynced();
      }
    }, retry);
  };
  informer.on("error", retry);
  run();
  return {
    list: () => informer.list(),
    get: (name, namespace) => informer.get(name, namespace),
    synced,
    stop: async () => {
      stopped = true;
      await informer.stop();
    },
  };
}
