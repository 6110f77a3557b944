import { ApiError, resourcePath, type JsonClient, type ListWatch } from "@tenantplane/kube";
import { hostNamespaceFor, LABEL_MANAGED_BY, LABEL_TENANT, labelValue, MANAGED_BY } from "@tenantplane/mapping";
import type { Logger } from "@tenantplane/runtime";
import type { SharedWatches } from "../shared-watches.js";
import { Pacer } from "./pacer.js";
import {
  QUOTA_VIEW_NAME,
  QUOTA_VIEW_NAMESPACE,
  quotaReaderRbac,
  quotaView,
  viewIsCurrent,
  type QuotaLike,
  type TenantObject,
} from "./quota.js";

/** What the quota mirror of one tenant is given. */
export interface QuotaMirrorDeps {
  tenant: string;
  tenantClient: JsonClient;
  hostClient: JsonClient;
  watches: SharedWatches;
  logger: Logger;
  /** Called when the host quota or the tenant's copy changed: the caller queues {@link QuotaMirror.sync}. */
  onChange(): void;
  /** False once this worker may no longer write for the tenant. */
  mayWrite(): boolean;
  /** Counts a write to the tenant API. */
  count(kind: string, action: string): void;
  /** Shortest time between two rewrites of the view (default {@link QUOTA_VIEW_INTERVAL_MS}). */
  minIntervalMs?: number;
}

/**
 * The view is rewritten at most this often: the host quota's usage moves with every Pod and
 * Service the worker creates, so a tenant starting a hundred Pods would otherwise cost a hundred
 * view writes in its API. Usage is shown at most this late.
 */
export const QUOTA_VIEW_INTERVAL_MS = 2_000;

/** The reader Role and RoleBinding are made again at most this often, besides with a new view. */
const RBAC_RECHECK_MS = 5 * 60_000;

/**
 * Keeps `kube-public/tenantplane-quota` in the tenant API equal to what the host quota of
 * the tenant's namespace says (see quotaView): watches the host ResourceQuotas and the
 * tenant's kube-public ConfigMaps, so a host change or a tenant's edit is followed by one
 * write, and a steady state costs none. Never creates a ResourceQuota in the tenant, whose
 * own quota controller would enforce it a second time.
 */
export class QuotaMirror {
  private readonly hostNs: string;
  private hostQuotas: ListWatch | undefined;
  private tenantViews: ListWatch | undefined;
  private readonly pacer: Pacer;
  private rbacMadeAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: QuotaMirrorDeps) {
    this.hostNs = hostNamespaceFor(deps.tenant);
    this.pacer = new Pacer(() => deps.onChange(), deps.minIntervalMs ?? QUOTA_VIEW_INTERVAL_MS);
  }

  /** Opens the two watches; resolves once both have listed. */
  start(): Promise<void> {
    const { tenant, logger, watches } = this.deps;
    this.hostQuotas = watches.open({
      client: this.deps.hostClient,
      path: resourcePath("v1", "resourcequotas", this.hostNs),
      apiVersion: "v1",
      kind: "ResourceQuota",
      labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${labelValue(tenant)}`,
      logger: logger.child({ side: "host", kind: "ResourceQuota", direction: "back" }),
      onEvent: (e) => {
        if (e.object.metadata.name === QUOTA_VIEW_NAME) this.pacer.changed();
      },
    });
    this.tenantViews = watches.open({
      client: this.deps.tenantClient,
      path: resourcePath("v1", "configmaps", QUOTA_VIEW_NAMESPACE),
      apiVersion: "v1",
      kind: "ConfigMap",
      logger: logger.child({ side: "tenant", kind: "ConfigMap", direction: "back" }),
      onEvent: (e) => {
        if (e.object.metadata.name === QUOTA_VIEW_NAME) this.pacer.changed();
      },
    });
    return Promise.all([this.hostQuotas.synced, this.tenantViews.synced]).then(() => undefined);
  }

  /** Closes the watches. */
  stop(): void {
    this.pacer.stop();
    this.hostQuotas?.stop();
    this.tenantViews?.stop();
  }

  /** Writes the tenant's view when it differs from the host quota; throws what the tenant API answered. */
  async sync(): Promise<void> {
    if (this.hostQuotas === undefined || this.tenantViews === undefined) return;
    const quota = this.hostQuotas.get(this.hostNs, QUOTA_VIEW_NAME) as QuotaLike | undefined;
    const desired = quotaView(this.deps.tenant, this.hostNs, quota);
    const current = this.tenantViews.get(QUOTA_VIEW_NAMESPACE, QUOTA_VIEW_NAME);
    if (viewIsCurrent(current, desired)) return;
    if (current === undefined) await this.create(desired);
    else await this.replace(desired);
    // Readable by every tenant user: made with the view, and again now and then when the view is
    // rewritten (a tenant admin may have deleted them); not on every rewrite, each a refused create.
    if (current !== undefined && Date.now() - this.rbacMadeAt < RBAC_RECHECK_MS) return;
    for (const object of quotaReaderRbac()) await this.create(object, false);
    this.rbacMadeAt = Date.now();
  }

  // A create that finds the object there (a cache behind the tenant API) replaces it instead.
  private async create(object: TenantObject, replaceExisting = true): Promise<void> {
    if (!this.deps.mayWrite()) return;
    try {
      await this.deps.tenantClient.request("POST", this.path(object), { body: object });
      this.deps.count(object.kind, "create");
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
      if (replaceExisting) await this.replace(object);
    }
  }

  // No resourceVersion: the view is tenantplane's alone, whatever a tenant wrote there meanwhile.
  private async replace(object: TenantObject): Promise<void> {
    if (!this.deps.mayWrite()) return;
    await this.deps.tenantClient.request("PUT", this.path(object, object.metadata.name), { body: object });
    this.deps.count(object.kind, "update");
  }

  private path(object: TenantObject, name?: string): string {
    return resourcePath(object.apiVersion, `${object.kind.toLowerCase()}s`, object.metadata.namespace, name);
  }
}
