import { KubeApiError } from "../api-error.js";
import type { JsonClient } from "../json-client.js";

/** How a kind is addressed: its plural resource name and whether it lives in a namespace. */
export interface ResourceInfo {
  resource: string;
  namespaced: boolean;
}

interface ApiResourceList {
  resources?: Array<{ name: string; kind: string; namespaced: boolean }>;
}

/** The discovery path of a group/version: the core group lives under /api. */
export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/** The URL path of a collection (no name) or of one object, with an optional subresource. */
export function resourcePath(
  apiVersion: string,
  info: ResourceInfo,
  namespace: string | undefined,
  name?: string,
  subresource?: string,
): string {
  const base = groupVersionPath(apiVersion);
  const scope = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const object = name === undefined ? "" : `/${encodeURIComponent(name)}`;
  return `${base}${scope}/${info.resource}${object}${subresource && name !== undefined ? `/${subresource}` : ""}`;
}

/**
 * Resolves kinds to resources through API discovery, once per group/version.
 * A failed lookup is not cached, so a CRD installed later is found on the next call.
 */
export class ResourceDirectory {
  private readonly cache = new Map<string, Promise<Map<string, ResourceInfo>>>();

  constructor(private readonly client: JsonClient) {}

  /** The resource of `kind` in `apiVersion`; throws (never with an HTTP status) when the server does not serve it. */
  async lookup(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const cached = this.cache.get(apiVersion);
    // A miss refreshes once: the group/version may have gained the kind (a CRD installed since).
    const info = (cached && (await cached).get(kind)) ?? (await this.load(apiVersion)).get(kind);
    if (!info) throw new Error(`the API server does not serve kind ${kind} in ${apiVersion}`);
    return info;
  }

  private load(apiVersion: string): Promise<Map<string, ResourceInfo>> {
    const kinds = this.discover(apiVersion);
    this.cache.set(apiVersion, kinds);
    kinds.catch(() => this.cache.delete(apiVersion));
    return kinds;
  }

  private async discover(apiVersion: string): Promise<Map<string, ResourceInfo>> {
    let list: ApiResourceList | undefined;
    try {
      list = await this.client.request<ApiResourceList>("GET", groupVersionPath(apiVersion));
    } catch (err) {
      // An unserved group/version is "unknown kind", not "object not found": callers read 404 as absence.
      if (err instanceof KubeApiError && err.code === 404) return new Map();
      throw err;
    }
    const kinds = new Map<string, ResourceInfo>();
    for (const r of list?.resources ?? []) {
      // Subresources (pods/status) share the kind of their parent.
      if (r.name.includes("/")) continue;
      kinds.set(r.kind, { resource: r.name, namespaced: r.namespaced });
    }
    return kinds;
  }
}
