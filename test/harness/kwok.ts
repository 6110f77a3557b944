import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, type KubeConfig, type V1Node } from "@kubernetes/client-node";
import { startProcess, type ManagedProcess } from "./process.js";
import { waitFor } from "./wait-for.js";

/** Annotation kwok is told to select: nodes carrying it are simulated by kwok. */
export const kwokNodeAnnotation = { key: "kwok.x-k8s.io/node", value: "fake" } as const;

/** Label the Job controller puts on each of its Pods, and which the host copy of a tenant Job's Pod keeps. */
const JOB_NAME_LABEL = "batch.kubernetes.io/job-name";

/** How long a Job's Pod runs on a kwok node before it completes. */
const JOB_POD_RUN_MS = 1_000;

/**
 * kwok's Pod stages. kwok uses its built-in ones only when the configuration has no Pod stage
 * at all, so these restate two of them (a scheduled Pod becomes Running and Ready; a deleted
 * Pod is removed at once) and replace the third: kwok completes a Pod owned by a Job, but the
 * host copy of a tenant Job's Pod has no owner (the sync never copies owners), so a Pod
 * completes when it carries the Job controller's {@link JOB_NAME_LABEL}, which the sync does
 * copy. It ends as a finished Job Pod does: Succeeded, not Ready, each container terminated
 * with exit code 0 and reason Completed.
 */
const POD_STAGES = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
      - { key: ".metadata.deletionTimestamp", operator: DoesNotExist }
      - { key: ".status.podIP", operator: DoesNotExist }
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - { type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }} }
      - { type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }} }
      - { type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }} }
      {{ range .spec.readinessGates }}
      - { type: {{ .conditionType | Quote }}, status: "True", lastTransitionTime: {{ $now | Quote }} }
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: true
        restartCount: 0
        state: { running: { startedAt: {{ $now | Quote }} } }
      {{ end }}
      initContainerStatuses:
      {{ range .spec.initContainers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: true
        restartCount: 0
        {{ if eq .restartPolicy "Always" }}
        started: true
        state: { running: { startedAt: {{ $now | Quote }} } }
        {{ else }}
        state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} } }
        {{ end }}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: job-pod-complete
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
      - { key: ".metadata.deletionTimestamp", operator: DoesNotExist }
      - { key: ".status.phase", operator: In, values: [Running] }
      - { key: '.metadata.labels["${JOB_NAME_LABEL}"]', operator: Exists }
  delay:
    durationMilliseconds: ${JOB_POD_RUN_MS}
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $started := or .status.startTime $now }}
      conditions:
      - { type: PodScheduled, status: "True", lastTransitionTime: {{ $started | Quote }} }
      - { type: Initialized, status: "True", lastTransitionTime: {{ $started | Quote }} }
      - { type: Ready, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }} }
      - { type: ContainersReady, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }} }
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: false
        started: false
        restartCount: 0
        state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $started | Quote }}, finishedAt: {{ $now | Quote }} } }
      {{ end }}
      phase: Succeeded
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
      - { key: ".metadata.deletionTimestamp", operator: Exists }
  next:
    finalizers: { empty: true }
    delete: true
`;

/** Pod stages kwok plays at once (its default is 4 for all the nodes it fakes). */
const POD_STAGE_WORKERS = 16;

/**
 * Starts kwok against the cluster with its built-in node stages and the Pod stages above,
 * managing only nodes with {@link kwokNodeAnnotation} (or `options.nodeAnnotationValue` as its
 * value, so two kwoks on one API, or nodes copied between APIs, never manage the same node).
 */
export function startKwok(
  kwokBinary: string,
  kubeconfigPath: string,
  dir: string,
  logsDir: string,
  options: { name?: string; nodeAnnotationValue?: string } = {},
): ManagedProcess {
  // An explicit configuration also keeps a developer's ~/.kwok/kwok.yaml from changing behaviour.
  // kwok plays Pod stages with 4 workers for every node it fakes, where each real node has its
  // own kubelet: with 10 nodes and 10,000 Pods those 4 workers, not the API server, set the pace
  // (6.7 Pods Ready/s); with 16 the API server sets it, as it does for a fleet of real nodes.
  const configPath = join(dir, "kwok.yaml");
  writeFileSync(
    configPath,
    `apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions:\n  podPlayStageParallelism: ${POD_STAGE_WORKERS}\n---${POD_STAGES}`,
  );
  const annotationValue = options.nodeAnnotationValue ?? kwokNodeAnnotation.value;
  return startProcess({
    name: options.name ?? "kwok",
    command: kwokBinary,
    args: [
      `--config=${configPath}`,
      `--kubeconfig=${kubeconfigPath}`,
      `--manage-nodes-with-annotation-selector=${kwokNodeAnnotation.key}=${annotationValue}`,
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
