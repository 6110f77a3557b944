import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, type KubeConfig, type V1Node } from "@kubernetes/client-node";
import { startProcess, type ManagedProcess } from "./process.js";
import { waitFor } from "./wait-for.js";

/** Annotation kwok is told to select: nodes carrying it are simulated by kwok. */
export const kwokNodeAnnotation = { key: "kwok.x-k8s.io/node", value: "fake" } as const;

/**
 * Starts kwok against the cluster with its built-in node and pod stages (v0.7 falls back to
 * them when the configuration has none), managing only nodes with {@link kwokNodeAnnotation}.
 */
export function startKwok(kwokBinary: string, kubeconfigPath: string, dir: string, logsDir: string): ManagedProcess {
  // An explicit, stage-free configuration keeps a developer's ~/.kwok/kwok.yaml from changing behaviour.
  const configPath = join(dir, "kwok.yaml");
  writeFileSync(configPath, "apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions: {}\n");
  return startProcess({
    name: "kwok",
    command: kwokBinary,
    args: [
      `--config=${configPath}`,
      `--kubeconfig=${kubeconfigPath}`,
      `--manage-nodes-with-annotation-selector=${kwokNodeAnnotation.key}=${kwokNodeAnnotation.value}`,
      // Heartbeat through a node Lease (renewed every quarter of its duration) as a kubelet
      // does; without it kwok's status heartbeats on a loaded machine arrive after the node
      // monitor's grace period and the node flaps to NotReady mid-suite.
      "--node-lease-duration-seconds=40",
    ],
    logPath: join(logsDir, "kwok.log"),
  });
}

/** Registers a fake node that kwok manages, and waits until it is Ready and schedulable. */
export async function createKwokNode(kc: KubeConfig, name: string, kwok: ManagedProcess): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const resources = { cpu: "32", memory: "256Gi", pods: "110", "ephemeral-storage": "1Ti" };
  const body: V1Node = {
    metadata: {
      name,
      annotations: { [kwokNodeAnnotation.key]: kwokNodeAnnotation.value, "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
      },
    },
    // Capacity is part of what a kubelet registers; kwok's stages keep it while faking conditions.
    status: { capacity: resources, allocatable: resources },
  };
  await core.createNode({ body });
  await waitFor(
    async () => {
      kwok.assertRunning();
      const node = await core.readNode({ name });
      const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      // The node lifecycle controller lifts the not-ready taint only after it has seen Ready.
      const tainted = (node.spec?.taints ?? []).some((t) => t.key.startsWith("node.kubernetes.io/"));
      return ready && !tainted;
    },
    { description: `kwok node ${name} to be Ready without node.kubernetes.io taints`, timeoutMs: 90_000 },
  );
}
