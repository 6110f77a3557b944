/** ANSI colours used in tables; applied after padding so alignment never counts escape codes. */
export type Colour = "green" | "yellow" | "red" | "grey" | "bold";

const CODES: Record<Colour, [number, number]> = {
  green: [32, 39],
  yellow: [33, 39],
  red: [31, 39],
  grey: [90, 39],
  bold: [1, 22],
};

/** `text` in `colour` when `enabled`, else unchanged. */
export function paint(text: string, colour: Colour | undefined, enabled: boolean): string {
  if (!enabled || colour === undefined) return text;
  const [open, close] = CODES[colour];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/** The colour of a Decision action or a condition status in tables. */
export function statusColour(value: string): Colour | undefined {
  switch (value) {
    case "Create":
    case "True":
    case "Ready":
    case "in sync":
      return "green";
    case "Update":
    case "Unknown":
    case "Pending":
    case "Provisioning":
      return "yellow";
    case "Delete":
    case "False":
    case "Failed":
    case "Fail":
    case "drifted":
      return "red";
    case "Skip":
      return "grey";
    default:
      return undefined;
  }
}

/**
 * An aligned table with a header line, newline-terminated; the last column is not padded.
 * Cells are single-line (newlines become spaces) so one row is one line. With `color`,
 * cells of the `colourColumns` are painted by {@link statusColour}.
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: { color?: boolean; colourColumns?: readonly number[] } = {},
): string {
  const all = [header, ...rows].map((row) => row.map((cell) => cell.replace(/[\r\n\t]+/g, " ")));
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  const lines = all.map((row, index) =>
    row
      .map((cell, column) => {
        const padded = column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0);
        const colour = index > 0 && options.colourColumns?.includes(column) ? statusColour(cell) : undefined;
        return paint(padded, colour, options.color === true);
      })
      .join("  ")
      .trimEnd(),
  );
  return `${lines.join("\n")}\n`;
}
