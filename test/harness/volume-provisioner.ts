import { CoreV1Api, StorageV1Api, type KubeConfig, type V1PersistentVolumeClaim } from "@kubernetes/client-node";

/** Name of the default StorageClass the harness creates and provisions for. */
export const defaultStorageClassName = "standard";
/** Provisioner name written on the StorageClass and on every PV the harness creates. */
export const testProvisionerName = "tenantplane.io/test-hostpath";

/** A running provisioning loop. */
export interface VolumeProvisioner {
  /** Stops the loop and waits for an in-flight pass to finish. */
  stop(): Promise<void>;
}

/** Creates the default StorageClass `standard`, served by {@link startVolumeProvisioner}. */
export async function createDefaultStorageClass(kc: KubeConfig): Promise<void> {
  await kc.makeApiClient(StorageV1Api).createStorageClass({
    body: {
      metadata: {
        name: defaultStorageClassName,
        annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
      },
      provisioner: testProvisionerName,
      reclaimPolicy: "Delete",
      volumeBindingMode: "Immediate",
    },
  });
}

/**
 * Plays a dynamic provisioner for the `standard` class: every pending claim of that class gets
 * a hostPath PV pre-bound through `claimRef` (the PV controller completes the binding), and
 * Released PVs it created are deleted, as the Delete reclaim policy asks. Level-triggered: each
 * pass lists current state, so a missed change is picked up by the next pass.
 */
export function startVolumeProvisioner(kc: KubeConfig, hostPathRoot: string, intervalMs = 250): VolumeProvisioner {
  const core = kc.makeApiClient(CoreV1Api);
  let stopped = false;
  let lastError = "";
  const pass = async () => {
    // Every StorageClass naming this provisioner is served, not only the default one.
    const classes = await kc.makeApiClient(StorageV1Api).listStorageClass();
    const served = new Set(
      classes.items.filter((c) => c.provisioner === testProvisionerName).map((c) => c.metadata?.name ?? ""),
    );
    const claims = await core.listPersistentVolumeClaimForAllNamespaces();
    for (const claim of claims.items) {
      if (needsVolume(claim, served)) await provision(core, claim, hostPathRoot);
    }
    const volumes = await core.listPersistentVolume();
    for (const pv of volumes.items) {
      const ours = pv.metadata?.annotations?.["pv.kubernetes.io/provisioned-by"] === testProvisionerName;
      if (ours && pv.status?.phase === "Released" && pv.metadata?.name !== undefined) {
        await core.deletePersistentVolume({ name: pv.metadata.name }).catch(ignoreNotFound);
      }
    }
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        await pass();
        lastError = "";
      } catch (error) {
        // Transient API errors (e.g. during shutdown) are retried by the next pass; report each new one once.
        const message = error instanceof Error ? error.message : String(error);
        if (message !== lastError && !stopped) console.error(`[harness] volume provisioner: ${message}`);
        lastError = message;
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

function needsVolume(claim: V1PersistentVolumeClaim, served: ReadonlySet<string>): boolean {
  return (
    served.has(claim.spec?.storageClassName ?? "") &&
    !claim.spec?.volumeName &&
    claim.status?.phase === "Pending" &&
    claim.metadata?.deletionTimestamp === undefined
  );
}

async function provision(core: CoreV1Api, claim: V1PersistentVolumeClaim, hostPathRoot: string): Promise<void> {
  const uid = claim.metadata?.uid ?? "";
  const storage = claim.spec?.resources?.requests?.["storage"] ?? "1Gi";
  await core
    .createPersistentVolume({
      body: {
        metadata: {
          name: `pvc-${uid}`,
          annotations: { "pv.kubernetes.io/provisioned-by": testProvisionerName },
        },
        spec: {
          capacity: { storage },
          accessModes: claim.spec?.accessModes ?? ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: "Delete",
          storageClassName: claim.spec?.storageClassName ?? defaultStorageClassName,
          volumeMode: claim.spec?.volumeMode ?? "Filesystem",
          hostPath: { path: `${hostPathRoot}/${uid}`, type: "DirectoryOrCreate" },
          claimRef: {
            apiVersion: "v1",
            kind: "PersistentVolumeClaim",
            namespace: claim.metadata?.namespace ?? "",
            name: claim.metadata?.name ?? "",
            uid,
          },
        },
      },
    })
    .catch((error: unknown) => {
      // The previous pass already created it; the PV controller just has not bound it yet.
      if ((error as { code?: number }).code !== 409) throw error;
    });
}

function ignoreNotFound(error: unknown): void {
  if ((error as { code?: number }).code !== 404) throw error;
}
