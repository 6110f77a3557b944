/** Built-in kinds that live outside namespaces (kubectl api-resources --namespaced=false), by Kind. */
const BUILT_IN: readonly string[] = [
  "APIService",
  "CertificateSigningRequest",
  "ClusterRole",
  "ClusterRoleBinding",
  "ComponentStatus",
  "CSIDriver",
  "CSINode",
  "CustomResourceDefinition",
  "DeviceClass",
  "FlowSchema",
  "IngressClass",
  "IPAddress",
  "MutatingAdmissionPolicy",
  "MutatingAdmissionPolicyBinding",
  "MutatingWebhookConfiguration",
  "Namespace",
  "Node",
  "PersistentVolume",
  "PriorityClass",
  "PriorityLevelConfiguration",
  "RuntimeClass",
  "SelfSubjectAccessReview",
  "SelfSubjectReview",
  "SelfSubjectRulesReview",
  "ServiceCIDR",
  "StorageClass",
  "StorageVersionMigration",
  "SubjectAccessReview",
  "TokenReview",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "ValidatingWebhookConfiguration",
  "VolumeAttachment",
  "VolumeAttributesClass",
  "VolumeSnapshotClass",
  "VolumeSnapshotContent",
];

/** The reason explain-sync gives for a cluster-scoped object. */
export const CLUSTER_SCOPED_REASON = "cluster-scoped: stays in the tenant API, never synced";

/**
 * The cluster-scoped kinds explain-sync knows of for `manifest`: the built-in ones, and the
 * kinds of every CustomResourceDefinition in the manifest with `spec.scope: Cluster`.
 */
export function clusterScopedKinds(manifest: readonly unknown[]): Set<string> {
  const kinds = new Set(BUILT_IN);
  for (const value of manifest) {
    const crd = value as { kind?: unknown; spec?: { scope?: unknown; names?: { kind?: unknown } } } | null;
    if (crd?.kind === "CustomResourceDefinition" && crd.spec?.scope === "Cluster") {
      const kind = crd.spec.names?.kind;
      if (typeof kind === "string" && kind !== "") kinds.add(kind);
    }
  }
  return kinds;
}
