import type { V1Pod } from "@kubernetes/client-node";

/**
 * Says, in one sentence, why the control-plane pod is not Ready: not created, not scheduled
 * (with the scheduler's own words), a container waiting or failing, or simply still starting.
 * `pods` are the pods the StatefulSet selects; `podName` is the one it should have made.
 */
export function describePodWait(pods: readonly V1Pod[], podName: string): string {
  const pod = pods.find((p) => p.metadata?.name === podName) ?? pods[0];
  if (pod === undefined) {
    return (
      `pod ${podName} does not exist: the StatefulSet controller has not created it ` +
      `(its FailedCreate Events on the StatefulSet say why, e.g. a quota)`
    );
  }
  const name = pod.metadata?.name ?? podName;
  if (pod.metadata?.deletionTimestamp) return `pod ${name} is being deleted`;
  const conditions = pod.status?.conditions ?? [];
  const scheduled = conditions.find((c) => c.type === "PodScheduled");
  if (!pod.spec?.nodeName) {
    const why = scheduled?.status === "False" ? joined(scheduled.reason, scheduled.message) : "";
    return why ? `pod ${name} is not scheduled: ${why}` : `pod ${name} is waiting to be scheduled`;
  }
  const where = `pod ${name} on node ${pod.spec.nodeName}`;
  for (const status of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const waiting = status.state?.waiting;
    if (waiting && waiting.reason !== "ContainerCreating" && waiting.reason !== "PodInitializing")
      return `${where}: container ${status.name} is waiting: ${joined(waiting.reason, waiting.message)}`;
    const terminated = status.state?.terminated;
    if (terminated && terminated.exitCode !== 0)
      return `${where}: container ${status.name} exited ${terminated.exitCode}: ${joined(terminated.reason, terminated.message)}`;
  }
  const ready = conditions.find((c) => c.type === "Ready");
  const notReady = ready?.status === "False" ? joined(ready.reason, ready.message) : "";
  return `${where} is ${pod.status?.phase ?? "Pending"}, not Ready yet${notReady ? ` (${notReady})` : ""}`;
}

function joined(reason: string | undefined, message: string | undefined): string {
  return [reason, message].filter((part) => part !== undefined && part !== "").join(": ");
}
