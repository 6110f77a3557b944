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

/** The string items of a list with their indices. */
export function strings(value: unknown): Array<[number, string]> {
  if (!Array.isArray(value)) return [];
  const found: Array<[number, string]> = [];
  value.forEach((item: unknown, index) => {
    if (typeof item === "string") found.push([index, item]);
  });
  return found;
}

/** Most characters of one tenant value a reason quotes: three listed violations stay under 1 KiB of tenant text. */
export const MAX_TENANT_VALUE = 200;
/** Most characters of a tenant map key (an annotation key) a field path quotes. */
export const MAX_TENANT_KEY = 128;
const TRUNCATED = "…(truncated)";

/**
 * `value` as text for a reason, cut to `max` characters and marked, so a tenant cannot make
 * a Decision (and the Event and stream message it becomes) as large as its own object.
 */
export function tenantText(value: unknown, max = MAX_TENANT_VALUE): string {
  const text = String(value);
  return text.length <= max ? text : `${text.slice(0, max)}${TRUNCATED}`;
}

/**
 * Longest reason a plan publishes. Each tenant value in a reason is already cut
 * (`tenantText`); this bounds what adds up (one rewrite per toleration, a long list of
 * references), since every reason becomes a stream message and an Event.
 */
export const MAX_REASON = 2048;

/** `reason` cut to `MAX_REASON` characters and marked when longer. */
export function boundedReason(reason: string): string {
  return tenantText(reason, MAX_REASON);
}

/** Most violations a reason lists before summarising the rest. */
const MAX_LISTED = 3;

/** `<field>: <problem>` for each violation, at most three, then how many more. */
export function describeViolations(violations: readonly Violation[]): string {
  const listed = violations.slice(0, MAX_LISTED).map((v) => `${v.field}: ${v.problem}`);
  const rest = violations.length - listed.length;
  return rest > 0 ? `${listed.join("; ")}; and ${rest} more` : listed.join("; ");
}
