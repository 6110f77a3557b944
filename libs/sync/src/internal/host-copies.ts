import { hostName, labelValue, reverseLookup } from "@tenantplane/mapping";
import { isJsonObject, type JsonObject } from "./json.js";

/**
 * This tenant's host copies of `kind` among `hostObjects`, by `<namespace>/<name>` of their
 * source: only a copy at the host name its source maps to counts (a stray copy is on its way
 * out), and never another tenant's copy of a source with the same virtual name.
 */
export function copiesOf(hostObjects: readonly unknown[], tenant: string, kind: string): Map<string, JsonObject> {
  const copies = new Map<string, JsonObject>();
  for (const host of hostObjects) {
    if (!isJsonObject(host) || !isJsonObject(host["metadata"])) continue;
    const metadata = host["metadata"] as {
      name?: unknown;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
    const source = reverseLookup(metadata);
    if (source === undefined || source.kind !== kind || source.tenant !== labelValue(tenant)) continue;
    if (metadata.name !== hostName({ tenant, namespace: source.namespace, name: source.name }).name) continue;
    copies.set(`${source.namespace}/${source.name}`, host);
  }
  return copies;
}

/** `<namespace>/<name>` of a tenant object (namespace default when absent), or undefined when unnamed. */
export function tenantKeyOf(value: JsonObject): string | undefined {
  const metadata = isJsonObject(value["metadata"]) ? value["metadata"] : {};
  const name = metadata["name"];
  const namespace = metadata["namespace"] ?? "default";
  if (typeof name !== "string" || typeof namespace !== "string" || namespace === "") return undefined;
  return `${namespace}/${name}`;
}
