import type { Decision } from "@tenantplane/messaging";
import { paint, renderTable, statusColour } from "./table.js";

/** The output formats of `decisions`. */
export const DECISION_FORMATS = ["table", "json"] as const;
/** One of {@link DECISION_FORMATS}. */
export type DecisionFormat = (typeof DECISION_FORMATS)[number];

/** Column headers of the decisions table. */
export const DECISION_COLUMNS = ["TIME", "TENANT", "ACTION", "KIND", "HOST", "VIRTUAL", "SERVICE", "REASON"] as const;

/** Widths of every column but the last in `--follow` mode, where rows print as they arrive. */
const FOLLOW_WIDTHS = [20, 14, 6, 21, 40, 28, 12] as const;

function cells(d: Decision): string[] {
  return [
    d.time.replace(/\.\d+(?=Z$)/, ""),
    d.tenant,
    d.action,
    d.kind,
    `${d.hostRef.namespace}/${d.hostRef.name}`,
    `${d.tenantRef.namespace}/${d.tenantRef.name}`,
    d.service,
    d.reason,
  ];
}

/** A batch of Decisions as an aligned table with a header. */
export function formatDecisionTable(decisions: readonly Decision[], options: { color?: boolean } = {}): string {
  return renderTable(DECISION_COLUMNS, decisions.map(cells), { color: options.color === true, colourColumns: [2] });
}

/** One Decision as a JSON line: the published message, one object per line (JSON Lines). */
export function formatDecisionJson(decision: Decision): string {
  return `${JSON.stringify(decision)}\n`;
}

/** The header line of the `--follow` table. */
export function followHeader(): string {
  return fixedLine([...DECISION_COLUMNS], false);
}

/** One Decision as a `--follow` table line with fixed column widths (a long cell pushes the rest right). */
export function followLine(decision: Decision, options: { color?: boolean } = {}): string {
  return fixedLine(cells(decision), options.color === true, 2);
}

function fixedLine(row: string[], color: boolean, colourColumn?: number): string {
  const text = row
    .map((cell, column) => {
      const flat = cell.replace(/[\r\n\t]+/g, " ");
      const width = FOLLOW_WIDTHS[column];
      const padded = width === undefined ? flat : flat.padEnd(width);
      return column === colourColumn ? paint(padded, statusColour(flat), color) : padded;
    })
    .join("  ")
    .trimEnd();
  return `${text}\n`;
}
