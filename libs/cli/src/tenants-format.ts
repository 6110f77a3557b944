import { GROUP } from "@tenantplane/api";
import YAML from "yaml";
import { renderTable } from "./table.js";
import type { RawObject } from "./tenant-context.js";

/** The output formats of `get tenants` and `create tenant`. */
export const TENANT_FORMATS = ["table", "json", "yaml", "name"] as const;
/** One of {@link TENANT_FORMATS}. */
export type TenantFormat = (typeof TENANT_FORMATS)[number];

interface ConditionView {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
}

/** The conditions of a TenantCluster as written (malformed entries dropped). */
export function conditionsOf(tc: RawObject): Array<{ type: string; status: string; reason: string; message: string }> {
  const list = tc.status?.["conditions"];
  if (!Array.isArray(list)) return [];
  return (list as ConditionView[])
    .filter((c) => typeof c.type === "string")
    .map((c) => ({
      type: String(c.type),
      status: typeof c.status === "string" ? c.status : "Unknown",
      reason: typeof c.reason === "string" ? c.reason : "",
      message: typeof c.message === "string" ? c.message : "",
    }));
}

/** Sync counts from `status.sync`, when the sync worker has written them. */
export function syncCountsOf(
  tc: RawObject,
): { inSync: number; skipped: number; failed: number; lastFullPass?: string } | undefined {
  const sync = tc.status?.["sync"] as Record<string, unknown> | undefined;
  if (sync === undefined || typeof sync !== "object" || sync === null) return undefined;
  const count = (key: string) => (typeof sync[key] === "number" ? (sync[key] as number) : 0);
  return {
    inSync: count("inSync"),
    skipped: count("skipped"),
    failed: count("failed"),
    ...(typeof sync["lastFullPass"] === "string" ? { lastFullPass: sync["lastFullPass"] } : {}),
  };
}

/** The endpoint a user outside the host cluster can use: the external one when it exists. */
export function endpointOf(tc: RawObject): string {
  const external = tc.status?.["externalEndpoint"];
  const internal = tc.status?.["endpoint"];
  return typeof external === "string" && external !== "" ? external : typeof internal === "string" ? internal : "";
}

/** A kubectl-style age (`45s`, `12m`, `3h`, `5d`) of `timestamp` at `now`; `<unknown>` if it does not parse. */
export function age(timestamp: unknown, now: Date): string {
  const time = typeof timestamp === "string" ? Date.parse(timestamp) : Number.NaN;
  if (Number.isNaN(time)) return "<unknown>";
  const seconds = Math.max(0, Math.floor((now.getTime() - time) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/** `kubectl -o name` spelling of a TenantCluster. */
export function tenantResourceName(tc: RawObject): string {
  return `tenantcluster.${GROUP}/${tc.metadata?.name ?? ""}`;
}

/** TenantClusters printed as `format`: a table (NAME PHASE CONDITIONS ENDPOINT SYNC AGE), a List, or names. */
export function formatTenants(
  tenants: readonly RawObject[],
  format: TenantFormat,
  now: Date,
  options: { color?: boolean } = {},
): string {
  if (format === "name") return tenants.map((tc) => `${tenantResourceName(tc)}\n`).join("");
  if (format !== "table") {
    // As kubectl does by default: managedFields are bookkeeping, not what anyone asked for.
    const items = tenants.map(({ metadata, ...rest }) => {
      if (metadata === undefined) return rest;
      const { managedFields: _managed, ...meta } = metadata as Record<string, unknown>;
      return { ...rest, metadata: meta };
    });
    const list = { apiVersion: "v1", kind: "List", items };
    return format === "json" ? `${JSON.stringify(list, null, 2)}\n` : YAML.stringify(list, { lineWidth: 0 });
  }
  const rows = tenants.map((tc) => {
    const counts = syncCountsOf(tc);
    return [
      tc.metadata?.name ?? "",
      typeof tc.status?.["phase"] === "string" ? (tc.status["phase"] as string) : "Pending",
      conditionsOf(tc)
        .map((c) => `${c.type}=${c.status}`)
        .join(",") || "<none>",
      endpointOf(tc) || "<none>",
      counts === undefined ? "-" : `${counts.inSync} in sync, ${counts.skipped} skipped, ${counts.failed} failed`,
      age((tc.metadata as { creationTimestamp?: unknown } | undefined)?.creationTimestamp, now),
    ];
  });
  return renderTable(["NAME", "PHASE", "CONDITIONS", "ENDPOINT", "SYNC", "AGE"], rows, {
    color: options.color === true,
    colourColumns: [1],
  });
}
