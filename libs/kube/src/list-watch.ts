import { backoffDelay, httpStatusOf, sleep, type Logger } from "@tenantplane/runtime";
import { eventMetadata } from "./event-metadata.js";
import { METADATA_ONLY, METADATA_ONLY_LIST, type JsonClient, type Query } from "./json-client.js";

/** An object as the API server sends it: plain JSON with metadata. */
export interface RawObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/**
 * A change seen by a {@link ListWatch}; `delete` carries the last state the cache held, and an
 * `update` the state it replaced as `previous`, so a handler can tell what changed.
 */
export interface RawWatchEvent {
  type: "add" | "update" | "delete";
  object: RawObject;
  previous?: RawObject;
}

/** A running list+watch with its cache. */
export interface ListWatch {
  /** One cached object by namespace and name. */
  get(namespace: string | undefined, name: string): RawObject | undefined;
  /** Every cached object. */
  list(): RawObject[];
  /**
   * True while the cache is complete and current: a list has completed and the watch
   * that followed it is open with no error since. Garbage collection trusts the cache
   * only while this holds.
   */
  current(): boolean;
  /** Resolves once the first complete list is in the cache (never rejects). */
  readonly synced: Promise<void>;
  /**
   * The version the cache holds of an object, fetched again by the caller (one the transform
   * cut down, which it would now keep whole): transformed and cached anew, and reported as an
   * update. Any other version is ignored (false): the watch brings newer ones itself, and an
   * older one must never replace what it brought.
   */
  reconsider(obj: RawObject): boolean;
  stop(): void;
}

/** What {@link startListWatch} watches and whom it tells. */
export interface ListWatchOptions {
  client: JsonClient;
  /** Collection path, e.g. `/api/v1/pods` or `/api/v1/namespaces/tp-a/configmaps`. */
  path: string;
  apiVersion: string;
  /** Set on every cached object (list items omit it). */
  kind: string;
  labelSelector?: string | undefined;
  logger: Logger;
  /** Called synchronously for each change; must not throw (a throw is logged and dropped). */
  onEvent: (event: RawWatchEvent) => void;
  /** Called when the cache stops or starts being current. */
  onCurrent?: (current: boolean, err?: unknown) => void;
  pageSize?: number;
  /**
   * Applied to each object as it arrives, before it is cached or reported (client-go's
   * TransformFunc): lets a caller keep only what it reads of large objects, so a page of
   * them is never held whole. Must not throw; receives a fresh object it may return as is.
   */
  transform?: (obj: RawObject) => RawObject;
  /**
   * List and watch the objects' metadata only (`PartialObjectMetadata`): the API server sends
   * neither spec, data nor status, and each cached object is its metadata with apiVersion and
   * kind set. For a caller that reads only labels, annotations and versions of objects that may
   * be large. (A server that cannot convert sends whole objects; they are cached as sent.)
   */
  metadataOnly?: boolean;
  /**
   * Watch events of at least `minBytes` are first read for their metadata alone
   * ({@link eventMetadata}): `peek` gets the object with only its metadata (kind and apiVersion
   * set) and the sizes read, and returns what to cache and report in place of the whole object
   * (which is then never decoded or parsed, and not transformed), or undefined to read it whole.
   * For objects whose payload the caller would not keep anyway (beyond a budget).
   */
  largeEvents?: {
    minBytes: number;
    peek: (obj: RawObject, sizes: { objectBytes: number; metadataBytes: number }) => RawObject | undefined;
  };
}

/** Marks a watch event whose object `largeEvents.peek` gave: cached as it is. */
const PEEKED = Symbol("peeked");

const GONE = 410;
const FORBIDDEN = 403;
const FORBIDDEN_QUIET_ATTEMPTS = 3;

/**
 * List+watch on raw JSON: pages the first list, watches from its resourceVersion with
 * bookmarks, resumes a dropped watch from the last version seen, relists on 410 Gone
 * (reporting objects that vanished meanwhile as deletes), and retries failures with
 * jittered backoff. Never throws into its caller.
 */
export function startListWatch(opts: ListWatchOptions): ListWatch {
  const cache = new Map<string, RawObject>();
  const abort = new AbortController();
  let resourceVersion: string | undefined;
  let isCurrent = false;
  let markSynced!: () => void;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  const key = (namespace: string | undefined, name: string) => `${namespace ?? ""}/${name}`;
  const emit = (event: RawWatchEvent) => {
    try {
      opts.onEvent(event);
    } catch (err) {
      opts.logger.error({ err, path: opts.path }, "list-watch handler failed");
    }
  };
  // A failure is reported once per outage, including one that starts before the first list.
  let failureReported = false;
  const setCurrent = (value: boolean, err?: unknown) => {
    if (value) failureReported = false;
    if (value === isCurrent && (value || failureReported)) return;
    if (!value) failureReported = true;
    isCurrent = value;
    opts.onCurrent?.(value, err);
  };
  const transform = opts.transform ?? ((obj: RawObject) => obj);
  const withKind = (obj: RawObject): RawObject => transform({ ...obj, apiVersion: opts.apiVersion, kind: opts.kind });

  const relist = async () => {
    const fresh = new Map<string, RawObject>();
    let next: string | undefined;
    let version = "";
    do {
      const page = await opts.client.request<{
        items?: RawObject[];
        metadata?: { resourceVersion?: string; continue?: string };
      }>("GET", opts.path, {
        query: { labelSelector: opts.labelSelector, limit: opts.pageSize ?? 500, continue: next },
        ...(opts.metadataOnly ? { accept: METADATA_ONLY_LIST } : {}),
      });
      for (const item of page.items ?? []) fresh.set(key(item.metadata.namespace, item.metadata.name), withKind(item));
      next = page.metadata?.continue || undefined;
      version = page.metadata?.resourceVersion ?? version;
    } while (next !== undefined);
    for (const [k, old] of cache) {
      if (!fresh.has(k)) {
        cache.delete(k);
        emit({ type: "delete", object: old });
      }
    }
    for (const [k, obj] of fresh) {
      const old = cache.get(k);
      cache.set(k, obj);
      if (old === undefined) emit({ type: "add", object: obj });
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
        emit({ type: "update", object: obj, previous: old });
    }
    resourceVersion = version;
  };

  const watch = async () => {
    const query: Query = {
      watch: true,
      allowWatchBookmarks: true,
      resourceVersion,
      labelSelector: opts.labelSelector,
      timeoutSeconds: 240 + Math.floor(Math.random() * 120),
    };
    const large = opts.largeEvents;
    const events = opts.client.stream(opts.path, query, abort.signal, {
      ...(opts.metadataOnly ? { accept: METADATA_ONLY } : {}),
      ...(large && {
        large: {
          minBytes: large.minBytes,
          peek: (line: Buffer) => {
            const read = eventMetadata(line);
            if (read === undefined || (read.type !== "ADDED" && read.type !== "MODIFIED")) return undefined;
            const object = large.peek(
              { ...read.object, apiVersion: opts.apiVersion, kind: opts.kind } as RawObject,
              read,
            );
            return object === undefined ? undefined : { type: read.type, object, [PEEKED]: true };
          },
        },
      }),
    });
    let opened = false;
    for await (const raw of events) {
      if (!opened) {
        opened = true;
        setCurrent(true);
      }
      const { type, object } = raw as { type: string; object: RawObject & { code?: number } };
      if (type === "ERROR") {
        if (object.code === GONE) {
          resourceVersion = undefined;
          return;
        }
        throw Object.assign(new Error(`watch ${opts.path}: ${String((object as { message?: unknown }).message)}`), {
          code: object.code,
        });
      }
      const version = object.metadata?.resourceVersion;
      if (type === "BOOKMARK") {
        if (version) resourceVersion = version;
        continue;
      }
      const obj = (raw as { [PEEKED]?: true })[PEEKED] ? object : withKind(object);
      const k = key(obj.metadata.namespace, obj.metadata.name);
      if (type === "DELETED") {
        cache.delete(k);
        emit({ type: "delete", object: obj });
      } else if (type === "ADDED" || type === "MODIFIED") {
        const previous = cache.get(k);
        cache.set(k, obj);
        emit(previous ? { type: "update", object: obj, previous } : { type: "add", object: obj });
      }
      if (version) resourceVersion = version;
    }
    // The watch opened and ended without events: the stream itself proves the cache current.
    if (!opened) setCurrent(true);
  };

  void (async () => {
    let attempt = 0;
    while (!abort.signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          await relist();
          setCurrent(true);
          markSynced();
        }
        await watch();
        attempt = 0;
      } catch (err) {
        if (abort.signal.aborted) break;
        if (httpStatusOf(err) === GONE) {
          resourceVersion = undefined;
          continue;
        }
        setCurrent(false, err);
        // RBAC's authorizer learns a new RoleBinding through its own informer, so a watch started
        // right after the binding that allows it is refused for a moment: not worth a warning yet.
        const level = httpStatusOf(err) === FORBIDDEN && attempt < FORBIDDEN_QUIET_ATTEMPTS ? "info" : "warn";
        const delayMs = backoffDelay(attempt++, 500, 15_000);
        opts.logger[level]({ err: describeError(err), path: opts.path, delayMs }, "list-watch failed; retrying");
        await sleep(delayMs, abort.signal);
      }
    }
  })();

  return {
    get: (namespace, name) => cache.get(key(namespace, name)),
    list: () => [...cache.values()],
    current: () => isCurrent,
    synced,
    reconsider: (fetched) => {
      const k = key(fetched.metadata.namespace, fetched.metadata.name);
      const previous = cache.get(k);
      const version = fetched.metadata.resourceVersion;
      if (previous === undefined || version === undefined || previous.metadata.resourceVersion !== version)
        return false;
      const obj = withKind(fetched);
      cache.set(k, obj);
      emit({ type: "update", object: obj, previous });
      return true;
    },
    stop: () => {
      abort.abort();
      failureReported = true;
      setCurrent(false);
    },
  };
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
