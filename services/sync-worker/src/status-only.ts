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
  return !sameJson(previous["status"], object["status"]) && sameBesideStatus(previous, object, object["spec"]);
}

/**
 * The node a Pod was bound to by this update, when binding is all that changed: `spec.nodeName`
 * set where it was unset, the status (the binding's PodScheduled condition, or nothing yet), and
 * nothing else the planner reads. Back-sync binds each tenant Pod to the virtual node of its
 * host copy's node once the copy is scheduled; the copy does not carry the tenant's node name,
 * so planning the Pod again for its own binding would find it in sync. The caller still plans
 * a Pod bound to one of the tenant's own nodes (Private mode), which is not copied.
 */
export function boundNodeOnlyChange(previous: RawObject, object: RawObject): string | undefined {
  const before = previous["spec"] as Record<string, unknown> | undefined;
  const after = object["spec"] as Record<string, unknown> | undefined;
  if (object.kind !== "Pod" || before === undefined || after === undefined) return undefined;
  const node = after["nodeName"];
  if (before["nodeName"] !== undefined || typeof node !== "string" || node === "") return undefined;
  const { nodeName: _node, ...rest } = after;
  return sameBesideStatus(previous, object, rest) ? node : undefined;
}

/**
 * Whether `object` is `previous` but for its status, with `spec` in place of its own spec (the
 * write's version and managed fields aside), compared value by value to the first difference.
 */
function sameBesideStatus(previous: RawObject, object: RawObject, spec: unknown): boolean {
  const keys = new Set([...Object.keys(previous), ...Object.keys(object)]);
  for (const key of keys) {
    if (key === "status") continue;
    if (key === "metadata") {
      if (!sameMetadata(previous.metadata, object.metadata)) return false;
    } else if (!sameJson(previous[key], key === "spec" ? spec : object[key])) return false;
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
