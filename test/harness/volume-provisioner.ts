import { StorageV1Api, type KubeConfig } from "@kubernetes/client-node";
import { JsonClient, startListWatch, type ListWatch, type RawObject } from "@tenantplane/kube";
import { createLogger, httpStatusOf } from "@tenantplane/runtime";

/** Name of the default StorageClass the harness creates and provisions for. */
export const defaultStorageClassName = "standard";
/** Provisioner name written on the StorageClass and on every PV the harness creates. */
export const testProvisionerName = "tenantplane.io/test-hostpath";

/** A running provisioner. */
export interface VolumeProvisioner {
  /** Stops the watches and waits for an in-flight pass to finish. */
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
 * Plays a dynamic provisioner for every class naming {@link testProvisionerName} (`standard`, and
 * any copy of it, as tenantplane's per-tenant class copies are): every pending claim the PV
 * controller hands to it gets a hostPath PV of the claim's class pre-bound through `claimRef`
 * (the PV controller completes the binding), and
 * Released PVs it created are deleted, as the Delete reclaim policy asks. It watches claims,
 * volumes and classes like a real external provisioner and works from those caches, so it costs
 * the API server nothing while nothing changes (a benchmark counting every component's
 * requests sees the cluster as it would be without it). Level-triggered: every change runs a
 * pass over the caches, and a pass whose write failed runs again after `retryMs`.
 */
export function startVolumeProvisioner(kc: KubeConfig, hostPathRoot: string, retryMs = 1_000): VolumeProvisioner {
  const client = new JsonClient(kc, { userAgent: "harness-volume-provisioner/1" });
  const watchClient = new JsonClient(kc, { userAgent: "harness-volume-provisioner/1", timeoutMs: 60_000 });
  const logger = createLogger("volume-provisioner", "warn");
  let stopped = false;
  let lastError = "";
  let running: Promise<void> = Promise.resolve();
  let again = false;
  let retry: NodeJS.Timeout | undefined;

  const watch = (path: string, apiVersion: string, kind: string): ListWatch =>
    startListWatch({ client: watchClient, path, apiVersion, kind, logger, onEvent: () => kick() });
  const classes = watch("/apis/storage.k8s.io/v1/storageclasses", "storage.k8s.io/v1", "StorageClass");
  const claims = watch("/api/v1/persistentvolumeclaims", "v1", "PersistentVolumeClaim");
  const volumes = watch("/api/v1/persistentvolumes", "v1", "PersistentVolume");

  const pass = async () => {
    // Every StorageClass naming this provisioner is served, not only the default one.
    const served = new Set(
      classes
        .list()
        .filter((c) => c["provisioner"] === testProvisionerName)
        .map((c) => c.metadata.name),
    );
    for (const claim of claims.list()) {
      if (needsVolume(claim, served) && !volumes.get(undefined, volumeName(claim))) {
        await provision(client, claim, hostPathRoot);
      }
    }
    for (const pv of volumes.list()) {
      const ours = pv.metadata.annotations?.["pv.kubernetes.io/provisioned-by"] === testProvisionerName;
      const phase = (pv["status"] as { phase?: string } | undefined)?.phase;
      if (ours && phase === "Released" && !pv.metadata.deletionTimestamp) {
        await client
          .request("DELETE", `/api/v1/persistentvolumes/${encodeURIComponent(pv.metadata.name)}`)
          .catch(ignoreNotFound);
      }
    }
  };
  // One pass at a time; changes that arrive during a pass run one more after it.
  const kick = (): void => {
    if (stopped) return;
    if (again) return;
    again = true;
    running = running.then(async () => {
      again = false;
      if (stopped) return;
      try {
        await pass();
        lastError = "";
      } catch (error) {
        // Transient API errors (e.g. during shutdown) are retried; report each new one once.
        const message = error instanceof Error ? error.message : String(error);
        if (message !== lastError && !stopped) console.error(`[harness] volume provisioner: ${message}`);
        lastError = message;
        clearTimeout(retry);
        retry = setTimeout(kick, retryMs);
      }
    });
  };
  void Promise.all([classes.synced, claims.synced, volumes.synced]).then(kick);

  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      for (const w of [classes, claims, volumes]) w.stop();
      await running;
    },
  };
}

/** Where the PV controller names the provisioner it hands a claim to, once no existing volume matched it. */
const PROVISIONER_ANNOTATIONS = [
  "volume.kubernetes.io/storage-provisioner",
  "volume.beta.kubernetes.io/storage-provisioner",
];

// Like sig-storage's external provisioners, only a claim the PV controller handed over (it found
// no Available volume of the class to bind) gets a new volume: provisioning any pending claim of
// a served class would race the controller's binding and hide which volume a claim would get.
function needsVolume(claim: RawObject, served: ReadonlySet<string>): boolean {
  const spec = claim["spec"] as { storageClassName?: string; volumeName?: string } | undefined;
  const status = claim["status"] as { phase?: string } | undefined;
  const annotations = claim.metadata.annotations ?? {};
  return (
    served.has(spec?.storageClassName ?? "") &&
    PROVISIONER_ANNOTATIONS.some((key) => annotations[key] === testProvisionerName) &&
    !spec?.volumeName &&
    status?.phase === "Pending" &&
    claim.metadata.deletionTimestamp === undefined
  );
}

function volumeName(claim: RawObject): string {
  return `pvc-${claim.metadata.uid ?? ""}`;
}

async function provision(client: JsonClient, claim: RawObject, hostPathRoot: string): Promise<void> {
  const uid = claim.metadata.uid ?? "";
  const spec = (claim["spec"] ?? {}) as {
    storageClassName?: string;
    accessModes?: string[];
    volumeMode?: string;
    resources?: { requests?: Record<string, string> };
  };
  await client
    .request("POST", "/api/v1/persistentvolumes", {
      body: {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: {
          name: volumeName(claim),
          annotations: { "pv.kubernetes.io/provisioned-by": testProvisionerName },
        },
        spec: {
          capacity: { storage: spec.resources?.requests?.["storage"] ?? "1Gi" },
          accessModes: spec.accessModes ?? ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: "Delete",
          storageClassName: spec.storageClassName ?? defaultStorageClassName,
          volumeMode: spec.volumeMode ?? "Filesystem",
          hostPath: { path: `${hostPathRoot}/${uid}`, type: "DirectoryOrCreate" },
          claimRef: {
            apiVersion: "v1",
            kind: "PersistentVolumeClaim",
            namespace: claim.metadata.namespace ?? "",
            name: claim.metadata.name,
            uid,
          },
        },
      },
    })
    .catch((error: unknown) => {
      // The watch has not shown it yet; the PV controller binds it.
      if (httpStatusOf(error) !== 409) throw error;
    });
}

function ignoreNotFound(error: unknown): void {
  if (httpStatusOf(error) !== 404) throw error;
}
