import type { ConditionInput } from "@tenantplane/service";
import { CONDITION_SYNCED } from "@tenantplane/api";
import { formatBytes } from "./tenant-limits.js";

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
  /** Objects held back beyond the tenant's limits, in one line naming the limits; undefined when none is. */
  limited?: string | undefined;
  /**
   * Why this tenant's host writes wait (its byte budget has held them back for a while), in one
   * line; undefined while they go as they come.
   */
  paced?: string | undefined;
  /** The failed objects, oldest first, with their last error: the condition names the first few. */
  failures?: readonly FailureSummary[];
}

/** One failed tenant object as the Synced condition names it. */
export interface FailureSummary {
  kind: string;
  tenantRef: { namespace: string; name: string };
  error: { message: string };
}

/** Failed objects the Synced condition names; the rest are counted (each has its Fail Decision and Events). */
export const NAMED_FAILURES = 3;
/** Room for one object's error in the condition: the host's message up to the part that says why. */
const FAILURE_MESSAGE_CHARS = 240;

/**
 * `Pod shop/web: <error>; ConfigMap a/b: <error>; and 4 more` for the first
 * NAMED_FAILURES of `failures`, each error cut to FAILURE_MESSAGE_CHARS; `failed` is the
 * total count. Empty when no failure is known by name.
 */
export function describeFailures(failures: readonly FailureSummary[], failed: number): string {
  const named = failures.slice(0, NAMED_FAILURES).map((f) => {
    const ref = f.tenantRef.namespace ? `${f.tenantRef.namespace}/${f.tenantRef.name}` : f.tenantRef.name;
    return `${f.kind} ${ref}: ${truncate(oneLine(f.error.message), FAILURE_MESSAGE_CHARS)}`;
  });
  if (named.length === 0) return "";
  const more = Math.max(failed, failures.length) - named.length;
  return more > 0 ? `${named.join("; ")}; and ${more} more` : named.join("; ");
}

/**
 * How long a tenant's byte budget must have held its host writes back before the Synced
 * condition says so: a burst of a few large writes is paced too, briefly, and is not news.
 */
export const PACED_NOTICE_MS = 5_000;

/**
 * The `paced` line of a tenant whose host writes its byte budget (`bytesPerSecond`) has held
 * back for `heldBackMs`, with `queued` objects waiting their turn; undefined below PACED_NOTICE_MS.
 */
export function describePacing(heldBackMs: number, bytesPerSecond: number, queued: number): string | undefined {
  if (heldBackMs < PACED_NOTICE_MS) return undefined;
  const waiting = queued > 0 ? `; ${queued} object${queued === 1 ? "" : "s"} waiting their turn` : "";
  return (
    `host writes of this tenant's objects are paced to ${formatBytes(bytesPerSecond)}/s ` +
    `(the worker's TENANT_WRITE_BYTES_PER_SECOND) and have waited for it for ${Math.round(heldBackMs / 1000)} s${waiting}`
  );
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
  if (state.limited !== undefined) {
    return {
      type: CONDITION_SYNCED,
      status: "False",
      reason: "TenantLimitExceeded",
      message: `${state.limited} (${counts}; each has a Skip naming its limit)`,
    };
  }
  if (state.failed > 0) {
    return {
      type: CONDITION_SYNCED,
      status: "False",
      reason: "ObjectErrors",
      message: `${counts}: ${describeFailures(state.failures ?? [], state.failed) || "see the Fail Decisions"}`,
    };
  }
  if (state.paced !== undefined) {
    return {
      type: CONDITION_SYNCED,
      status: "False",
      reason: "WritesPaced",
      message: `${state.paced} (${counts})`,
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

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
