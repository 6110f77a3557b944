import type { DecisionError } from "@tenantplane/messaging";
import { ApiError, type Query, resourcePath } from "@tenantplane/kube";
import type { HostObject, PlannedDecisionWithObject } from "@tenantplane/sync";
import { clusterError, type Cluster } from "./host.js";
import { pluralOf } from "./kinds.js";
import type { RawObject } from "./tenant-context.js";

/** The sync worker's field manager on host writes; dry runs send theirs as it, so apply conflicts match. */
export const SYNC_WORKER_FIELD_MANAGER = "tenantplane-sync-worker";

/** One write as the sync worker sends it, with `dryRun=All`: the host admits or refuses it and stores nothing. */
export interface DryRunRequest {
  method: "POST" | "PUT" | "PATCH";
  path: string;
  query: Query;
  body: unknown;
  contentType?: string;
}

// The sync worker applies (server-side apply) updates of the kinds whose spec the host fills
// in after creation, and replaces (PUT) the others; creates are POSTs.
const APPLIED_KINDS = new Set(["Pod", "PersistentVolumeClaim"]);

/**
 * The dry-run twin of the request the sync worker sends for a Create or Update: the same
 * method, path, body and preconditions (an Update carries the resourceVersion and uid of
 * `current`, the host object as listed). Undefined for other actions, an entry without a
 * desired object, or an Update whose host object was not listed.
 */
export function dryRunRequest(
  entry: PlannedDecisionWithObject,
  current: RawObject | undefined,
): DryRunRequest | undefined {
  const object = entry.object;
  if (object === undefined) return undefined;
  const collection = resourcePath("v1", pluralOf(object.kind), object.metadata.namespace);
  if (entry.action === "Create") {
    return {
      method: "POST",
      path: collection,
      query: { fieldManager: SYNC_WORKER_FIELD_MANAGER, dryRun: "All" },
      body: object,
    };
  }
  if (entry.action !== "Update" || current === undefined) return undefined;
  const { resourceVersion, uid } = (current.metadata ?? {}) as { resourceVersion?: string; uid?: string };
  const body: HostObject = {
    ...object,
    metadata: { ...object.metadata, resourceVersion, uid } as HostObject["metadata"],
  };
  const path = resourcePath("v1", pluralOf(object.kind), object.metadata.namespace, object.metadata.name);
  return APPLIED_KINDS.has(object.kind)
    ? {
        method: "PATCH",
        path,
        query: { fieldManager: SYNC_WORKER_FIELD_MANAGER, force: true, dryRun: "All" },
        body,
        contentType: "application/apply-patch+yaml",
      }
    : { method: "PUT", path, query: { fieldManager: SYNC_WORKER_FIELD_MANAGER, dryRun: "All" }, body };
}

/** The parts of a Kubernetes Status a refusal is judged by. */
export interface RefusalStatus {
  code: number;
  reason?: string | undefined;
  message?: string | undefined;
}

/**
 * What a refused dry run means for the prediction:
 * - `fail`: the host's admission or validation refuses the object itself (quota, LimitRange,
 *   Pod Security, a missing ServiceAccount, a webhook, an invalid field): the worker's write fails the same way;
 * - `permission`: the CLI's own credentials may not write there (RBAC), which says nothing of the worker's;
 * - `unchecked`: an answer about the moment, not the object (a conflict, throttling, a server error).
 */
export function judgeRefusal(status: RefusalStatus): "fail" | "permission" | "unchecked" {
  const message = status.message ?? "";
  if (status.code === 403 && /\bcannot (create|update|patch) resource\b/.test(message)) return "permission";
  // The sync worker retries these itself (transient): they say nothing of the object.
  if ([0, 408, 409, 425, 429].includes(status.code) || status.code >= 500) return "unchecked";
  return status.code >= 400 ? "fail" : "unchecked";
}

/**
 * A Pod refusal caused by an object the same plan creates first: the dry run of the Pod
 * cannot see the ServiceAccount whose Create is only dry-run too, but the worker's real
 * write will. `plannedCreates` holds `<Kind>/<host name>` of every planned Create.
 */
export function refusedForPlannedObject(
  entry: PlannedDecisionWithObject,
  status: RefusalStatus,
  plannedCreates: ReadonlySet<string>,
): boolean {
  if (entry.kind !== "Pod") return false;
  const missing = /serviceaccount "([^"]+)" not found/.exec(status.message ?? "");
  return missing?.[1] !== undefined && plannedCreates.has(`ServiceAccount/${missing[1]}`);
}

/**
 * `entry` as the Fail the host's refusal makes of it: the write that was attempted, the
 * Status reason and the server's own words in `error`, and the reason the sync worker gives
 * its Fail Decision for the same answer (`<Status reason>: <message>`).
 */
export function failedEntry(entry: PlannedDecisionWithObject, status: RefusalStatus): PlannedDecisionWithObject {
  const attempted = entry.action === "Update" ? "Update" : "Create";
  const error: DecisionError = {
    code: status.code,
    reason: status.reason || "Unknown",
    message: status.message ?? "",
    attempted,
  };
  const { object: _object, ...rest } = entry;
  return {
    ...rest,
    action: "Fail",
    reason: `${error.reason}: ${error.message}`,
    error,
  };
}

/** The Status a failed request answered with; undefined when the error is not an answer from the server. */
export function statusOf(error: unknown): RefusalStatus | undefined {
  if (!(error instanceof ApiError)) return undefined;
  return { code: error.code, reason: error.body.reason, message: error.body.message };
}

/** Dry runs sent at once: enough to overlap round trips, few enough not to crowd the host API server. */
const PARALLEL = 8;

/** The entries with each refused Create and Update turned into a Fail, and a note per object that could not be checked. */
export interface DryRunResult {
  entries: PlannedDecisionWithObject[];
  notes: string[];
}

/**
 * Sends every planned Create and Update in `entries` to the host as a dry run of the worker's
 * own request, and predicts each refusal as a Fail (see {@link judgeRefusal}); other entries
 * pass unchanged. `hostObjects` are the host namespace as listed (an Update's preconditions).
 * A host that cannot be reached is exit 3, as for any other live read.
 */
export async function dryRunEntries(
  host: Cluster,
  entries: readonly PlannedDecisionWithObject[],
  hostObjects: readonly RawObject[],
): Promise<DryRunResult> {
  const plannedCreates = new Set(
    entries.filter((e) => e.action === "Create").map((e) => `${e.kind}/${e.hostRef.name}`),
  );
  const current = new Map(hostObjects.map((o) => [`${o.kind}/${o.metadata?.name}`, o]));
  const notes: string[] = [];
  let permissionNoted = false;
  const out = [...entries];
  let next = 0;
  const work = async () => {
    for (let i = next++; i < out.length; i = next++) {
      const entry = out[i]!;
      const request = dryRunRequest(entry, current.get(`${entry.kind}/${entry.hostRef.name}`));
      if (request === undefined) continue;
      const label = `${entry.kind} ${entry.hostRef.namespace}/${entry.hostRef.name}`;
      try {
        await host.client.request(request.method, request.path, {
          query: request.query,
          body: request.body,
          ...(request.contentType === undefined ? {} : { contentType: request.contentType }),
        });
      } catch (error) {
        const status = statusOf(error);
        if (status === undefined) throw clusterError(host, `dry-run the ${entry.action} of ${label}`, error);
        const verdict = judgeRefusal(status);
        if (verdict === "fail" && !refusedForPlannedObject(entry, status, plannedCreates)) {
          out[i] = failedEntry(entry, status);
        } else if (verdict === "permission" && !permissionNoted) {
          permissionNoted = true;
          notes.push(
            `the host refused the dry runs to this kubeconfig's user (${status.message ?? "403"}): Creates and Updates are not checked against the host's admission; dry runs need RBAC create, update and patch on ${[...new Set(entries.map((e) => pluralOf(e.kind)))].join(", ")} in ${entry.hostRef.namespace}`,
          );
        } else if (verdict === "unchecked") {
          notes.push(
            `${label}: the ${entry.action} could not be checked against the host (${status.code} ${status.reason ?? ""}: ${status.message ?? ""})`,
          );
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, out.length) }, work));
  return { entries: out, notes };
}
