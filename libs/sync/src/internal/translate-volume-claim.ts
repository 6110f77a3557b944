import { escapeReserved, stripReserved } from "@tenantplane/mapping";
import { MalformedObjectError } from "../malformed-object-error.js";
import { isJsonObject, type JsonObject, join, objectAt, renameAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";

/** Annotation prefixes the tenant's volume controllers write; on the host they would misdirect binding. */
const VOLUME_ANNOTATION_PREFIXES = ["pv.kubernetes.io/", "volume.kubernetes.io/", "volume.beta.kubernetes.io/"];

/**
 * Lets the host bind a PersistentVolumeClaim itself (drops the tenant's volume binding)
 * and points a clone source at the host copy of the source claim.
 */
export function translateVolumeClaim(claim: JsonObject, ctx: TranslateContext): void {
  const spec = objectAt(claim, "spec", "");
  if (spec === undefined) return;
  delete spec["volumeName"];
  translateClaimSources(spec, "spec", ctx);
}

/**
 * Rewrites the claim template of a generic ephemeral volume: its clone sources point at
 * host copies, and its metadata loses every reserved key (the host's ephemeral-volume
 * controller copies it onto the claim it creates, where tenantplane's keys would make the
 * claim look like a sync copy).
 */
export function translateClaimTemplate(template: JsonObject, path: string, ctx: TranslateContext): void {
  const metadata = objectAt(template, "metadata", path);
  if (metadata !== undefined) {
    const metadataPath = join(path, "metadata");
    if (metadata["labels"] !== undefined)
      metadata["labels"] = escapeReserved(stringMap(metadata, "labels", metadataPath));
    if (metadata["annotations"] !== undefined) {
      metadata["annotations"] = stripReserved(stringMap(metadata, "annotations", metadataPath));
    }
  }
  const spec = objectAt(template, "spec", path);
  if (spec !== undefined) translateClaimSources(spec, join(path, "spec"), ctx);
}

function translateClaimSources(spec: JsonObject, path: string, ctx: TranslateContext): void {
  for (const key of ["dataSource", "dataSourceRef"]) {
    const source = objectAt(spec, key, path);
    if (source !== undefined && source["kind"] === "PersistentVolumeClaim" && !source["apiGroup"]) {
      renameAt(source, "name", join(path, key), (name) => ctx.refer("PersistentVolumeClaim", name));
    }
  }
}

function stringMap(parent: JsonObject, key: string, path: string): Record<string, string> {
  const value = parent[key];
  if (!isJsonObject(value) || !Object.values(value).every((v) => typeof v === "string")) {
    throw new MalformedObjectError(join(path, key), "expected a map of strings");
  }
  return value as Record<string, string>;
}

/** True for annotations a PersistentVolumeClaim's host copy must not inherit. */
export function isVolumeBindingAnnotation(key: string): boolean {
  return VOLUME_ANNOTATION_PREFIXES.some((prefix) => key.startsWith(prefix));
}
