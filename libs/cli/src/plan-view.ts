import type { PlannedDecisionWithObject, PlannedTarget } from "@tenantplane/sync";
import { CLUSTER_SCOPED_REASON } from "./cluster-scoped.js";
import type { TemplateObject, TemplateProblem, WorkloadRef } from "./workload-pods.js";
import { WORKLOAD_KINDS } from "./workload-pods.js";

/** Where a predicted row stands for the objects a workload's controller makes (explain-sync's `template` field). */
export interface TemplateOrigin extends WorkloadRef {
  /** The workload's field the object is made from: `spec.template`, `spec.volumeClaimTemplates[0]`, ... */
  field: string;
}

/** A planned entry as explain-sync shows it: for a template stand-in, the workload it stands for. */
export type ViewEntry = PlannedDecisionWithObject & { template?: TemplateOrigin };

/** The workload controller of each {@link WORKLOAD_KINDS} kind, as its documentation names it. */
function controllerOf(kind: string): string {
  return kind === "CronJob" ? "CronJob controller (through a Job)" : `${kind} controller`;
}

/**
 * Rewrites the rows of objects that are never synced for a reason the planner cannot know:
 * a cluster-scoped object (kind in `clusterScoped`) is shown without a namespace or host
 * object, and a workload's own row says its Pods are predicted by its template rows.
 */
export function relabel<
  T extends PlannedTarget & { action: string; reason: string; malformed?: true; clusterScoped?: true },
>(entries: readonly T[], clusterScoped: ReadonlySet<string>, unreadable: readonly TemplateProblem[] = []): T[] {
  return entries.map((entry) => {
    if (entry.action !== "Skip") return entry;
    const problem = unreadable.find((p) => sameWorkload(p.workload, entry));
    const noHost = { namespace: "", name: entry.tenantRef.name };
    if (problem !== undefined)
      return { ...entry, hostRef: noHost, hashed: false, reason: problem.problem, malformed: true };
    if (clusterScoped.has(entry.kind)) {
      const ref = { namespace: "", name: entry.tenantRef.name };
      return {
        ...entry,
        tenantRef: ref,
        hostRef: ref,
        hashed: false,
        reason: CLUSTER_SCOPED_REASON,
        clusterScoped: true,
      };
    }
    if (WORKLOAD_KINDS.includes(entry.kind) && entry.reason.startsWith(`kind ${entry.kind} not in SyncPolicy`)) {
      const field = entry.kind === "CronJob" ? "spec.jobTemplate.spec.template" : "spec.template";
      return {
        ...entry,
        hostRef: noHost,
        hashed: false,
        reason: `not synced itself: the ${controllerOf(entry.kind)} in the tenant makes its Pods from ${field}; the rows "from ${field} of ${entry.kind} ${entry.tenantRef.namespace}/${entry.tenantRef.name}" predict them`,
      };
    }
    return entry;
  });
}

function sameWorkload(workload: WorkloadRef, row: PlannedTarget): boolean {
  return (
    workload.kind === row.kind && workload.namespace === row.tenantRef.namespace && workload.name === row.tenantRef.name
  );
}

/**
 * `rows` with each workload's template rows right after the workload's own row; template
 * rows whose workload has no row come last.
 */
export function withTemplateRows<T extends PlannedTarget>(
  rows: readonly T[],
  templateRows: ReadonlyArray<T & { template: TemplateOrigin }>,
): T[] {
  const placed = new Set<T>();
  const out: T[] = [];
  for (const row of rows) {
    out.push(row);
    for (const t of templateRows) {
      if (!placed.has(t) && sameWorkload(t.template, row)) {
        out.push(t);
        placed.add(t);
      }
    }
  }
  return [...out, ...templateRows.filter((t) => !placed.has(t))];
}

/**
 * The rows of the plan of template stand-ins, each marked with the workload it stands for and
 * its reason prefixed to say so. Rows of other objects are left out.
 */
export function markTemplates<T extends PlannedTarget & { action: string; reason: string }>(
  rows: readonly T[],
  origins: readonly TemplateObject[],
): Array<T & { template: TemplateOrigin }> {
  const byKey = new Map(
    origins.map((o) => {
      const metadata = o.object["metadata"] as { name: string; namespace: string };
      return [`${String(o.object["kind"])}/${metadata.namespace}/${metadata.name}`, o] as const;
    }),
  );
  const out: Array<T & { template: TemplateOrigin }> = [];
  for (const row of rows) {
    const origin = byKey.get(`${row.kind}/${row.tenantRef.namespace}/${row.tenantRef.name}`);
    if (origin === undefined) continue;
    const { kind, namespace, name } = origin.workload;
    const stands =
      row.kind !== "Pod" ? "its first Pod's claim" : kind === "StatefulSet" ? "its first Pod" : "each of its Pods";
    out.push({
      ...row,
      template: { ...origin.workload, field: origin.field },
      reason: `from ${origin.field} of ${kind} ${namespace}/${name} (${stands}): ${row.reason}`,
    });
  }
  return out;
}
