import {
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { httpStatusOf } from "@tenantplane/runtime";

const SSA = setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply);

/** A typed handle on a cluster's objects for one field manager. */
export class Objects {
  readonly api: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    readonly fieldManager: string,
  ) {
    this.api = KubernetesObjectApi.makeApiClient(kc);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  /**
   * Server-side apply with force: this manager owns the fields it sends and
   * nothing else, so services sharing an object never overwrite each other.
   * With `ifResourceVersion` it only updates the version that was read.
   */
  async apply<T extends KubernetesObject>(obj: T, opts: { ifResourceVersion?: string | undefined } = {}): Promise<T> {
    const body = { ...obj, metadata: { ...obj.metadata } } as T;
    delete body.metadata?.resourceVersion;
    delete body.metadata?.managedFields;
    // A resourceVersion turns the apply into "update exactly what I read": it fails
    // with a conflict if the object changed and can never create one that is gone.
    if (opts.ifResourceVersion) body.metadata!.resourceVersion = opts.ifResourceVersion;
    return this.api.patch(body, undefined, undefined, this.fieldManager, true, PatchStrategy.ServerSideApply);
  }

  /** Reads an object, or undefined when it does not exist. */
  async get<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    try {
      return (await this.api.read({ apiVersion, kind, metadata: { name, namespace } })) as T;
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** Lists objects of a kind, optionally namespaced and label-selected. */
  async list<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string } = {},
  ): Promise<T[]> {
    const out: T[] = [];
    let continueToken: string | undefined;
    do {
      const page = await this.api.list<T>(
        apiVersion,
        kind,
        opts.namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        opts.labelSelector,
        500,
        continueToken,
      );
      out.push(...page.items.map((item) => ({ apiVersion, kind, ...item })));
      continueToken = page.metadata?._continue || undefined;
    } while (continueToken);
    return out;
  }

  /** Deletes an object; absent is success. Background propagation lets the GC remove dependents. */
  async delete(obj: KubernetesObject): Promise<boolean> {
    try {
      await this.api.delete(obj, undefined, undefined, undefined, undefined, "Background");
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 404) return false;
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
    await this.custom.patchClusterCustomObjectStatus(
      {
        group: ref.group,
        version: ref.version,
        plural: ref.plural,
        name: ref.name,
        body: { apiVersion: `${ref.group}/${ref.version}`, kind: ref.kind, metadata: { name: ref.name }, status },
        fieldManager: this.fieldManager,
        force: true,
      },
      SSA,
    );
  }
}
