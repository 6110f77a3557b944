import { ApiError, resourcePath, type JsonClient, type RawObject, type RequestBudget } from "@tenantplane/kube";
import type { HostObject } from "@tenantplane/sync";
import { httpStatusOf } from "@tenantplane/runtime";

/** REST resource names of the synced kinds (all core/v1). */
export const PLURALS: Readonly<Record<string, string>> = {
  Pod: "pods",
  ConfigMap: "configmaps",
  Secret: "secrets",
  Service: "services",
  ServiceAccount: "serviceaccounts",
  PersistentVolumeClaim: "persistentvolumeclaims",
};

/** The REST resource name of a synced kind; throws for kinds the sync worker does not carry. */
export function pluralOf(kind: string): string {
  const plural = PLURALS[kind];
  if (plural === undefined) throw new Error(`kind ${kind} is not a synced kind`);
  return plural;
}

// Kinds whose spec the host fills in after creation (scheduler, volume binder) or keeps
// immutable: a replace would try to erase those fields, so their updates are applied.
const APPLIED_KINDS = new Set(["Pod", "PersistentVolumeClaim"]);

/** Host verbs, counted so a steady state can be shown to cost nothing. */
export type HostVerb = "get" | "create" | "update" | "delete";

/**
 * Writes host copies as raw JSON with preconditions: create only where the name is free
 * (409 otherwise), update only the resourceVersion and uid that were read, delete only
 * the uid and version that were planned. Every request takes a token from the global
 * host budget first.
 */
export class HostWriter {
  constructor(
    private readonly client: JsonClient,
    private readonly fieldManager: string,
    private readonly budget: RequestBudget,
    private readonly count: (verb: HostVerb) => void = () => undefined,
  ) {}

  /** Creates `obj`; "exists" when the name is already taken (by anything). */
  async create(obj: HostObject): Promise<RawObject | "exists"> {
    await this.spend("create");
    try {
      return await this.client.request<RawObject>(
        "POST",
        resourcePath("v1", pluralOf(obj.kind), obj.metadata.namespace),
        { query: { fieldManager: this.fieldManager }, body: obj },
      );
    } catch (err) {
      if (httpStatusOf(err) === 409) return "exists";
      throw err;
    }
  }

  /** Updates the copy read as `current` to `obj`; a 409 means it changed meanwhile. */
  async update(obj: HostObject, current: RawObject): Promise<RawObject> {
    await this.spend("update");
    const path = resourcePath("v1", pluralOf(obj.kind), obj.metadata.namespace, obj.metadata.name);
    const metadata = { ...obj.metadata, resourceVersion: current.metadata.resourceVersion, uid: current.metadata.uid };
    if (APPLIED_KINDS.has(obj.kind)) {
      return this.client.request<RawObject>("PATCH", path, {
        query: { fieldManager: this.fieldManager, force: true },
        body: { ...obj, metadata },
        contentType: "application/apply-patch+yaml",
      });
    }
    return this.client.request<RawObject>("PUT", path, {
      query: { fieldManager: this.fieldManager },
      body: { ...obj, metadata },
    });
  }

  /**
   * Deletes exactly the object read as `current`; false when it is already gone. A grace
   * period (a tenant Pod's own) replaces the host object's default.
   */
  async delete(current: RawObject, gracePeriodSeconds?: number): Promise<boolean> {
    await this.spend("delete");
    const kind = current.kind ?? "";
    try {
      await this.client.request(
        "DELETE",
        resourcePath("v1", pluralOf(kind), current.metadata.namespace, current.metadata.name),
        {
          body: {
            apiVersion: "v1",
            kind: "DeleteOptions",
            propagationPolicy: "Background",
            ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
            preconditions: { uid: current.metadata.uid, resourceVersion: current.metadata.resourceVersion },
          },
        },
      );
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 404) return false;
      throw err;
    }
  }

  /** Reads one host object, or undefined. */
  async get(kind: string, namespace: string, name: string): Promise<RawObject | undefined> {
    await this.spend("get");
    try {
      const obj = await this.client.request<RawObject>("GET", resourcePath("v1", pluralOf(kind), namespace, name));
      return { ...obj, apiVersion: "v1", kind };
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  private async spend(verb: HostVerb): Promise<void> {
    await this.budget.wait();
    this.count(verb);
  }
}
