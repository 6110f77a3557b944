import type { KubernetesObject } from "@kubernetes/client-node";

type Quota = KubernetesObject & {
  spec?: { hard?: Record<string, string> };
  status?: { hard?: Record<string, string> };
};

/**
 * How long a new quota may wait for the host's quota controller before IsolationApplied says so.
 * On an idle cluster the first count comes within a second; a loaded controller-manager takes a
 * few.
 */
export const QUOTA_COUNT_GRACE_MS = 15_000;

/**
 * True while the host's quota controller has not counted `quota` yet. Until its first count
 * (`status.hard` written) the API server's quota admission neither enforces nor counts the
 * quota: a Pod created meanwhile is admitted whatever it asks for, and if the controller's count
 * comes from a pod cache that has not seen it yet, it stays uncounted until the controller's
 * next full resync (five minutes by default). Nothing may run in the namespace before that.
 *
 * A quota counted once keeps enforcing its counted numbers while a later spec change is counted,
 * so only the first count is waited for. A quota with no hard limits has nothing to count.
 */
export function quotaUncounted(quota: KubernetesObject | undefined): boolean {
  const q = quota as Quota | undefined;
  if (q === undefined) return true;
  if (Object.keys(q.spec?.hard ?? {}).length === 0) return false;
  return Object.keys(q.status?.hard ?? {}).length === 0;
}
