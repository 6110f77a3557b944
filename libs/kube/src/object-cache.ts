import type { KubernetesObject } from "@kubernetes/client-node";
import type { Logger } from "@tenantplane/runtime";
import type { JsonClient } from "./json-client.js";
import { startListWatch, type ListWatch, type RawObject, type RawWatchEvent } from "./list-watch.js";
import { olderVersion } from "./resource-version.js";
import { resourcePath, type ResourceInfo } from "./internal/resource-paths.js";

/** One kind an {@link ObjectCache} holds, and which of its objects (a label selector; all when absent). */
export interface CachedKind {
  apiVersion: string;
  kind: string;
  /** The plural resource name and scope, as discovery would say. */
  resource: ResourceInfo;
  labelSelector?: string | undefined;
  /**
   * Watched one namespace at a time, in the namespaces named by `watchNamespace`, instead of
   * cluster-wide: for a namespaced kind the service may list and watch only where a RoleBinding
   * lets it.
   */
  perNamespace?: boolean | undefined;
}

/** A change to a cached object; `ours` when it is the answer to a write made through this cache's Objects. */
export type CacheEvent = RawWatchEvent & { ours: boolean };

/** What {@link ObjectCache} needs: a client for list+watch and a logger. */
export interface ObjectCacheOptions {
  client: JsonClient;
  kinds: readonly CachedKind[];
  logger: Logger;
}

/** What a reconciler tells its cache about the namespaces it acts in (see ObjectCache.watchNamespace). */
export type NamespaceWatches = Pick<ObjectCache, "watchNamespace" | "unwatchNamespace">;

interface KindCache {
  kind: CachedKind;
  /** The cluster-wide watch, or undefined for a kind cached per namespace. */
  all: ListWatch | undefined;
  byNamespace: Map<string, ListWatch>;
}

/**
 * Label-selected list+watch caches of the host objects a service reads, one per kind (or per
 * kind and namespace, see {@link CachedKind.perNamespace}), kept current by watches that resume
 * from their last resourceVersion and relist on 410 Gone. Reads answer from memory while the
 * cache that holds the object is current and say "not cached" otherwise, so a caller falls back
 * to the API instead of trusting a cache that may be behind. The answers to the service's own
 * writes are folded in at once (`observe`), so a pass that follows a write never sees the
 * object as it was before it.
 */
export class ObjectCache {
  private readonly kinds = new Map<string, KindCache>();
  private readonly overlay = new Map<string, RawObject | null>();
  // The last few versions this service's own writes produced, per object.
  private readonly own = new Map<string, string[]>();
  private readonly listeners = new Set<(event: CacheEvent) => void>();
  // Writes of ours on their way, per object, and the watch events held back until they answer.
  private readonly inFlight = new Map<string, number>();
  private readonly held = new Map<string, RawWatchEvent[]>();

  constructor(private readonly opts: ObjectCacheOptions) {
    for (const kind of opts.kinds) {
      const perNamespace = kind.perNamespace === true && kind.resource.namespaced;
      this.kinds.set(kindId(kind.apiVersion, kind.kind), {
        kind,
        all: perNamespace ? undefined : this.startWatch(kind, undefined),
        byNamespace: new Map(),
      });
    }
  }

  /** Resolves once every cluster-wide kind's first list is in memory (never rejects). */
  async synced(): Promise<void> {
    await Promise.all([...this.kinds.values()].map((k) => k.all?.synced));
  }

  /**
   * Starts the caches of the kinds held per namespace in `namespace`, once the service may list
   * and watch there (its RoleBinding is there); idempotent, and nothing for cluster-wide kinds.
   * A refusal while the authorizer has not seen the binding yet is retried like any failed watch;
   * reads in `namespace` go to the API server until its caches are current.
   */
  watchNamespace(namespace: string): void {
    for (const entry of this.kinds.values()) {
      if (entry.all || entry.byNamespace.has(namespace)) continue;
      entry.byNamespace.set(namespace, this.startWatch(entry.kind, namespace));
    }
  }

  /** Stops and forgets the per-namespace caches of `namespace` (its tenant is torn down); idempotent. */
  unwatchNamespace(namespace: string): void {
    for (const entry of this.kinds.values()) {
      const watch = entry.byNamespace.get(namespace);
      if (!watch) continue;
      watch.stop();
      entry.byNamespace.delete(namespace);
      const prefix = objectId(entry.kind.apiVersion, entry.kind.kind, namespace, "");
      for (const map of [this.overlay, this.own]) {
        for (const id of map.keys()) if (id.startsWith(prefix)) map.delete(id);
      }
    }
  }

  /** Whether `kind` (in `namespace`, for a kind cached per namespace) is cached and current, so `get` can answer for it. */
  covers(apiVersion: string, kind: string, namespace?: string): boolean {
    return this.watchFor(apiVersion, kind, namespace)?.watch.current() ?? false;
  }

  /**
   * The cached object, `null` when the cache knows there is none (among the objects its
   * selector covers), or `undefined` when it cannot answer (kind or namespace not cached, cache
   * not current).
   */
  get<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): T | null | undefined {
    const found = this.watchFor(apiVersion, kind, namespace);
    if (!found || !found.watch.current()) return undefined;
    const id = objectId(apiVersion, kind, found.namespace, name);
    if (this.overlay.has(id)) return (this.overlay.get(id) as T | null) ?? null;
    return (found.watch.get(found.namespace, name) as T | undefined) ?? null;
  }

  /**
   * Every cached object of `kind` in `namespace` (all namespaces when undefined) matching
   * `labelSelector`, or undefined when the cache cannot answer: kind or namespace not cached
   * (every namespace, for a kind cached per namespace), cache not current, or a selector that
   * does not narrow the cache's own (it could match objects the cache never holds).
   */
  list<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string | undefined; labelSelector?: string | undefined } = {},
  ): T[] | undefined {
    const found = this.watchFor(apiVersion, kind, opts.namespace);
    if (!found || !found.watch.current()) return undefined;
    const wanted = terms(opts.labelSelector ?? "");
    if (!terms(found.entry.kind.labelSelector ?? "").every((term) => term.startsWith("!") || wanted.includes(term)))
      return undefined;
    return found.watch
      .list()
      .filter(
        (o) =>
          (opts.namespace === undefined || o.metadata.namespace === opts.namespace) &&
          matchesSelector(o.metadata.labels, opts.labelSelector ?? ""),
      )
      .map((o) => this.get<T>(apiVersion, kind, o.metadata.name, o.metadata.namespace))
      .filter((o): o is T => o !== null && o !== undefined);
  }

  /**
   * Folds in what the server answered to a write of ours (`null` after a delete), until the
   * watch delivers that object again. Objects no cache holds (kind not cached, namespace not
   * watched) are ignored.
   */
  observe(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    object: KubernetesObject | null,
  ): void {
    const found = this.watchFor(apiVersion, kind, namespace);
    if (!found) return;
    const selector = found.entry.kind.labelSelector;
    if (object && selector && !matchesSelector(object.metadata?.labels, selector)) return;
    const id = objectId(apiVersion, kind, found.namespace, name);
    const version = object?.metadata?.resourceVersion;
    // The watch may have delivered this version, and newer ones, before the answer arrived (its
    // events wait in `held`, past the check in startWatch that drops a caught-up overlay): the
    // answer would then hide a newer object, such as another service's status write, until the
    // object's next event.
    const watched = found.watch.get(found.namespace, name)?.metadata.resourceVersion;
    const caughtUp =
      object !== null && !!version && !!watched && (watched === version || olderVersion(version, watched));
    if (caughtUp) this.overlay.delete(id);
    else this.overlay.set(id, object ? ({ ...object, apiVersion, kind } as RawObject) : null);
    if (version) this.own.set(id, [...(this.own.get(id) ?? []).slice(-(OWN_VERSIONS_KEPT - 1)), version]);
  }

  /**
   * Marks a write of ours to an object as on its way; call the returned function once it has
   * answered (after `observe`) or failed. The watch may deliver the change before the write's
   * answer arrives: such an event is held back until then, so it is recognised as ours instead
   * of waking a pass for the service's own write.
   */
  writing(apiVersion: string, kind: string, name: string, namespace: string | undefined): () => void {
    const found = this.watchFor(apiVersion, kind, namespace);
    if (!found) return () => undefined;
    const id = objectId(apiVersion, kind, found.namespace, name);
    this.inFlight.set(id, (this.inFlight.get(id) ?? 0) + 1);
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      const left = (this.inFlight.get(id) ?? 1) - 1;
      if (left > 0) {
        this.inFlight.set(id, left);
        return;
      }
      this.inFlight.delete(id);
      const held = this.held.get(id) ?? [];
      this.held.delete(id);
      for (const event of held) this.deliver(id, event);
    };
  }

  /** Calls `listener` for every change the watches deliver; returns a function that removes it. */
  onChange(listener: (event: CacheEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Objects held, per kind (for memory accounting). */
  sizes(): Record<string, number> {
    return Object.fromEntries(
      [...this.kinds.entries()].map(([id, k]) => [
        id,
        [...(k.all ? [k.all] : []), ...k.byNamespace.values()].reduce((n, w) => n + w.list().length, 0),
      ]),
    );
  }

  stop(): void {
    for (const entry of this.kinds.values()) {
      entry.all?.stop();
      for (const watch of entry.byNamespace.values()) watch.stop();
      entry.byNamespace.clear();
    }
  }

  // The watch that holds objects of `kind` in `namespace`, and the namespace it files them under.
  private watchFor(apiVersion: string, kind: string, namespace: string | undefined) {
    const entry = this.kinds.get(kindId(apiVersion, kind));
    if (!entry) return undefined;
    const ns = entry.kind.resource.namespaced ? namespace : undefined;
    const watch = entry.all ?? (ns === undefined ? undefined : entry.byNamespace.get(ns));
    return watch ? { entry, watch, namespace: ns } : undefined;
  }

  private isOurs(id: string, event: RawWatchEvent): boolean {
    const version = event.object.metadata.resourceVersion;
    return version !== undefined && (this.own.get(id)?.includes(version) ?? false);
  }

  private deliver(id: string, event: RawWatchEvent): void {
    const ours = this.isOurs(id, event);
    if (event.type === "delete") this.own.delete(id);
    for (const listener of this.listeners) listener({ ...event, ours });
  }

  private startWatch(kind: CachedKind, namespace: string | undefined): ListWatch {
    return startListWatch({
      client: this.opts.client,
      path: resourcePath(kind.apiVersion, kind.resource, namespace),
      apiVersion: kind.apiVersion,
      kind: kind.kind,
      labelSelector: kind.labelSelector,
      logger: this.opts.logger,
      onEvent: (event) => {
        const { namespace, name, resourceVersion } = event.object.metadata;
        const id = objectId(kind.apiVersion, kind.kind, namespace, name);
        // The watch caught up with (or overtook) what a write of ours put in the overlay.
        if (!olderVersion(resourceVersion, this.overlay.get(id)?.metadata.resourceVersion)) this.overlay.delete(id);
        const held = this.held.get(id);
        if (held) held.push(event);
        else if (this.inFlight.has(id) && !this.isOurs(id, event)) this.held.set(id, [event]);
        else this.deliver(id, event);
      },
    });
  }
}

/**
 * Whether `labels` satisfy an equality-based selector (`a=b,c!=d,e,!f`): the forms the caches
 * are configured with. Set-based terms are not understood and never match.
 */
export function matchesSelector(labels: Record<string, string> | undefined, selector: string): boolean {
  const have = labels ?? {};
  return terms(selector).every((term) => {
    if (term.startsWith("!")) return !(term.slice(1) in have);
    const neq = term.indexOf("!=");
    if (neq !== -1) return have[term.slice(0, neq)] !== term.slice(neq + 2);
    const eq = term.indexOf("=");
    if (eq === -1) return term in have;
    const key = term.slice(0, eq);
    const value = term.slice(eq + (term[eq + 1] === "=" ? 2 : 1));
    return have[key] === value;
  });
}

function terms(selector: string): string[] {
  return selector
    .split(",")
    .map((term) => term.trim())
    .filter((term) => term !== "");
}

const OWN_VERSIONS_KEPT = 4;

const kindId = (apiVersion: string, kind: string) => `${apiVersion}/${kind}`;
const objectId = (apiVersion: string, kind: string, namespace: string | undefined, name: string) =>
  `${apiVersion}/${kind}/${namespace ?? ""}/${name}`;
