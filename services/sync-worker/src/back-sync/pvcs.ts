import { LABEL_MANAGED_BY, MANAGED_BY } from "@tenantplane/mapping";
import { sameJson, type Json } from "./same-json.js";

/** Label on every PersistentVolume tenantplane made in a tenant API; others are never touched. */
export const LABEL_VIRTUAL_VOLUME = "tenantplane.io/virtual-volume";

/**
 * CSI driver name on a tenant's virtual volumes. No such driver runs in a tenant: the
 * volume is a record that the claim is bound (the data lives in the host volume named by
 * `volumeHandle`), and its Retain policy keeps the tenant's volume controller from
 * trying to delete anything.
 */
export const VIRTUAL_VOLUME_DRIVER = "volumes.tenantplane.io";

/** The parts of a PersistentVolumeClaim or PersistentVolume back-sync reads. */
export interface VolumeObject {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    [key: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One write back-sync makes to the tenant for a claim, in order. */
export type ClaimStep =
  /** Create the tenant's virtual PersistentVolume, pre-bound to the claim. */
  | { action: "CreateVolume"; volume: VolumeObject }
  /** Set the virtual volume's status.phase. */
  | { action: "VolumeStatus"; name: string; phase: string }
  /** Set the claim's spec.volumeName (allowed once, while empty) and the bind-completed annotation. */
  | { action: "BindClaim"; volumeName: string }
  /** Merge-patch the claim's status (phase, capacity, access modes). */
  | { action: "ClaimStatus"; patch: Record<string, Json> };

/** What planning one claim looks at. */
export interface ClaimInput {
  tenant: VolumeObject;
  /** The host copy of the claim, or undefined. */
  host: VolumeObject | undefined;
  /** The tenant's virtual volume for this claim ({@link virtualVolumeName}), when it exists. */
  volume: VolumeObject | undefined;
}

/** The name of the virtual volume of a tenant claim: `pvc-<claim uid>`, as dynamic provisioners name theirs. */
export function virtualVolumeName(claim: VolumeObject): string {
  return `pvc-${claim.metadata.uid ?? claim.metadata.name}`;
}

/**
 * The writes that show a tenant claim as its host copy is: once the host binds the copy,
 * the tenant gets a virtual PersistentVolume pre-bound to its claim (capacity and access
 * modes of the host claim), the claim names that volume, and the claim's phase, capacity
 * and access modes follow the host's. A claim the tenant bound to a volume of its own is
 * left alone; so is one being deleted.
 */
export function planClaim(input: ClaimInput): ClaimStep[] {
  const { tenant, host } = input;
  if (host === undefined || tenant.metadata.deletionTimestamp !== undefined) return [];
  const hostStatus = host.status ?? {};
  const phase = hostStatus["phase"] as string | undefined;
  const name = virtualVolumeName(tenant);
  const bound = (tenant.spec?.["volumeName"] as string | undefined) ?? "";
  if (bound !== "" && bound !== name) return [];
  const steps: ClaimStep[] = [];
  if (phase === "Bound") {
    const capacity = hostStatus["capacity"] as Record<string, string> | undefined;
    if (capacity?.["storage"] === undefined) return [];
    if (input.volume === undefined) {
      steps.push({ action: "CreateVolume", volume: virtualVolume(tenant, host) });
      steps.push({ action: "VolumeStatus", name, phase: "Bound" });
    } else if (input.volume.status?.["phase"] !== "Bound") {
      steps.push({ action: "VolumeStatus", name, phase: "Bound" });
    }
    if (bound === "") steps.push({ action: "BindClaim", volumeName: name });
  }
  const patch = claimStatusPatch(tenant.status ?? {}, hostStatus);
  if (patch !== undefined) steps.push({ action: "ClaimStatus", patch });
  return steps;
}

/** The tenant's virtual volume for `claim`, whose host copy `host` is bound. */
export function virtualVolume(claim: VolumeObject, host: VolumeObject): VolumeObject {
  const hostStatus = host.status ?? {};
  const capacity = hostStatus["capacity"] as Record<string, string>;
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: {
      name: virtualVolumeName(claim),
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_VIRTUAL_VOLUME]: "true" },
    },
    spec: {
      capacity: { storage: capacity["storage"]! },
      accessModes: (hostStatus["accessModes"] ?? claim.spec?.["accessModes"] ?? ["ReadWriteOnce"]) as Json,
      claimRef: {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        namespace: claim.metadata.namespace ?? "default",
        name: claim.metadata.name,
        uid: claim.metadata.uid ?? "",
      },
      persistentVolumeReclaimPolicy: "Retain",
      storageClassName: (claim.spec?.["storageClassName"] as string | undefined) ?? "",
      volumeMode: (claim.spec?.["volumeMode"] as string | undefined) ?? "Filesystem",
      csi: {
        driver: VIRTUAL_VOLUME_DRIVER,
        volumeHandle: (host.spec?.["volumeName"] as string | undefined) || host.metadata.name,
      },
    },
  };
}

/** Claim status fields that follow the host copy's. */
const MIRRORED_CLAIM_STATUS = ["phase", "capacity", "accessModes"] as const;

/** The merge patch making the tenant claim's phase, capacity and access modes the host's, or undefined. */
export function claimStatusPatch(
  tenant: Record<string, unknown>,
  host: Record<string, unknown>,
): Record<string, Json> | undefined {
  // A claim the host has not bound yet is Pending in the tenant too: nothing to say.
  if (host["phase"] === undefined || host["phase"] === "Pending") return undefined;
  const patch: Record<string, Json> = {};
  for (const field of MIRRORED_CLAIM_STATUS) {
    const want = (host[field] as Json | undefined) ?? null;
    if (!sameJson(want, tenant[field] ?? null)) patch[field] = want;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

/**
 * Virtual volumes whose claim is gone (no live claim with the uid in their claimRef):
 * deleted, since nothing in the tenant will ever release them.
 */
export function orphanedVolumes(volumes: readonly VolumeObject[], claims: readonly VolumeObject[]): VolumeObject[] {
  const live = new Set(claims.map((c) => c.metadata.uid));
  return volumes.filter((v) => {
    if (v.metadata.labels?.[LABEL_VIRTUAL_VOLUME] !== "true" || v.metadata.deletionTimestamp !== undefined)
      return false;
    const uid = (v.spec?.["claimRef"] as { uid?: string } | undefined)?.uid;
    return uid === undefined || !live.has(uid);
  });
}
