import type { Counted, Crash, CrashPolicy, CrashRecord } from "@tenantplane/partition";
import type { ConditionInput } from "@tenantplane/service";

/** The TenantCluster annotation an operator sets (to any new value) to release a quarantined tenant. */
export const ANNOTATION_RELEASE_QUARANTINE = "tenantplane.io/release-quarantine";

/** Synced reason while a tenant is quarantined. */
export const REASON_QUARANTINED = "Quarantined";
/** Warning Event reasons: a crash counted, the quarantine itself; Normal Event on release. */
export const REASON_WORKER_CRASHED = "SyncWorkerCrashed";
export const REASON_TENANT_QUARANTINED = "TenantQuarantined";
export const REASON_QUARANTINE_RELEASED = "QuarantineReleased";

/** The command that releases `tenant`, as the messages print it. */
export function releaseCommand(tenant: string): string {
  return `kubectl annotate tenantcluster ${tenant} ${ANNOTATION_RELEASE_QUARANTINE}="$(date -u +%FT%TZ)" --overwrite`;
}

/** The Synced condition of a quarantined tenant: what happened, what it means, how to end it. */
export function quarantinedCondition(tenant: string, record: CrashRecord, policy: CrashPolicy): ConditionInput {
  const crashes = record.quarantined?.crashes ?? record.crashes;
  return {
    type: "Synced",
    status: "False",
    reason: REASON_QUARANTINED,
    message:
      `quarantined since ${iso(record.quarantined?.at ?? Date.now())}: ${crashesText(crashes)} within ${minutes(policy.windowMs)} ` +
      `(the limit is ${policy.crashes}), so no sync worker syncs this tenant and the other tenants keep syncing. ` +
      `Look for what in this tenant makes a worker die (its logs, an OOM kill), then release it with: ${releaseCommand(tenant)}`,
  };
}

/** The Warning for one crash counted against the tenant, before or at quarantine. */
export function crashedMessage(tenant: string, counted: Counted, policy: CrashPolicy): string {
  const { crash, recent } = counted;
  const head = `sync worker ${crash.worker} died while busy with this tenant (found at ${iso(crash.at)}): crash ${recent.length} of ${policy.crashes} within ${minutes(policy.windowMs)}`;
  if (counted.quarantinedNow)
    return `${head}; the tenant is quarantined until released with: ${releaseCommand(tenant)}`;
  return `${head}; until the window passes it runs alone on its worker, and at ${policy.crashes} it is quarantined`;
}

/** The Normal Event of a release. */
export function releasedMessage(token: string): string {
  return `released from quarantine (${ANNOTATION_RELEASE_QUARANTINE}=${JSON.stringify(token)}): syncing again, alone on its worker for a while`;
}

function crashesText(crashes: readonly Crash[]): string {
  const list = crashes.map((c) => `${c.worker} at ${iso(c.at)}`).join(", ");
  return `${crashes.length} sync worker${crashes.length === 1 ? "" : "s"} died while busy with it (${list})`;
}

function minutes(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}
