import { isJsonObject, type JsonObject } from "./json.js";

/** One reason an object may not reach the host: the field, and the rule it breaks. */
export interface Violation {
  field: string;
  problem: string;
}

/** `parent[key]` when `parent` is an object; checks read leniently and leave shape errors to the translators. */
export function read(parent: unknown, key: string): unknown {
  return isJsonObject(parent) ? parent[key] : undefined;
}

/** The object items of a list with their indices; anything that is not a list has none. */
export function items(value: unknown): Array<[JsonObject, number]> {
  if (!Array.isArray(value)) return [];
  const found: Array<[JsonObject, number]> = [];
  value.forEach((item: unknown, index) => {
    if (isJsonObject(item)) found.push([item, index]);
  });
  return found;
}

/** The containers the host would run (ephemeral containers are never synced), with their field paths. */
export function podContainers(spec: unknown): Array<[JsonObject, string]> {
  const found: Array<[JsonObject, string]> = [];
  for (const list of ["initContainers", "containers"]) {
    for (const [container, index] of items(read(spec, list))) found.push([container, `spec.${list}[${index}]`]);
  }
  return found;
}

/** Most violations a reason lists before summarising the rest. */
const MAX_LISTED = 3;

/** `<field>: <problem>` for each violation, at most three, then how many more. */
export function describeViolations(violations: readonly Violation[]): string {
  const listed = violations.slice(0, MAX_LISTED).map((v) => `${v.field}: ${v.problem}`);
  const rest = violations.length - listed.length;
  return rest > 0 ? `${listed.join("; ")}; and ${rest} more` : listed.join("; ");
}
