import type { V1ManagedFieldsEntry } from "@kubernetes/client-node";

/**
 * The managed-fields list with the entry a create by `manager` left behind removed, or undefined
 * when there is no such entry, no `Apply` entry of `manager` beside it (the create entry is then
 * the manager's only claim on the object, handed over by the next apply that changes it), or
 * nothing else would remain. A create (POST) records its fields
 * under operation `Update`; later server-side applies by the same manager are a separate `Apply`
 * entry, and a field still owned by the `Update` entry is never removed when the apply stops
 * sending it. Dropping that entry once the apply owns everything hands the fields over, so
 * removing an annotation or a limit from the desired object removes it from the cluster.
 */
export function withoutCreateEntry(
  entries: readonly V1ManagedFieldsEntry[] | undefined,
  manager: string,
): V1ManagedFieldsEntry[] | undefined {
  const isCreateEntry = (e: V1ManagedFieldsEntry) =>
    e.manager === manager && e.operation === "Update" && (e.subresource ?? "") === "";
  const isApplyEntry = (e: V1ManagedFieldsEntry) =>
    e.manager === manager && e.operation === "Apply" && (e.subresource ?? "") === "";
  const list = entries ?? [];
  if (!list.some(isCreateEntry) || !list.some(isApplyEntry)) return undefined;
  const kept = list.filter((e) => !isCreateEntry(e));
  // An empty list would be read as "leave managedFields alone".
  return kept.length > 0 ? kept : undefined;
}
