import type { KubernetesObject } from "@kubernetes/client-node";
import type { DecisionAction } from "@tenantplane/messaging";

/**
 * What an apply did, judged by resourceVersion: Create when nothing was there,
 * Update when the server stored a new version, nothing when the apply was a no-op
 * (server-side apply of unchanged content writes nothing and bumps nothing).
 */
export function changeOf(before: KubernetesObject | undefined, after: KubernetesObject): DecisionAction | undefined {
  if (!before) return "Create";
  return before.metadata?.resourceVersion === after.metadata?.resourceVersion ? undefined : "Update";
}
