import type { JsonClient, RawObject } from "@tenantplane/kube";
import type { PlannedDecision } from "@tenantplane/messaging";
import { backoffDelay, describe, httpStatusOf, type Logger } from "@tenantplane/runtime";
import {
  planStorageClassCopies,
  type StorageClassCopyDecision,
  type StorageClassObject,
  type StorageRules,
} from "@tenantplane/sync";
import { LeaseLostError, requestDeadline, type HostVerb } from "./host-writer.js";
import { hostAnswerOf, type AttemptedWrite } from "./write-failure.js";

const PATH = "/apis/storage.k8s.io/v1/storageclasses";
/** The Decision kind of a class copy's writes. */
const KIND = "StorageClass";

/** What the class-copy writer is given by the supervisor. */
export interface StorageClassCopiesDeps {
  hostClient: JsonClient;
  fieldManager: string;
  logger: Logger;
  /** Every StorageClass on the host, from the supervisor's informer. */
  hostClasses(): readonly RawObject[];
  publish(decision: PlannedDecision): Promise<void>;
  /** Milliseconds this worker may still act for `tenant` (0 or less: no write may be sent). */
  validForMs(tenant: string): number;
  /** The tenant's write budget: resolves when it may write again. */
  writeToken(tenant: string): Promise<void>;
}

interface Wanted {
  uid: string;
  storage: StorageRules;
}

/**
 * Keeps each synced tenant's StorageClass copies (see `planStorageClassCopies`) in step with
 * the host classes its claims may use: one pass per tenant at a time, level-triggered from the
 * informer's cache (a change while a pass runs runs another after it), every write checked
 * against the tenant's partition lease right before it is sent and announced as a Decision of
 * kind StorageClass, a refused write as a Fail and retried with backoff. It never deletes a
 * copy of a tenant it stopped syncing: the TenantCluster owns them, and the host's garbage
 * collector deletes them with it.
 */
export class StorageClassCopies {
  private readonly wanted = new Map<string, Wanted>();
  private readonly passes = new Map<string, { again: boolean }>();
  /** Skip and Fail reasons already published, per tenant and copy: the same one is not repeated. */
  private readonly told = new Map<string, string>();
  private readonly attempts = new Map<string, number>();
  private readonly retries = new Map<string, NodeJS.Timeout>();

  constructor(private readonly deps: StorageClassCopiesDeps) {}

  /** Keeps `tenant`'s copies in step under `storage` (its profile's rules), owned by the TenantCluster `uid`. */
  ensure(tenant: string, uid: string | undefined, storage: StorageRules): void {
    if (uid === undefined) return;
    this.wanted.set(tenant, { uid, storage });
    this.run(tenant);
  }

  /** Stops looking after `tenant` (no longer synced here); its copies stay with their owner. */
  forget(tenant: string): void {
    this.wanted.delete(tenant);
    clearTimeout(this.retries.get(tenant));
    this.retries.delete(tenant);
    this.attempts.delete(tenant);
    for (const key of [...this.told.keys()]) if (key.startsWith(`${tenant}/`)) this.told.delete(key);
  }

  /** A host StorageClass changed: every tenant looked after here is planned again. */
  hostClassesChanged(): void {
    for (const tenant of this.wanted.keys()) this.run(tenant);
  }

  /** Stops retries (shutdown). */
  stop(): void {
    for (const tenant of [...this.wanted.keys()]) this.forget(tenant);
  }

  private run(tenant: string): void {
    const running = this.passes.get(tenant);
    if (running !== undefined) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.passes.set(tenant, state);
    void (async () => {
      try {
        do {
          state.again = false;
          const ok = await this.pass(tenant).catch((err: unknown) => {
            this.deps.logger.warn({ tenant, err: describe(err) }, "StorageClass copies not planned");
            return false;
          });
          if (ok) this.attempts.delete(tenant);
          else this.retryLater(tenant);
        } while (state.again && this.wanted.has(tenant));
      } finally {
        this.passes.delete(tenant);
      }
    })();
  }

  private retryLater(tenant: string): void {
    const attempt = this.attempts.get(tenant) ?? 0;
    this.attempts.set(tenant, attempt + 1);
    clearTimeout(this.retries.get(tenant));
    const timer = setTimeout(
      () => {
        this.retries.delete(tenant);
        if (this.wanted.has(tenant)) this.run(tenant);
      },
      backoffDelay(attempt, 1_000, 60_000),
    );
    timer.unref();
    this.retries.set(tenant, timer);
  }

  /** One pass for `tenant`; false when a write failed and the pass should run again later. */
  private async pass(tenant: string): Promise<boolean> {
    const wanted = this.wanted.get(tenant);
    if (wanted === undefined || this.deps.validForMs(tenant) <= 0) return true;
    const decisions = planStorageClassCopies({
      tenant,
      tenantUid: wanted.uid,
      storage: wanted.storage,
      hostClasses: this.deps.hostClasses() as unknown as StorageClassObject[],
    });
    let ok = true;
    for (const d of decisions) {
      if (!this.wanted.has(tenant)) break;
      try {
        await this.apply(tenant, d);
      } catch (err) {
        if (err instanceof LeaseLostError) return true;
        ok = false;
        this.deps.logger.warn({ tenant, storageClass: d.name, err: describe(err) }, "StorageClass copy not written");
        await this.tell(tenant, d, "Fail", err);
      }
    }
    return ok;
  }

  private async apply(tenant: string, d: StorageClassCopyDecision): Promise<void> {
    if (d.action === "Skip") {
      await this.tell(tenant, d, "Skip");
      return;
    }
    this.told.delete(`${tenant}/${d.name}`);
    let uid: string | undefined;
    if (d.action === "Create") {
      const created = await this.request<RawObject>(tenant, "create", "POST", PATH, d.object).catch((err: unknown) => {
        // The informer has not shown it yet (this worker's own earlier create, or a successor's).
        if (httpStatusOf(err) === 409) return undefined;
        throw err;
      });
      if (created === undefined) return;
      uid = created.metadata.uid;
    } else if (d.action === "Update") {
      const body = {
        ...d.object,
        metadata: { ...d.object!.metadata, resourceVersion: d.current!.metadata.resourceVersion },
      };
      const updated = await this.request<RawObject>(tenant, "update", "PUT", `${PATH}/${d.name}`, body).catch(
        (err: unknown) => {
          // Changed meanwhile: its watch event plans it again.
          if (httpStatusOf(err) === 409) return undefined;
          throw err;
        },
      );
      if (updated === undefined) return;
      uid = updated.metadata.uid;
    } else {
      uid = d.current!.metadata.uid;
      // Announced first, like a sync copy's Delete: no delete without its Decision stored.
      await this.publish(tenant, d, d.action, uid);
      const deleted = await this.request(tenant, "delete", "DELETE", `${PATH}/${d.name}`, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid, resourceVersion: d.current!.metadata.resourceVersion },
      }).catch((err: unknown) => {
        if (httpStatusOf(err) === 404 || httpStatusOf(err) === 409) return undefined;
        throw err;
      });
      void deleted;
      return;
    }
    await this.publish(tenant, d, d.action, uid);
  }

  private async request<T>(tenant: string, verb: HostVerb, method: string, path: string, body: unknown): Promise<T> {
    await this.deps.writeToken(tenant);
    const deadline = requestDeadline(this.deps.validForMs(tenant));
    if (deadline === 0) throw new LeaseLostError(verb);
    return this.deps.hostClient.request<T>(method, path, {
      query: method === "DELETE" ? {} : { fieldManager: this.deps.fieldManager },
      body,
      signal: AbortSignal.timeout(deadline),
    });
  }

  /** Publishes a Skip or a Fail once per reason (the same answer on every pass is not news). */
  private async tell(tenant: string, d: StorageClassCopyDecision, action: "Skip" | "Fail", err?: unknown) {
    const key = `${tenant}/${d.name}`;
    const error = err === undefined ? undefined : hostAnswerOf(err, attemptOf(d));
    const reason = error === undefined ? d.reason : `${error.reason}: ${error.message}`;
    if (this.told.get(key) === reason) return;
    this.told.set(key, reason);
    await this.publish(tenant, { ...d, reason }, action, undefined, error);
  }

  private async publish(
    tenant: string,
    d: StorageClassCopyDecision,
    action: PlannedDecision["action"],
    uid: string | undefined,
    error?: PlannedDecision["error"],
  ): Promise<void> {
    await this.deps
      .publish({
        tenant,
        action,
        kind: KIND,
        tenantRef: { namespace: "", name: d.hostClass },
        hostRef: { namespace: "", name: d.name, ...(uid === undefined ? {} : { uid }) },
        reason: d.reason,
        ...(error === undefined ? {} : { error }),
      })
      .catch((err: unknown) =>
        this.deps.logger.error({ tenant, storageClass: d.name, err: describe(err) }, "decision not published"),
      );
  }
}

function attemptOf(d: StorageClassCopyDecision): AttemptedWrite | undefined {
  return d.action === "Skip" ? undefined : d.action;
}
