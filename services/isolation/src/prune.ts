import type { KubernetesObject } from "@kubernetes/client-node";

/** Identifies an isolation object the same way on both sides of a diff. */
export function objectKey(kind: string, name: string): string {
  return `${kind}/${name}`;
}

/**
 * The existing isolation objects of one kind that the compiled profile no
 * longer produces, in name order. Only objects listed by the isolation
 * selector reach this function, so nothing foreign can be pruned.
 */
export function staleObjects(
  kind: string,
  existing: readonly KubernetesObject[],
  wanted: ReadonlySet<string>,
): string[] {
  return existing
    .map((o) => o.metadata?.name)
    .filter((name): name is string => !!name && !wanted.has(objectKey(kind, name)))
    .sort();
}

/** The NetworkPolicy role a name stands for, for Decision reasons. */
export function describeIsolationObject(kind: string, name: string): string {
  if (kind !== "NetworkPolicy") return `${kind} ${name}`;
  return name.endsWith("default-deny") ? "default-deny NetworkPolicy" : `NetworkPolicy allowance ${name}`;
}
