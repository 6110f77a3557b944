import { createHash } from "node:crypto";
import type { KubernetesObject } from "@kubernetes/client-node";
import { canonicalJson, compareQuantities } from "@tenantplane/api";

/**
 * The prefix of the annotation holding a hash of what a field manager last applied to an
 * object (one key per service, like the pending Decision): a pass whose desired object hashes
 * the same, and whose fields all still hold their values, has nothing to write.
 */
export const APPLIED_HASH_ANNOTATION = "tenantplane.io/applied-hash";

/** The annotation `fieldManager` records its applied hash in (`tenantplane.io/applied-hash.isolation`). */
export function appliedHashAnnotation(fieldManager: string): string {
  return `${APPLIED_HASH_ANNOTATION}.${fieldManager.replace(/^tenantplane-/, "")}`;
}

/** `desired` with the hash of its content under appliedHashAnnotation(fieldManager). */
export function withAppliedHash<T extends KubernetesObject>(desired: T, fieldManager: string): T {
  const key = appliedHashAnnotation(fieldManager);
  const annotations = { ...desired.metadata?.annotations };
  delete annotations[key];
  const content = { ...desired, metadata: { ...desired.metadata, annotations } };
  const hash = createHash("sha256").update(canonicalJson(content)).digest("hex").slice(0, 32);
  return { ...desired, metadata: { ...desired.metadata, annotations: { ...annotations, [key]: hash } } };
}

/**
 * Whether applying `desired` (as withAppliedHash made it) to `current` would change nothing:
 * `current` carries the same hash (so no field was dropped from what was applied last) and
 * every field `desired` sets still holds that value (so nobody changed one since). Fields the
 * server or other managers added are not compared.
 */
export function appliedUpToDate(current: KubernetesObject, desired: KubernetesObject, fieldManager: string): boolean {
  const key = appliedHashAnnotation(fieldManager);
  const hash = desired.metadata?.annotations?.[key];
  return hash !== undefined && current.metadata?.annotations?.[key] === hash && contains(current, desired);
}

// Maps whose values are quantities (ResourceQuota hard, LimitRange items, container resources,
// claim requests). The API server stores a quantity in canonical form ("5000" as "5k", "0.5" as
// "500m"), so a desired "5000" never reads back as written although nothing changed.
const QUANTITY_MAPS = new Set([
  "hard",
  "default",
  "defaultRequest",
  "min",
  "max",
  "maxLimitRequestRatio",
  "requests",
  "limits",
  "capacity",
]);

/**
 * Whether every field set in `part` holds the same value in `whole` (lists item by item, same
 * length); a value in a quantity map (see QUANTITY_MAPS) matches any spelling of the same amount.
 */
export function contains(whole: unknown, part: unknown, inQuantityMap = false): boolean {
  if (part === undefined) return true;
  if (part === null || typeof part !== "object") {
    if (typeof whole === "object" && whole !== null) return false;
    if (whole === part) return true;
    if (whole === undefined || whole === null) return false;
    return String(whole) === String(part) || (inQuantityMap && compareQuantities(String(whole), String(part)) === 0);
  }
  // An empty list or map the server did not store changes nothing either.
  if (whole === undefined && Object.keys(part).length === 0) return true;
  if (Array.isArray(part)) {
    return Array.isArray(whole) && whole.length === part.length && part.every((item, i) => contains(whole[i], item));
  }
  if (typeof whole !== "object" || whole === null || Array.isArray(whole)) return false;
  const w = whole as Record<string, unknown>;
  // A quantity map's keys are resource names; the values under them are the quantities.
  return Object.entries(part as Record<string, unknown>).every(([k, v]) =>
    contains(
      w[k],
      v,
      inQuantityMap || (QUANTITY_MAPS.has(k) && v !== null && typeof v === "object" && !Array.isArray(v)),
    ),
  );
}
