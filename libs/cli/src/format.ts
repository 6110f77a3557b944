import type { Decision } from "@tenantplane/messaging";
import type { PlannedDecisionWithObject } from "@tenantplane/sync";
import YAML from "yaml";

/** The output formats of `-o`. */
export const OUTPUT_FORMATS = ["table", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

const COLUMNS = ["KIND", "VIRTUAL", "HOST", "HASHED", "ACTION", "REASON"] as const;

/** An aligned table of planned entries, one line each, ending with a newline. */
export function formatTable(entries: readonly PlannedDecisionWithObject[]): string {
  const rows = entries.map((e) => [
    e.kind,
    `${e.tenantRef.namespace}/${e.tenantRef.name}`,
    `${e.hostRef.namespace}/${e.hostRef.name}`,
    e.hashed ? "yes" : "no",
    e.action,
    e.reason,
  ]);
  const all = [[...COLUMNS], ...rows];
  const widths = COLUMNS.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  const lines = all.map((row) =>
    row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join("  "),
  );
  return `${lines.join("\n")}\n`;
}

/** Decisions as a JSON array (pretty, newline-terminated) or a YAML sequence. */
export function formatDecisions(decisions: readonly Decision[], format: "json" | "yaml"): string {
  return format === "json" ? `${JSON.stringify(decisions, null, 2)}\n` : YAML.stringify(decisions, { lineWidth: 0 });
}
