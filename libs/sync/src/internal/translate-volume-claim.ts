import { escapeReserved, stripReserved } from "@tenantplane/mapping";
import { MalformedObjectError } from "../malformed-object-error.js";
import { isJsonObject, type JsonObject, join, objectAt, renameAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";
import { hostReference } from "./translate-reference.js";

/** Annotation prefixes the tenant's volume controllers write; on the host they would misdirect binding. */
const VOLUME_ANNOTATION_PREFIXES = ["pv.kubernetes.io/", "volume.kubernetes.io/", "volume.beta.kubernetes.io/"];

/** The storage class annotation that predates `spec.storageClassName`, still honoured by Kubernetes (over the spec). */
export const BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class";

/**
 * Lets the host bind a PersistentVolumeClaim itself (drops the tenant's volume binding),
 * carries a class asked through the beta annotation into `spec.storageClassName` (the
 * annotation itself is one the host copy does not inherit), and points a clone source at
 * the host copy of the source claim.
 */
export function translateVolumeClaim(claim: JsonObject, ctx: TranslateContext): void {
  const spec = objectAt(claim, "spec", "");
  if (spec === undefined) return;
  delete spec["volumeName"];
  honourBetaStorageClass(objectAt(claim, "metadata", ""), "metadata", spec, "spec", ctx);
  translateClaimSources(spec, "spec", ctx);
}

/**
 * Rewrites the claim template of a generic ephemeral volume: its clone sources point at
 * host copies, a class asked through the beta annotation moves into the spec, and its
 * metadata loses every reserved key (the host's ephemeral-volume controller copies it
 * onto the claim it creates, where tenantplane's keys would make the claim look like a
 * sync copy).
 */
export function translateClaimTemplate(template: JsonObject, path: string, ctx: TranslateContext): void {
  const metadata = objectAt(template, "metadata", path);
  const metadataPath = join(path, "metadata");
  if (metadata !== undefined) {
    if (metadata["labels"] !== undefined)
      metadata["labels"] = escapeReserved(stringMap(metadata, "labels", metadataPath));
    if (metadata["annotations"] !== undefined) {
      metadata["annotations"] = stripReserved(stringMap(metadata, "annotations", metadataPath));
    }
  }
  const spec = objectAt(template, "spec", path);
  if (spec === undefined) return;
  const specPath = join(path, "spec");
  honourBetaStorageClass(metadata, metadataPath, spec, specPath, ctx);
  const annotations = metadata?.["annotations"];
  if (isJsonObject(annotations)) delete annotations[BETA_STORAGE_CLASS_ANNOTATION];
  translateClaimSources(spec, specPath, ctx);
}

/**
 * A claim's class may be asked through the beta annotation, which Kubernetes reads before
 * `spec.storageClassName` (and which makes its DefaultStorageClass admission leave the
 * claim alone). The host copy asks for the same class in the spec; a spec that asks for a
 * different one is refused, naming both fields, since either reading would be a guess.
 */
function honourBetaStorageClass(
  metadata: JsonObject | undefined,
  metadataPath: string,
  spec: JsonObject,
  specPath: string,
  ctx: TranslateContext,
): void {
  const annotations = metadata?.["annotations"];
  const asked = isJsonObject(annotations) ? annotations[BETA_STORAGE_CLASS_ANNOTATION] : undefined;
  if (typeof asked !== "string") return;
  const own = spec["storageClassName"];
  const field = `${metadataPath}.annotations[${BETA_STORAGE_CLASS_ANNOTATION}]`;
  if (own === undefined || own === null) {
    spec["storageClassName"] = asked;
    ctx.explain(`storage class ${describeClass(asked)} from ${field}, as ${specPath}.storageClassName`);
  } else if (own !== asked) {
    ctx.refuse(
      field,
      `asks for storage class ${describeClass(asked)} but ${specPath}.storageClassName asks for ${describeClass(String(own))}: keep only one`,
    );
  }
}

function describeClass(name: string): string {
  return name === "" ? '"" (no class)' : name;
}

function translateClaimSources(spec: JsonObject, path: string, ctx: TranslateContext): void {
  for (const key of ["dataSource", "dataSourceRef"]) {
    const source = objectAt(spec, key, path);
    if (source !== undefined && source["kind"] === "PersistentVolumeClaim" && !source["apiGroup"]) {
      const sourcePath = join(path, key);
      renameAt(
        source,
        "name",
        sourcePath,
        (name) => hostReference(ctx, "PersistentVolumeClaim", name, sourcePath, false) ?? name,
      );
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
