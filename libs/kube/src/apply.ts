import type { KubeConfig, KubernetesObject } from "@kubernetes/client-node";
import { httpStatusOf } from "@tenantplane/runtime";
import { ResourceDirectory, resourcePath } from "./internal/resource-paths.js";
import type { RequestTarget } from "./api-error.js";
import { JsonClient } from "./json-client.js";
import type { ObjectCache } from "./object-cache.js";
import type { RequestBudget } from "./token-bucket.js";

const APPLY_PATCH = "application/apply-patch+yaml";
const MERGE_PATCH = "application/merge-patch+json";
/** Connections to the API server at once; more requests wait for one. */
const MAX_SOCKETS = 32;

interface ObjectList<T> {
  items?: T[];
  metadata?: { continue?: string };
}

/**
 * A cluster's objects for one field manager, read and written as plain JSON:
 * what the caller builds is exactly what the API server receives, and what the
 * server stores is exactly what the caller reads back.
 */
export class Objects {
  private readonly client: JsonClient;
  private readonly resources: ResourceDirectory;
  private cache: ObjectCache | undefined;

  constructor(
    kc: KubeConfig,
    readonly fieldManager: string,
    opts: { userAgent?: string; budget?: RequestBudget } = {},
  ) {
    this.client = new JsonClient(kc, { userAgent: opts.userAgent, budget: opts.budget, maxSockets: MAX_SOCKETS });
    this.resources = new ResourceDirectory(this.client);
  }

  /**
   * Serves `get` and `list` from `cache` for the kinds it holds while it is current, and folds
   * the answers to this manager's writes into it. An object the cache's selector does not cover
   * reads as absent: callers that must tell "absent" from "held by someone else" ask with `fresh`.
   */
  useCache(cache: ObjectCache): void {
    this.cache = cache;
  }

  /**
   * Server-side apply with force: this manager owns the fields it sends and
   * nothing else, so services sharing an object never overwrite each other.
   * With `ifResourceVersion` it only updates the version that was read; with `dryRun`
   * the server answers with what it would store and stores nothing.
   */
  async apply<T extends KubernetesObject>(
    obj: T,
    opts: { ifResourceVersion?: string | undefined; dryRun?: boolean } = {},
  ): Promise<T> {
    const body = { ...obj, metadata: { ...obj.metadata } } as T;
    delete body.metadata?.resourceVersion;
    delete body.metadata?.managedFields;
    // A resourceVersion turns the apply into "update exactly what I read": it fails
    // with a conflict if the object changed and can never create one that is gone.
    if (opts.ifResourceVersion) body.metadata!.resourceVersion = opts.ifResourceVersion;
    const path = await this.pathOf(obj);
    const send = () =>
      this.client.request<T>("PATCH", path, {
        query: { fieldManager: this.fieldManager, force: true, dryRun: opts.dryRun ? "All" : undefined },
        body,
        contentType: APPLY_PATCH,
        target: targetOf(obj),
      });
    return opts.dryRun ? send() : this.write(obj, send);
  }

  /** Creates an object; an existing one of the same name is a 409 (AlreadyExists), never overwritten. */
  async create<T extends KubernetesObject>(obj: T): Promise<T> {
    const info = await this.resources.lookup(obj.apiVersion!, obj.kind!);
    return this.write(obj, () =>
      this.client.request<T>("POST", resourcePath(obj.apiVersion!, info, obj.metadata?.namespace), {
        query: { fieldManager: this.fieldManager },
        body: obj,
        target: targetOf(obj),
      }),
    );
  }

  /**
   * JSON merge patch of `patch` onto the object `obj` names. A `metadata.resourceVersion`
   * in the patch makes it conditional (409 if the object changed since it was read).
   */
  async mergePatch<T extends KubernetesObject>(obj: KubernetesObject, patch: Record<string, unknown>): Promise<T> {
    const path = await this.pathOf(obj);
    return this.write<T>(obj, () =>
      this.client.request<T>("PATCH", path, {
        query: { fieldManager: this.fieldManager },
        body: patch,
        contentType: MERGE_PATCH,
        target: targetOf(obj),
      }),
    );
  }

  /**
   * Reads an object, or undefined when it does not exist: from the cache when one holds the
   * kind (see useCache), from the API server with `fresh` or otherwise.
   */
  async get<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    opts: { fresh?: boolean } = {},
  ): Promise<T | undefined> {
    if (!opts.fresh) {
      const cached = this.cache?.get<T>(apiVersion, kind, name, namespace);
      if (cached !== undefined) return cached ?? undefined;
    }
    const path = await this.pathOf({ apiVersion, kind, metadata: { name, namespace } });
    try {
      return await this.client.request<T>("GET", path);
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** Lists objects of a kind, optionally namespaced and label-selected, following continue tokens. */
  async list<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string } = {},
  ): Promise<T[]> {
    const cached = this.cache?.list<T>(apiVersion, kind, opts);
    if (cached) return cached;
    const info = await this.resources.lookup(apiVersion, kind);
    const path = resourcePath(apiVersion, info, opts.namespace);
    const out: T[] = [];
    let continueToken: string | undefined;
    do {
      const page = await this.client.request<ObjectList<T>>("GET", path, {
        query: { labelSelector: opts.labelSelector, limit: 500, continue: continueToken },
      });
      // List items carry no apiVersion/kind of their own.
      out.push(...(page.items ?? []).map((item) => ({ ...item, apiVersion, kind })));
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return out;
  }

  /**
   * Deletes an object; absent is success (false). Background propagation lets the GC remove
   * dependents. With `preconditions` the server refuses (409) to delete an object whose uid or
   * resourceVersion differs, so a delete never lands on an object that changed owner in between.
   */
  async delete(
    obj: KubernetesObject,
    opts: { preconditions?: { uid?: string; resourceVersion?: string } } = {},
  ): Promise<boolean> {
    try {
      await this.client.request("DELETE", await this.pathOf(obj), {
        body: {
          apiVersion: "v1",
          kind: "DeleteOptions",
          propagationPolicy: "Background",
          ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
        },
        target: targetOf(obj),
      });
      // Background propagation: the object may linger with a deletionTimestamp; the watch says when it is gone.
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 404) {
        this.remember(obj, null);
        return false;
      }
      throw err;
    }
  }

  /**
   * Applies `status` to a cluster-scoped custom resource's status subresource.
   * Conditions are a map list keyed by type, so each manager owns its own condition.
   */
  async applyClusterStatus(
    ref: { group: string; version: string; plural: string; kind: string; name: string },
    status: Record<string, unknown>,
  ): Promise<void> {
    const apiVersion = `${ref.group}/${ref.version}`;
    const obj = { apiVersion, kind: ref.kind, metadata: { name: ref.name } };
    await this.write(obj, () =>
      this.client.request<KubernetesObject>(
        "PATCH",
        resourcePath(apiVersion, { resource: ref.plural, namespaced: false }, undefined, ref.name, "status"),
        {
          query: { fieldManager: this.fieldManager, force: true },
          body: { ...obj, status },
          contentType: APPLY_PATCH,
          target: { kind: ref.kind, name: ref.name },
        },
      ),
    );
  }

  /**
   * Sends a write to `obj` and folds the answer into the cache; the cache knows the write is on
   * its way until then (see ObjectCache.writing), so the watch's echo of it is recognised as ours.
   */
  private async write<T extends KubernetesObject>(obj: KubernetesObject, send: () => Promise<T>): Promise<T> {
    const { apiVersion, kind } = obj;
    const name = obj.metadata?.name;
    const done =
      this.cache && apiVersion && kind && name
        ? this.cache.writing(apiVersion, kind, name, obj.metadata?.namespace)
        : undefined;
    try {
      const answer = await send();
      this.remember(obj, answer);
      return answer;
    } finally {
      done?.();
    }
  }

  private remember(obj: KubernetesObject, answer: KubernetesObject | null): void {
    const { apiVersion, kind } = obj;
    const name = obj.metadata?.name;
    if (this.cache && apiVersion && kind && name)
      this.cache.observe(apiVersion, kind, name, obj.metadata?.namespace, answer);
  }

  private async pathOf(obj: KubernetesObject): Promise<string> {
    const { apiVersion, kind } = obj;
    const name = obj.metadata?.name;
    if (!apiVersion || !kind || !name) throw new Error("an object needs apiVersion, kind and metadata.name");
    const info = await this.resources.lookup(apiVersion, kind);
    return resourcePath(apiVersion, info, obj.metadata?.namespace, name);
  }
}

function targetOf(obj: KubernetesObject): RequestTarget {
  return { kind: obj.kind ?? "", name: obj.metadata?.name ?? "", namespace: obj.metadata?.namespace };
}
