import { PROFILE_VOLUME_TYPES } from "@tenantplane/api";
import { isJsonObject } from "./json.js";
import { tenantText } from "./violation.js";

/**
 * Every field of the Pod API (core/v1 PodSpec, Kubernetes 1.34) that can name another
 * object, and what the planner does with it. This table is the one place: the translator
 * applies its `map`, `refuse` and `drop` rules ({@link applyPodReferences}), and a unit test
 * walks the API's own schema and fails when a field able to name an object is missing here.
 *
 * Paths are relative to the Pod's `spec`; `[]` stands for every item of a list.
 */
export type PodReferenceRule =
  /** Renamed to the tenant's host copy of `kind`; when none will exist, an optional reference is left out and a required one refused. */
  | ({
      action: "map";
      kind: MappedKind;
    } & (
      | /** Never optional: the Pod cannot start without it. */ { optional: "never" }
      | {
          /** Where `optional: true` comes from: the reference's own `optional` field, or always. */
          optional: "field" | "always";
          /** How a left-out reference leaves the Pod: its volume becomes an empty directory, or the innermost list item goes. */
          missing: "emptyDir" | "dropItem";
        }
    ))
  /** Any value is a Skip naming the field and `problem`. */
  | { action: "refuse"; problem: (value: unknown) => string }
  /** Removed from the host copy (the host decides, or the API refuses it on create). */
  | { action: "drop"; why: string }
  /** A host-level name the host copy keeps only when the profile rule `rule` allows it (checked before translation). */
  | { action: "host"; rule: string }
  /** Settled by a dedicated translator, named in `by`. */
  | { action: "translate"; by: string }
  /** Names no Kubernetes object: a part of the Pod itself, or something the API never lets a template set. */
  | { action: "none"; why: string };

/** The kinds a Pod reference is mapped to by the table itself. */
export type MappedKind = "ConfigMap" | "Secret" | "PersistentVolumeClaim";

export interface PodReference {
  path: string;
  rule: PodReferenceRule;
}

const VOLUME_RULES = "IsolationProfile spec.workloads.volumes.allowedTypes";
const CSI_RULES = "IsolationProfile spec.workloads.volumes.allowedCSIDrivers";
const CLAIM_TEMPLATE = "translateClaimTemplate (translate-volume-claim.ts)";

/** A volume plugin's credentials: never optional, the plugin cannot mount without them. */
const credentials = (path: string): PodReference => ({
  path: `volumes[].${path}`,
  rule: { action: "map", kind: "Secret", optional: "never" },
});
/** A storage identifier outside Kubernetes that only a profile allowing the volume type lets through. */
const storage = (path: string): PodReference => ({
  path: path.startsWith("volumes[].") ? path : `volumes[].${path}`,
  rule: { action: "host", rule: VOLUME_RULES },
});

/** References of a container; each applies to `containers[]` and `initContainers[]` alike. */
const CONTAINER_REFERENCES: PodReference[] = [
  {
    // The kubelet skips an optional variable or envFrom source it cannot find.
    path: "env[].valueFrom.configMapKeyRef.name",
    rule: { action: "map", kind: "ConfigMap", optional: "field", missing: "dropItem" },
  },
  {
    path: "env[].valueFrom.secretKeyRef.name",
    rule: { action: "map", kind: "Secret", optional: "field", missing: "dropItem" },
  },
  {
    path: "envFrom[].configMapRef.name",
    rule: { action: "map", kind: "ConfigMap", optional: "field", missing: "dropItem" },
  },
  {
    path: "envFrom[].secretRef.name",
    rule: { action: "map", kind: "Secret", optional: "field", missing: "dropItem" },
  },
  { path: "env[].valueFrom.resourceFieldRef.containerName", rule: { action: "none", why: "a container of this Pod" } },
  { path: "env[].valueFrom.fileKeyRef.volumeName", rule: { action: "none", why: "a volume of this Pod" } },
  { path: "resizePolicy[].resourceName", rule: { action: "none", why: "a resource (cpu, memory), not an object" } },
  {
    path: "securityContext.windowsOptions.runAsUserName",
    rule: { action: "none", why: "a Windows user inside the container image" },
  },
  { path: "securityContext.windowsOptions.gmsaCredentialSpecName", rule: { action: "refuse", problem: gmsa } },
];

function gmsa(value: unknown): string {
  return `names GMSACredentialSpec ${tenantText(value)}, a host object holding Active Directory credentials: no IsolationProfile rule grants one`;
}

function podCertificate(value: unknown): string {
  const signer = isJsonObject(value) ? value["signerName"] : undefined;
  return `the kubelet would have host signer ${tenantText(signer)} issue the host Pod a certificate: no IsolationProfile rule grants a host signer`;
}

function clusterTrustBundle(value: unknown): string {
  const named = isJsonObject(value) ? (value["name"] ?? value["signerName"]) : undefined;
  return `ClusterTrustBundle ${tenantText(named)} is cluster-scoped in the tenant and never synced: the host's bundles are not the tenant's`;
}

function neverSynced(kind: string): (value: unknown) => string {
  return (value) => `${kind} ${tenantText(value)} will never have a host copy: tenantplane does not sync ${kind}`;
}

export const POD_REFERENCES: readonly PodReference[] = [
  // Volumes the kubelet mounts from the Pod's own namespace.
  {
    // The kubelet mounts a missing optional ConfigMap or Secret as an empty directory.
    path: "volumes[].configMap.name",
    rule: { action: "map", kind: "ConfigMap", optional: "field", missing: "emptyDir" },
  },
  {
    path: "volumes[].secret.secretName",
    rule: { action: "map", kind: "Secret", optional: "field", missing: "emptyDir" },
  },
  // A claim has no optional form: the Pod cannot start without it.
  {
    path: "volumes[].persistentVolumeClaim.claimName",
    rule: { action: "map", kind: "PersistentVolumeClaim", optional: "never" },
  },
  {
    // A missing optional source adds nothing to the projection, so it is left out.
    path: "volumes[].projected.sources[].configMap.name",
    rule: { action: "map", kind: "ConfigMap", optional: "field", missing: "dropItem" },
  },
  {
    path: "volumes[].projected.sources[].secret.name",
    rule: { action: "map", kind: "Secret", optional: "field", missing: "dropItem" },
  },
  {
    path: "volumes[].projected.sources[].downwardAPI.items[].resourceFieldRef.containerName",
    rule: { action: "none", why: "a container of this Pod" },
  },
  {
    path: "volumes[].projected.sources[].clusterTrustBundle",
    rule: { action: "refuse", problem: clusterTrustBundle },
  },
  { path: "volumes[].projected.sources[].podCertificate", rule: { action: "refuse", problem: podCertificate } },
  {
    path: "volumes[].downwardAPI.items[].resourceFieldRef.containerName",
    rule: { action: "none", why: "a container of this Pod" },
  },

  // Credentials of volume plugins a profile may allow (check-volumes refuses the type otherwise).
  credentials("cephfs.secretRef.name"),
  credentials("cinder.secretRef.name"),
  credentials("flexVolume.secretRef.name"),
  credentials("iscsi.secretRef.name"),
  credentials("rbd.secretRef.name"),
  credentials("scaleIO.secretRef.name"),
  credentials("storageos.secretRef.name"),
  credentials("csi.nodePublishSecretRef.name"),
  credentials("azureFile.secretName"),
  // Volume types the node mounts or runs from what the tenant names (servers, disk ids,
  // repositories, images): each only when the profile names the type.
  ...PROFILE_VOLUME_TYPES.map(storage),
  {
    path: "volumes[].hostPath",
    rule: { action: "host", rule: "none: tenant Pods never get host access (check-pod.ts)" },
  },
  { path: "volumes[].csi", rule: { action: "host", rule: CSI_RULES } },
  { path: "volumes[].csi.driver", rule: { action: "host", rule: CSI_RULES } },
  storage("volumes[].flexVolume.driver"),
  storage("volumes[].azureDisk.diskName"),
  storage("volumes[].azureFile.shareName"),
  storage("volumes[].flocker.datasetName"),
  storage("volumes[].gcePersistentDisk.pdName"),
  storage("volumes[].iscsi.initiatorName"),
  storage("volumes[].scaleIO.volumeName"),
  storage("volumes[].storageos.volumeName"),
  storage("volumes[].storageos.volumeNamespace"),
  storage("volumes[].vsphereVolume.storagePolicyName"),
  { path: "volumes[].glusterfs.endpoints", rule: { action: "refuse", problem: neverSynced("Endpoints") } },

  // Generic ephemeral volumes: the host's ephemeral-volume controller creates the claim.
  {
    path: "volumes[].ephemeral.volumeClaimTemplate.spec.storageClassName",
    rule: { action: "host", rule: "IsolationProfile spec.workloads.storage.allowedClasses" },
  },
  {
    path: "volumes[].ephemeral.volumeClaimTemplate.spec.volumeName",
    rule: { action: "translate", by: CLAIM_TEMPLATE },
  },
  {
    path: "volumes[].ephemeral.volumeClaimTemplate.spec.dataSource.name",
    rule: { action: "translate", by: CLAIM_TEMPLATE },
  },
  {
    path: "volumes[].ephemeral.volumeClaimTemplate.spec.dataSourceRef.name",
    rule: { action: "translate", by: CLAIM_TEMPLATE },
  },
  {
    path: "volumes[].ephemeral.volumeClaimTemplate.spec.dataSourceRef.namespace",
    rule: { action: "translate", by: CLAIM_TEMPLATE },
  },
  {
    path: "volumes[].ephemeral.volumeClaimTemplate.spec.volumeAttributesClassName",
    rule: {
      action: "refuse",
      problem: (value) =>
        `names VolumeAttributesClass ${tenantText(value)}, a host object: no IsolationProfile rule grants one`,
    },
  },
  ...["generateName", "namespace", "ownerReferences[].name"].map(
    (field): PodReference => ({
      path: `volumes[].ephemeral.volumeClaimTemplate.metadata.${field}`,
      rule: {
        action: "none",
        why: "the API server accepts only labels and annotations in a claim template's metadata",
      },
    }),
  ),

  ...["containers[]", "initContainers[]"].flatMap((list) =>
    CONTAINER_REFERENCES.map(({ path, rule }) => ({ path: `${list}.${path}`, rule })),
  ),
  {
    path: "ephemeralContainers[]",
    rule: { action: "drop", why: "the API accepts ephemeral containers only through a subresource, never on create" },
  },
  {
    // The kubelet pulls without a pull secret it cannot find.
    path: "imagePullSecrets[].name",
    rule: { action: "map", kind: "Secret", optional: "always", missing: "dropItem" },
  },

  // The Pod's own fields.
  { path: "serviceAccountName", rule: { action: "translate", by: "hostServiceAccount (translate-pod.ts)" } },
  {
    path: "serviceAccount",
    rule: { action: "translate", by: "translatePod: the deprecated alias moves into serviceAccountName" },
  },
  {
    path: "subdomain",
    rule: { action: "translate", by: "translateSubdomain (translate-pod.ts): the Service's host copy" },
  },
  { path: "nodeName", rule: { action: "drop", why: "the host's scheduler places the host copy" } },
  {
    path: "priorityClassName",
    rule: { action: "host", rule: "IsolationProfile spec.workloads.allowedPriorityClasses" },
  },
  { path: "runtimeClassName", rule: { action: "host", rule: "IsolationProfile spec.workloads.allowedRuntimeClasses" } },
  { path: "schedulerName", rule: { action: "host", rule: "IsolationProfile spec.workloads.schedulers" } },
  { path: "securityContext.windowsOptions.gmsaCredentialSpecName", rule: { action: "refuse", problem: gmsa } },
  {
    path: "securityContext.windowsOptions.runAsUserName",
    rule: { action: "none", why: "a Windows user inside the container image" },
  },
  // The floor (check-floor.ts) refuses resourceClaims unless workloads.allowResourceClaims; a
  // claim that passes it still names an object that never reaches the host.
  { path: "resourceClaims[].resourceClaimName", rule: { action: "refuse", problem: neverSynced("ResourceClaim") } },
  {
    path: "resourceClaims[].resourceClaimTemplateName",
    rule: { action: "refuse", problem: neverSynced("ResourceClaimTemplate") },
  },
  ...[
    "podAffinity.requiredDuringSchedulingIgnoredDuringExecution[]",
    "podAffinity.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm",
    "podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[]",
    "podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm",
  ].map(
    (term): PodReference => ({
      path: `affinity.${term}.namespaces[]`,
      rule: {
        action: "translate",
        by: "translatePodSelectors (translate-selector.ts): the tenant's virtual namespaces",
      },
    }),
  ),
  ...["required", "preferred"].map(
    (when): PodReference => ({
      // matchFields can only select nodes by metadata.name: host nodes, among those the profile's selector admits.
      path:
        when === "required"
          ? "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchFields[].values[]"
          : "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference.matchFields[].values[]",
      rule: { action: "host", rule: "IsolationProfile spec.workloads.nodeSelector, merged into every Pod" },
    }),
  ),
];

/** The table's rule for `path` (as the schema walk spells it): its own entry, or a `drop`/`refuse` entry of an enclosing field. */
export function podReferenceRule(path: string): PodReferenceRule | undefined {
  for (const entry of POD_REFERENCES) {
    if (entry.path === path) return entry.rule;
  }
  for (const entry of POD_REFERENCES) {
    const whole = entry.rule.action === "drop" || entry.rule.action === "refuse";
    if (whole && (path.startsWith(`${entry.path}.`) || path.startsWith(`${entry.path}[]`))) return entry.rule;
  }
  return undefined;
}
