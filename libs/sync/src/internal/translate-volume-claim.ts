import { escapeReserved, stripReserved } from "@tenantplane/mapping";
import { MalformedObjectError } from "../malformed-object-error.js";
import { BETA_STORAGE_CLASS_ANNOTATION, isVolumeBindingAnnotation, settleClaim } from "./claim-rules.js";
import { isJsonObject, type JsonObject, join, objectAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";
import { tenantText } from "./violation.js";

export { BETA_STORAGE_CLASS_ANNOTATION, isVolumeBindingAnnotation };

/**
 * Lets the host bind a PersistentVolumeClaim only to a volume provisioned for it (drops the
 * tenant's volume binding, selector and binding annotations, naming them), carries a class
 * asked through the beta annotation into `spec.storageClassName` (the annotation itself is
 * one the host copy does not inherit), settles the class against the profile, and points a
 * clone source at the host copy of the source claim (see `settleClaim`).
 */
export function translateVolumeClaim(claim: JsonObject, ctx: TranslateContext): void {
  const spec = objectAt(claim, "spec", "");
  if (spec === undefined) return;
  const metadata = objectAt(claim, "metadata", "");
  honourBetaStorageClass(metadata, "metadata", spec, "spec", ctx);
  // The binding annotations are dropped with the rest of the metadata the copy does not inherit.
  settleClaim(spec, "spec", annotationsOf(metadata), "metadata", ctx);
  // An ephemeral template's is refused by the Pod reference table (pod-references.ts).
  const attributes = spec["volumeAttributesClassName"];
  if (attributes !== undefined && attributes !== null && attributes !== "") {
    ctx.refuse(
      "spec.volumeAttributesClassName",
      `names VolumeAttributesClass ${tenantText(attributes)}, a host object: no IsolationProfile rule grants one`,
    );
  }
}

/**
 * Rewrites the claim template of a generic ephemeral volume under the same rules as a
 * PersistentVolumeClaim (`settleClaim`: no volume binding, selector or binding annotations,
 * an allowed class, clone sources mapped or refused), and its metadata loses every reserved key (the host's ephemeral-volume controller copies it
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
  const annotations = annotationsOf(metadata);
  settleClaim(spec, specPath, annotations, metadataPath, ctx);
  // The host's ephemeral-volume controller copies these onto the claim it makes: a binding
  // annotation there would steer the host's volume controllers as on a claim of the tenant's own.
  for (const key of Object.keys(annotations)) if (isVolumeBindingAnnotation(key)) delete annotations[key];
}

function annotationsOf(metadata: JsonObject | undefined): Record<string, unknown> {
  const annotations = metadata?.["annotations"];
  return isJsonObject(annotations) ? annotations : {};
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

function stringMap(parent: JsonObject, key: string, path: string): Record<string, string> {
  const value = parent[key];
  if (!isJsonObject(value) || !Object.values(value).every((v) => typeof v === "string")) {
    throw new MalformedObjectError(join(path, key), "expected a map of strings");
  }
  return value as Record<string, string>;
}
