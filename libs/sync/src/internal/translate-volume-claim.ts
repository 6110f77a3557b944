import { type JsonObject, join, objectAt, renameAt } from "./json.js";
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
  for (const key of ["dataSource", "dataSourceRef"]) {
    const source = objectAt(spec, key, "spec");
    if (source !== undefined && source["kind"] === "PersistentVolumeClaim" && !source["apiGroup"]) {
      renameAt(source, "name", join("spec", key), ctx.hostNameOf);
    }
  }
}

/** True for annotations a PersistentVolumeClaim's host copy must not inherit. */
export function isVolumeBindingAnnotation(key: string): boolean {
  return VOLUME_ANNOTATION_PREFIXES.some((prefix) => key.startsWith(prefix));
}
