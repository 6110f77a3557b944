import type { RawObject } from "@tenantplane/kube";
import { sameJson } from "./back-sync/same-json.js";

/** Metadata fields that change with every write, whatever was written. */
const VOLATILE_METADATA = new Set(["resourceVersion", "managedFields"]);

/**
 * Whether an update changed the object's status and nothing the forward planner reads: the
 * same spec, data and metadata (but for the resourceVersion and managed fields). Host copies
 * and tenant Pods change status far more often than anything else (a Pod's phase, conditions,
 * addresses), and planning their key again for each would only find it in sync. An update
 * whose status did not change is not one of these (a held-back object's stub has none): it is
 * planned as before. Compared value by value, stopping at the first difference: every Pod
 * status update of either side passes here, and serialising both sides' specs for each showed
 * in the worker's profile.
 */
export function statusOnlyChange(previous: RawObject, object: RawObject): boolean {
  if (sameJson(previous["status"], object["status"])) return false;
  const keys = new Set([...Object.keys(previous), ...Object.keys(object)]);
  for (const key of keys) {
    if (key === "status") continue;
    if (key === "metadata") {
      if (!sameMetadata(previous.metadata, object.metadata)) return false;
    } else if (!sameJson(previous[key], object[key])) return false;
  }
  return true;
}

function sameMetadata(a: RawObject["metadata"], b: RawObject["metadata"]): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    if (!VOLATILE_METADATA.has(key) && !sameJson(a[key], b[key])) return false;
  }
  return true;
}
