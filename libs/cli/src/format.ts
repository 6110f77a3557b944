import type { Decision } from "@tenantplane/messaging";
import type { PlannedTarget } from "@tenantplane/sync";
import YAML from "yaml";
import { renderTable } from "./table.js";

/** The output formats of explain-sync's `-o`. */
export const OUTPUT_FORMATS = ["table", "json", "yaml"] as const;
/** One of {@link OUTPUT_FORMATS}. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** One row of explain-sync's table: a planned target, what happens to it and why. */
export interface PlanRow extends PlannedTarget {
  /** A Decision action, or `InSync` for a copy that already matches (no write). */
  action: string;
  reason: string;
  /** A cluster-scoped tenant object: shown by name alone. */
  clusterScoped?: true;
}

const COLUMNS = ["KIND", "VIRTUAL", "HOST", "HASHED", "ACTION", "REASON"] as const;

/** An aligned table of planned entries, one line each, ending with a newline; actions coloured with `color`. */
export function formatTable(entries: readonly PlanRow[], options: { color?: boolean } = {}): string {
  const rows = entries.map((e) => [
    e.kind,
    e.clusterScoped === true ? e.tenantRef.name : `${e.tenantRef.namespace}/${e.tenantRef.name}`,
    // An object that never has a host copy (a workload, a cluster-scoped object) has no host namespace.
    e.hostRef.namespace === "" ? "-" : `${e.hostRef.namespace}/${e.hostRef.name}`,
    e.hashed ? "yes" : "no",
    e.action,
    e.reason,
  ]);
  return renderTable(COLUMNS, rows, { color: options.color === true, colourColumns: [4] });
}

/** Decisions as a JSON array (pretty, newline-terminated) or a YAML sequence. */
export function formatDecisions(decisions: readonly Decision[], format: "json" | "yaml"): string {
  return format === "json" ? `${JSON.stringify(decisions, null, 2)}\n` : YAML.stringify(decisions, { lineWidth: 0 });
}

/** Any JSON value as pretty JSON or YAML, newline-terminated. */
export function formatData(value: unknown, format: "json" | "yaml"): string {
  return format === "json" ? `${JSON.stringify(value, null, 2)}\n` : YAML.stringify(value, { lineWidth: 0 });
}
