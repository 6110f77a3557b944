import {
  ApiError,
  METADATA_ONLY,
  resourcePath,
  type JsonClient,
  type RawObject,
  type RequestBudget,
} from "@tenantplane/kube";
import type { HostObject } from "@tenantplane/sync";
import { httpStatusOf, TransientError } from "@tenantplane/runtime";

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

/**
 * What a write or read answers with: the whole object, or its metadata only (the API server
 * sends `PartialObjectMetadata`), for a caller that reads nothing else of a possibly megabyte
 * object (a sync copy of a ConfigMap or Secret: its uid and version, its labels and annotations).
 */
export type Answer = "whole" | "metadata";

function acceptOf(answer: Answer): { accept?: string } {
  return answer === "metadata" ? { accept: METADATA_ONLY } : {};
}

/** Host verbs, counted so a steady state can be shown to cost nothing. */
export type HostVerb = "get" | "create" | "update" | "delete";

/** The longest a host request may take when no lease bounds it (the host client's own timeout). */
export const HOST_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Milliseconds the lease a writer acts under stays valid, already short of the fence margin
 * (libs/partition: `sentAt + ttl - fenceMargin` of the last confirmed renewal, minus now);
 * 0 or less once lost or fenced.
 */
export type LeaseValidity = () => number;

/** A host writer bound to one tenant's partition lease (see {@link HostWriter.forTenant}). */
export type TenantWriter = HostWriter;

/** A write refused before it was sent: the lease it would act under is lost or fenced. */
export class LeaseLostError extends TransientError {
  constructor(verb: HostVerb) {
    super(`host ${verb} not sent: this worker no longer holds the tenant's partition lease`, { code: "LeaseLost" });
  }
}

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
    private readonly lease?: LeaseValidity,
    /** Seconds spent waiting for the host budget, and waiting for the host's answer. */
    private readonly time: (stage: WriteStage, seconds: number) => void = () => undefined,
  ) {}

  /**
   * The same writer acting under a partition lease: each request checks the lease right before
   * it is sent, after the host budget's wait (a wait can outlast a lease), and is aborted when
   * the lease would run out, so no write of a fenced owner can land after a successor took over.
   */
  forTenant(lease: LeaseValidity): TenantWriter {
    return new HostWriter(this.client, this.fieldManager, this.budget, this.count, lease, this.time);
  }

  /** Creates `obj`; "exists" when the name is already taken (by anything). */
  async create(obj: HostObject, answer: Answer = "whole"): Promise<RawObject | "exists"> {
    const signal = await this.spend("create");
    try {
      return await this.timed(
        this.client.request<RawObject>("POST", resourcePath("v1", pluralOf(obj.kind), obj.metadata.namespace), {
          query: { fieldManager: this.fieldManager },
          body: obj,
          ...acceptOf(answer),
          ...signal,
        }),
      );
    } catch (err) {
      if (httpStatusOf(err) === 409) return "exists";
      throw err;
    }
  }

  /** Updates the copy read as `current` to `obj`; a 409 means it changed meanwhile. */
  async update(obj: HostObject, current: RawObject, answer: Answer = "whole"): Promise<RawObject> {
    const signal = await this.spend("update");
    const path = resourcePath("v1", pluralOf(obj.kind), obj.metadata.namespace, obj.metadata.name);
    const metadata = { ...obj.metadata, resourceVersion: current.metadata.resourceVersion, uid: current.metadata.uid };
    if (APPLIED_KINDS.has(obj.kind)) {
      return this.timed(
        this.client.request<RawObject>("PATCH", path, {
          query: { fieldManager: this.fieldManager, force: true },
          body: { ...obj, metadata },
          contentType: "application/apply-patch+yaml",
          ...acceptOf(answer),
          ...signal,
        }),
      );
    }
    return this.timed(
      this.client.request<RawObject>("PUT", path, {
        query: { fieldManager: this.fieldManager },
        body: { ...obj, metadata },
        ...acceptOf(answer),
        ...signal,
      }),
    );
  }

  /**
   * Deletes exactly the object read as `current`; false when it is already gone. A grace
   * period (a tenant Pod's own) replaces the host object's default.
   */
  async delete(current: RawObject, gracePeriodSeconds?: number): Promise<boolean> {
    const signal = await this.spend("delete");
    const kind = current.kind ?? "";
    try {
      await this.timed(
        this.client.request(
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
            ...signal,
          },
        ),
      );
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 404) return false;
      throw err;
    }
  }

  /** Reads one host object, or undefined. */
  async get(kind: string, namespace: string, name: string, answer: Answer = "whole"): Promise<RawObject | undefined> {
    const signal = await this.spend("get");
    try {
      const obj = await this.client.request<RawObject>("GET", resourcePath("v1", pluralOf(kind), namespace, name), {
        ...acceptOf(answer),
        ...signal,
      });
      return { ...obj, apiVersion: "v1", kind };
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  private async timed<T>(request: Promise<T>): Promise<T> {
    const sent = performance.now();
    try {
      return await request;
    } finally {
      this.time("request", (performance.now() - sent) / 1000);
    }
  }

  /**
   * Waits for the host budget, then checks the lease: throws {@link LeaseLostError} when it is
   * gone, else gives the request a deadline at the lease's end (or the host timeout, whichever
   * is sooner). Unleased writers (tenantplane's own objects) get no deadline here.
   */
  private async spend(verb: HostVerb): Promise<{ signal?: AbortSignal }> {
    const queued = performance.now();
    await this.budget.wait();
    this.time("host_budget", (performance.now() - queued) / 1000);
    const deadline = this.lease === undefined ? undefined : requestDeadline(this.lease());
    if (deadline === 0) throw new LeaseLostError(verb);
    this.count(verb);
    return deadline === undefined ? {} : { signal: AbortSignal.timeout(deadline) };
  }
}

/** Where a host write's time goes, for the write stage histogram. */
export type WriteStage = "plan" | "tenant_budget" | "host_budget" | "request";

/**
 * The deadline of a request sent now under a lease valid for `validMs` more: the lease's
 * remaining validity, capped at {@link HOST_REQUEST_TIMEOUT_MS}; 0 when the lease is gone
 * (nothing may be sent).
 */
export function requestDeadline(validMs: number): number {
  if (!(validMs > 0)) return 0;
  return Math.max(1, Math.min(HOST_REQUEST_TIMEOUT_MS, Math.floor(validMs)));
}
