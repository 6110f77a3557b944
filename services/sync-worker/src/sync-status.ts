import type { ConditionInput } from "@tenantplane/service";
import { CONDITION_SYNCED } from "@tenantplane/api";

/** Object counts of one tenant, as `status.sync` shows them. */
export interface SyncCounts {
  inSync: number;
  skipped: number;
  failed: number;
}

/** What the Synced condition is computed from. */
export interface SyncState extends SyncCounts {
  /** Why the tenant API cannot be listed, or undefined while it can. */
  down: string | undefined;
  /** The caches have listed and the first pass ran. */
  started: boolean;
  lastFullPass: Date | undefined;
}

/** The Synced condition for a tenant's state: False while its API is down or objects fail. */
export function syncedCondition(state: SyncState): ConditionInput {
  const counts = `${state.inSync} in sync, ${state.skipped} skipped, ${state.failed} failed`;
  if (state.down !== undefined) {
    return {
      type: CONDITION_SYNCED,
      status: "False",
      reason: "TenantAPIUnavailable",
      message: `cannot list the tenant API: ${state.down}; host copies are kept and nothing is deleted until it answers (${counts})`,
    };
  }
  if (!state.started) {
    return { type: CONDITION_SYNCED, status: "Unknown", reason: "Listing", message: "listing tenant and host objects" };
  }
  if (state.failed > 0) {
    return {
      type: CONDITION_SYNCED,
      status: "False",
      reason: "ObjectErrors",
      message: `${counts}; the worker log names each failed object`,
    };
  }
  return { type: CONDITION_SYNCED, status: "True", reason: "Synced", message: counts };
}

/** `status.sync` as written to the TenantCluster. */
export function syncStatusField(state: SyncState): {
  inSync: number;
  skipped: number;
  failed: number;
  lastFullPass?: string;
} {
  return {
    inSync: state.inSync,
    skipped: state.skipped,
    failed: state.failed,
    ...(state.lastFullPass === undefined ? {} : { lastFullPass: state.lastFullPass.toISOString() }),
  };
}
