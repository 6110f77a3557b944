import {
  DEFAULT_ISOLATION_MODE,
  IsolationSpecSchema,
  IsolationStatusSchema,
  type MigrationStatus,
} from "@tenantplane/api";
import type { Decision } from "@tenantplane/messaging";
import type { RawObject } from "./tenant-context.js";

/** The service whose migration driver publishes the steps of an isolation migration. */
const MIGRATION_SERVICE = "sync-worker";
/** Every Decision of the migration driver starts so (its steps, blocked Pods, refused evictions). */
const MIGRATION_REASON_PREFIX = "isolation migration";

/** One step of a migration, as the migration driver published it. */
export interface MigrationStepView {
  time: string;
  action: string;
  /** `TenantCluster <tenant>` or `Pod <namespace>/<name>`. */
  object: string;
  reason: string;
}

/** Where a tenant's Pods run (spec.isolation and status.isolation) and its last migration, step by step. */
export interface IsolationModeExplanation {
  /** status.isolation.mode, the mode in effect; Shared until the sync worker first writes it. */
  effective: string;
  /** Whether `effective` was read from status.isolation.mode (false: not written yet, Shared assumed). */
  effectiveWritten: boolean;
  /** spec.isolation.mode, the mode asked for. */
  spec: string;
  /** spec.isolation.dedicated.nodeSelector, when set. */
  nodeSelector?: Record<string, string>;
  /** status.isolation.dedicatedNodes: the host nodes reserved (tainted) for the tenant. */
  dedicatedNodes: string[];
  /** status.isolation.migration: the last change of mode and how far it got. */
  migration?: MigrationStatus;
  /** The migration driver's Decisions since the migration started, oldest first. */
  steps?: MigrationStepView[];
  /** Why the steps could not be read, when they could not. */
  stepsNote?: string;
}

/**
 * The isolation mode part of `explain tc/<tenant>` from the TenantCluster and the tenant's
 * Decisions (undefined with `decisionsNote` when they could not be read). A status that does
 * not parse is shown as not written rather than guessed at.
 */
export function isolationModeOf(
  tc: RawObject,
  decisions: readonly Decision[] | undefined,
  decisionsNote?: string,
): IsolationModeExplanation {
  const spec = IsolationSpecSchema.safeParse(tc.spec?.["isolation"] ?? {});
  const status = IsolationStatusSchema.safeParse(tc.status?.["isolation"] ?? {});
  const shown = status.success ? status.data : {};
  const selector = spec.success ? spec.data.dedicated?.nodeSelector : undefined;
  const out: IsolationModeExplanation = {
    effective: shown.mode ?? DEFAULT_ISOLATION_MODE,
    effectiveWritten: shown.mode !== undefined,
    spec: spec.success ? spec.data.mode : `invalid (${spec.error.issues[0]?.message ?? "does not parse"})`,
    ...(selector === undefined || Object.keys(selector).length === 0 ? {} : { nodeSelector: { ...selector } }),
    dedicatedNodes: [...(shown.dedicatedNodes ?? [])],
  };
  const migration = shown.migration;
  if (migration === undefined) return out;
  out.migration = migration;
  if (decisions === undefined) {
    out.stepsNote = decisionsNote ?? "not read";
    return out;
  }
  out.steps = migrationSteps(decisions, migration.startedAt);
  return out;
}

/** The migration driver's Decisions at or after `startedAt` (all of them without it), oldest first. */
export function migrationSteps(decisions: readonly Decision[], startedAt: string | undefined): MigrationStepView[] {
  const since = startedAt === undefined ? Number.NEGATIVE_INFINITY : Date.parse(startedAt);
  return decisions
    .filter(
      (d) =>
        d.service === MIGRATION_SERVICE && d.reason.startsWith(MIGRATION_REASON_PREFIX) && Date.parse(d.time) >= since,
    )
    .map((d) => ({
      time: d.time,
      action: d.action,
      object:
        d.tenantRef.namespace === ""
          ? `${d.kind} ${d.tenantRef.name}`
          : `${d.kind} ${d.tenantRef.namespace}/${d.tenantRef.name}`,
      reason: d.reason,
    }));
}

/** The "Isolation mode" section of `explain tc/<tenant>`'s text output. */
export function formatIsolationMode(e: IsolationModeExplanation): string {
  const selector =
    e.nodeSelector === undefined
      ? ""
      : ` (dedicated nodeSelector ${Object.entries(e.nodeSelector)
          .map(([k, v]) => `${k}=${v}`)
          .join(",")})`;
  const lines = [
    "Isolation mode:",
    `  effective:       ${e.effective}${e.effectiveWritten ? "" : " (status.isolation.mode not written yet by the sync worker)"}`,
    `  spec:            ${e.spec}${selector}`,
    `  dedicated nodes: ${e.dedicatedNodes.length === 0 ? "none" : e.dedicatedNodes.join(", ")}`,
  ];
  const m = e.migration;
  if (m === undefined) {
    lines.push("  migration:       none recorded");
    return `${lines.join("\n")}\n`;
  }
  lines.push(
    `  migration:       ${m.from} → ${m.to}, ${m.phase}`,
    `    pods:          ${m.moved ?? 0} moved (running in the new placement), ${m.left ?? 0} left`,
  );
  if (m.blocked !== undefined && m.blocked.length > 0) {
    lines.push("    blocked:");
    for (const b of m.blocked) lines.push(`      Pod ${b.namespace}/${b.name}: ${b.reason}`);
  }
  lines.push(`    started:       ${m.startedAt ?? "(not recorded)"}`);
  lines.push(`    finished:      ${m.finishedAt ?? (m.phase === "Complete" ? "(not recorded)" : "not yet")}`);
  lines.push("    steps:");
  if (e.steps === undefined) lines.push(`      Decisions ${e.stepsNote ?? "not read"}`);
  else if (e.steps.length === 0) lines.push("      none in the DECISIONS stream");
  for (const s of e.steps ?? []) lines.push(`      ${s.time}  ${s.action.padEnd(6)}  ${s.object}: ${s.reason}`);
  return `${lines.join("\n")}\n`;
}
