import type { Decision } from "@tenantplane/messaging";
import type { NotSynced } from "./decision-history.js";
import { formatIsolationMode, type IsolationModeExplanation } from "./explain-isolation.js";
import { OBJECT_NAMES } from "@tenantplane/isolation";
import YAML from "yaml";
import { renderTable } from "./table.js";

/** What `explain <kind>/<name>` found out about one host object; every part says why. */
export interface ObjectExplanation {
  kind: string;
  namespace: string;
  name: string;
  /**
   * `sync-copy`, `isolation`, `control-plane` (tenantplane's own), `foreign`, or `none`: a
   * tenant object (named with --tenant) that has no host copy.
   */
  owner: "sync-copy" | "isolation" | "control-plane" | "foreign" | "none";
  /** One line on who owns it and why that is known. */
  summary: string;
  /** For sync copies: where it comes from. */
  source?: { tenant: string; namespace: string; name: string; kind: string };
  /** The SyncPolicy rule (or isolation profile field) that put it there. */
  rule?: string;
  /** The Decision of the write that made the copy what it is, as recorded on the object itself. */
  madeBy?: { id: string; time: string; action: string; reason: string };
  /** Content hash state. */
  contentHash?: {
    state: "in sync" | "drifted" | "unchecked" | "source gone" | "other";
    recorded?: string;
    desired?: string;
    detail: string;
  };
  /** For a tenant object without a host copy: what the sync worker does with it now, and why. */
  plannedNow?: string;
  /** The last Decisions about it, oldest first. */
  decisions?: Decision[];
  /** Why the Decisions could not be read, when they could not. */
  decisionsNote?: string;
}

/** `explain`'s text output for one host object. */
export function formatObjectExplanation(e: ObjectExplanation): string {
  const lines = [`${e.kind} ${e.namespace}/${e.name}`, `  owner:        ${e.summary}`];
  if (e.source)
    lines.push(`  source:       tenant ${e.source.tenant}, ${e.source.kind} ${e.source.namespace}/${e.source.name}`);
  if (e.rule) lines.push(`  rule:         ${e.rule}`);
  if (e.madeBy)
    lines.push(`  made by:      ${e.madeBy.action} at ${e.madeBy.time} (Decision ${e.madeBy.id}): ${e.madeBy.reason}`);
  if (e.contentHash) lines.push(`  content hash: ${e.contentHash.state}: ${e.contentHash.detail}`);
  if (e.plannedNow) lines.push(`  planned now:  ${e.plannedNow}`);
  if (e.decisions !== undefined || e.decisionsNote !== undefined) {
    lines.push("  decisions:");
    if (e.decisionsNote !== undefined) lines.push(`    ${e.decisionsNote}`);
    else if (e.decisions?.length === 0) lines.push("    none recorded in the DECISIONS stream");
    for (const d of e.decisions ?? []) lines.push(`    ${d.time}  ${d.action.padEnd(6)}  ${d.service}: ${d.reason}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The profile field that produces each isolation object, by object name. */
export const ISOLATION_FIELDS: Readonly<Record<string, string>> = {
  [OBJECT_NAMES.defaultDeny]: "spec.network.defaultDeny",
  [OBJECT_NAMES.allowControlPlane]:
    "spec.network.defaultDeny (keeps the tenant API reachable on 6443 while traffic is denied)",
  [OBJECT_NAMES.allowControlPlanePeers]:
    "spec.network.defaultDeny (lets workloads and the tenant API reach each other)",
  [OBJECT_NAMES.allowDns]: "spec.network.allow.dns",
  [OBJECT_NAMES.allowSameNamespace]: "spec.network.allow.sameNamespace",
  [OBJECT_NAMES.allowNamespaces]: "spec.network.allow.namespaces",
  [OBJECT_NAMES.allowCidrs]: "spec.network.allow.cidrs",
  [OBJECT_NAMES.quota]: "spec.resourceQuota",
  [OBJECT_NAMES.limits]: "spec.limitRange",
};

/** The profile field behind the isolation object `name`, or a note that the name is unknown. */
export function isolationField(name: string): string {
  return (
    ISOLATION_FIELDS[name] ??
    "no field of the current compiler (left over from an older version; the isolation service removes it)"
  );
}

/** What `explain tc/<tenant>` shows. */
export interface TenantExplanation {
  name: string;
  phase: string;
  endpoint: string;
  hostNamespace: string;
  profile: string;
  policy: string;
  conditions: Array<{ type: string; status: string; reason: string; message: string }>;
  isolation: Array<{ kind: string; name: string; field: string; profile: string }>;
  /** Where its Pods run (spec and status.isolation) and its last migration, step by step. */
  isolationMode?: IsolationModeExplanation;
  podSecurity: Record<string, string>;
  sync?: { inSync: number; skipped: number; failed: number; lastFullPass?: string };
  /** Every object whose latest Decision is a Skip or a Fail, with its reason. */
  notSynced?: NotSynced[];
  /** Why the Decisions could not be read, when they could not. */
  notSyncedNote?: string;
  notes: string[];
}

/** `explain tc/<tenant>`'s text output. */
export function formatTenantExplanation(e: TenantExplanation, options: { color?: boolean } = {}): string {
  const out = [
    `TenantCluster ${e.name}`,
    `  phase:          ${e.phase}`,
    `  endpoint:       ${e.endpoint || "<none yet>"}`,
    `  host namespace: ${e.hostNamespace}`,
    `  profile:        ${e.profile}`,
    `  sync policy:    ${e.policy}`,
    e.sync === undefined
      ? "  sync:           no counts yet (status.sync is written by the sync worker)"
      : `  sync:           ${e.sync.inSync} in sync, ${e.sync.skipped} skipped, ${e.sync.failed} failed${e.sync.lastFullPass ? ` (last full pass ${e.sync.lastFullPass})` : ""}`,
    "",
    "Conditions:",
  ].join("\n");
  const conditions =
    e.conditions.length === 0
      ? "  none yet\n"
      : indent(
          renderTable(
            ["TYPE", "STATUS", "REASON", "MESSAGE"],
            e.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
            { color: options.color === true, colourColumns: [1] },
          ),
        );
  const labels = Object.entries(e.podSecurity);
  const isolationRows = [
    ...(labels.length > 0
      ? [
          [
            "Namespace",
            e.hostNamespace,
            e.profile.replace(/^IsolationProfile /, ""),
            `spec.podSecurity (labels ${labels.map(([k, v]) => `${k.replace("pod-security.kubernetes.io/", "")}=${v}`).join(",")})`,
          ],
        ]
      : []),
    ...e.isolation.map((i) => [i.kind, i.name, i.profile, i.field]),
  ];
  const isolation =
    isolationRows.length === 0
      ? "  none found\n"
      : indent(renderTable(["KIND", "NAME", "PROFILE", "PRODUCED BY"], isolationRows));
  const notes = e.notes.map((n) => `note: ${n}\n`).join("");
  const mode = e.isolationMode === undefined ? "" : `\n${formatIsolationMode(e.isolationMode)}`;
  return `${out}\n${conditions}${mode}\nIsolation in ${e.hostNamespace}:\n${isolation}${formatNotSynced(e, options)}${notes}`;
}

/** The "Not synced" section of `explain tc/<tenant>`: one row per object whose latest Decision is a Skip or a Fail. */
function formatNotSynced(e: TenantExplanation, options: { color?: boolean }): string {
  const title = "Not synced (each object's latest Decision is a Skip or a Fail):\n";
  if (e.notSynced === undefined) return `${title}  Decisions ${e.notSyncedNote ?? "not read"}\n`;
  if (e.notSynced.length === 0) return `${title}  none: every object's latest Decision is a write\n`;
  const rows = e.notSynced.map((n) => [
    n.kind,
    n.tenantRef.namespace === "" ? n.tenantRef.name : `${n.tenantRef.namespace}/${n.tenantRef.name}`,
    n.action,
    n.time,
    n.reason,
  ]);
  return `${title}${indent(renderTable(["KIND", "OBJECT", "ACTION", "SINCE", "REASON"], rows, { color: options.color === true, colourColumns: [2] }))}`;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => (line === "" ? line : `  ${line}`))
    .join("\n");
}

/** Any explanation as JSON or YAML. */
export function formatExplanationData(value: ObjectExplanation | TenantExplanation, format: "json" | "yaml"): string {
  return format === "json" ? `${JSON.stringify(value, null, 2)}\n` : YAML.stringify(value, { lineWidth: 0 });
}
