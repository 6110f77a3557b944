/**
 * A control-plane pod not Ready this long after its StatefulSet was created is described in
 * ControlPlaneReady; before that, a pod on its way (its claim being bound, its image pulled)
 * would change the message, and the status, at every step.
 */
export const POD_LOOK_AFTER_MS = 20_000;

/**
 * Whether a change to a control-plane pod can change what a pass reports. Readiness comes from
 * the StatefulSet's ready count (its own watch events), so the pod is only looked at once its
 * StatefulSet is POD_LOOK_AFTER_MS old (a timer wakes that first look); until then the five or
 * so updates a starting pod goes through (scheduled, bound, containers created, started,
 * Ready) would each cost a pass that reports the same. A deleted pod, or one whose
 * StatefulSet is unknown, always matters.
 */
export function podChangeMatters(
  type: "add" | "update" | "delete",
  statefulSet: { metadata?: { creationTimestamp?: unknown } } | null | undefined,
  now: number,
): boolean {
  if (type === "delete" || !statefulSet) return true;
  // As the cache holds it: the server's JSON, a string.
  const created = Date.parse(String(statefulSet.metadata?.creationTimestamp));
  return !Number.isFinite(created) || now - created >= POD_LOOK_AFTER_MS;
}

/** How soon a tenant API that does not answer, its pod Ready, is probed again at first. */
export const API_PROBE_RETRY_MS = 5_000;
/** The longest wait between two probes of a tenant API that keeps not answering. */
export const API_PROBE_RETRY_MAX_MS = 60_000;

/**
 * How long until a tenant API that did not answer is probed again: API_PROBE_RETRY_MS while its
 * pod has been Ready for less than four times that (k3s answering a few seconds after its
 * readiness probe passes is routine), then a quarter of the time it has been Ready, up to
 * API_PROBE_RETRY_MAX_MS. An API that stays silent long after its pod is Ready is a problem
 * (a policy, a certificate, a crash loop the probe misses) that the condition already names;
 * probing it every few seconds would only cost a pass each time. Taken from the pod's Ready
 * condition, not from a count kept in memory, so a restart of the provisioner keeps the pace
 * and a restarted pod starts it over.
 */
export function apiProbeRetryMs(
  pod:
    | { status?: { conditions?: ReadonlyArray<{ type?: string; status?: string; lastTransitionTime?: unknown }> } }
    | null
    | undefined,
  now: number,
): number {
  const ready = pod?.status?.conditions?.find((c) => c.type === "Ready" && c.status === "True");
  // As the cache holds it: the server's JSON, a string.
  const since = Date.parse(String(ready?.lastTransitionTime));
  if (!Number.isFinite(since)) return API_PROBE_RETRY_MS;
  return Math.min(API_PROBE_RETRY_MAX_MS, Math.max(API_PROBE_RETRY_MS, Math.floor((now - since) / 4)));
}
