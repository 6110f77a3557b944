/** The annotation that marks a StorageClass as the cluster's default. */
export const DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";
/** Its beta spelling, which Kubernetes still honours. */
export const BETA_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class";

interface StorageClassLike {
  metadata?: { name?: unknown; annotations?: unknown; creationTimestamp?: unknown } | undefined;
}

/**
 * The host's default StorageClass among `classes` (a list of StorageClass objects), chosen as
 * the API server's DefaultStorageClass admission chooses it: the classes annotated
 * `storageclass.kubernetes.io/is-default-class: "true"` (or the beta key), the newest by
 * creationTimestamp when several are, ties broken by name. Null when none is marked.
 */
export function defaultStorageClass(classes: readonly unknown[]): string | null {
  let best: { name: string; created: string } | undefined;
  for (const value of classes) {
    const metadata = (value as StorageClassLike | null)?.metadata;
    const name = metadata?.name;
    const annotations = metadata?.annotations;
    if (typeof name !== "string" || typeof annotations !== "object" || annotations === null) continue;
    const marks = annotations as Record<string, unknown>;
    if (marks[DEFAULT_CLASS_ANNOTATION] !== "true" && marks[BETA_DEFAULT_CLASS_ANNOTATION] !== "true") continue;
    const created = typeof metadata?.creationTimestamp === "string" ? metadata.creationTimestamp : "";
    // RFC 3339 timestamps in UTC, as the API server writes them, compare as text.
    if (best === undefined || created > best.created || (created === best.created && name < best.name)) {
      best = { name, created };
    }
  }
  return best?.name ?? null;
}
