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
