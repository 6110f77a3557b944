// The demo's tenant side: applies the example workloads through a tenant's admin kubeconfig,
// as `kubectl apply --server-side` would, and reads its Pods as the tenant sees them.
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
  type V1Pod,
} from "@kubernetes/client-node";
import { waitFor } from "../harness/index.js";
import type { PodView } from "./example-pods.js";

/** Namespaces every tenant API has from the start. */
const BUILT_IN_NAMESPACES = new Set(["default", "kube-system", "kube-public", "kube-node-lease"]);

/**
 * Creates the manifests' namespaces, waits until the tenant's controller-manager has given
 * each its `default` ServiceAccount (a Pod created before it exists is refused), then applies
 * every manifest with server-side apply under the field manager `tenantplane-demo`.
 */
export async function applyInTenant(tenantKc: KubeConfig, manifests: readonly KubernetesObject[]): Promise<void> {
  const objects = KubernetesObjectApi.makeApiClient(tenantKc);
  const core = tenantKc.makeApiClient(CoreV1Api);
  const namespaces = new Set(manifests.map((m) => m.metadata?.namespace).filter((ns): ns is string => !!ns));
  for (const ns of namespaces) {
    if (BUILT_IN_NAMESPACES.has(ns)) continue;
    await objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  }
  for (const ns of namespaces) {
    await waitFor(() => core.readNamespacedServiceAccount({ name: "default", namespace: ns }), {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: `ServiceAccount ${ns}/default from the tenant's controller-manager`,
    });
  }
  for (const m of manifests) {
    await objects.patch(m, undefined, undefined, "tenantplane-demo", true, PatchStrategy.ServerSideApply);
  }
}

/** The tenant's Pods in `namespaces`, as the judgement of {@link judgePods} reads them. */
export async function tenantPods(tenantKc: KubeConfig, namespaces: readonly string[]): Promise<PodView[]> {
  const core = tenantKc.makeApiClient(CoreV1Api);
  const lists = await Promise.all(namespaces.map((namespace) => core.listNamespacedPod({ namespace })));
  return lists.flatMap((list) => list.items.map(podView));
}

function podView(pod: V1Pod): PodView {
  const owner = pod.metadata?.ownerReferences?.find((o) => o.controller);
  const why = whyNotRunning(pod);
  return {
    namespace: pod.metadata?.namespace ?? "",
    name: pod.metadata?.name ?? "",
    phase: pod.status?.phase ?? "Pending",
    ...(owner ? { ownerKind: owner.kind } : {}),
    deleting: pod.metadata?.deletionTimestamp !== undefined,
    ...(why ? { why } : {}),
  };
}

// What a tenant would read in `kubectl describe pod`: a False condition's message, or a
// waiting container's reason.
function whyNotRunning(pod: V1Pod): string | undefined {
  if (pod.status?.phase === "Running" || pod.status?.phase === "Succeeded") return undefined;
  const waiting = pod.status?.containerStatuses?.find((c) => c.state?.waiting?.reason)?.state?.waiting;
  if (waiting?.reason) return `${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}`;
  const condition = pod.status?.conditions?.find((c) => c.status === "False" && (c.message || c.reason));
  if (condition) return `${condition.type}=False: ${condition.message ?? condition.reason}`;
  if (pod.status?.reason) return `${pod.status.reason}${pod.status.message ? `: ${pod.status.message}` : ""}`;
  return pod.spec?.nodeName ? undefined : "no node yet";
}
