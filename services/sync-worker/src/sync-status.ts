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
  /** Objects whose host state cannot be written back to the tenant right now (each is retried). */
  backSyncFailed?: number;
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
  const back = state.backSyncFailed ?? 0;
  if (back > 0) {
    return {
      type: CONDITION_SYNCED,
      status: "False",
      reason: "BackSyncErrors",
      message: `${counts}; ${back} object${back === 1 ? "" : "s"} whose host status cannot be written back to the tenant, retrying; the worker log names each`,
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
