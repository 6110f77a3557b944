import type { PodSecurity } from "@tenantplane/api";

const PSA_PREFIX = "pod-security.kubernetes.io/";

/** Pod Security admission labels for the host namespace: each mode's level and version. */
export function podSecurityLabels(podSecurity: PodSecurity): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const mode of ["enforce", "audit", "warn"] as const) {
    labels[`${PSA_PREFIX}${mode}`] = podSecurity[mode];
    labels[`${PSA_PREFIX}${mode}-version`] = podSecurity.version;
  }
  return labels;
}
