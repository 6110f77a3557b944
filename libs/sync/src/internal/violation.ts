import { boundedText, MAX_DECISION_TEXT } from "@tenantplane/messaging";
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

/**
 * Most bytes of one tenant value a reason quotes, the mark included: three listed violations
 * leave room for each other and for the count of the rest within the reason's 1 KiB.
 */
export const MAX_TENANT_VALUE = 200;
/** Most bytes of a tenant map key (an annotation key) a field path quotes, the mark included. */
export const MAX_TENANT_KEY = 128;

/**
 * `value` as text for a reason, cut to `max` bytes and marked, so one tenant value cannot
 * crowd out the rest of a reason.
 */
export function tenantText(value: unknown, max = MAX_TENANT_VALUE): string {
  return boundedText(String(value), max);
}

/**
 * Longest reason a plan gives, in bytes: a Decision's bound (MAX_DECISION_TEXT, 1 KiB), so a
 * planned reason is the reason published, and `explain-sync` predicts it as the worker says it.
 */
export const MAX_REASON = MAX_DECISION_TEXT;

/** `reason` cut to `MAX_REASON` bytes and marked when longer. */
export function boundedReason(reason: string): string {
  return boundedText(reason, MAX_REASON);
}

/** Most violations a reason lists before summarising the rest. */
const MAX_LISTED = 3;
/** Bytes the listed violations may take, so the count of the rest survives in a bounded reason. */
const MAX_LISTING = 768;

/**
 * `<field>: <problem>` for each violation, at most three and as many as fit MAX_LISTING (the
 * first always), then how many more.
 */
export function describeViolations(violations: readonly Violation[]): string {
  const listed: string[] = [];
  let bytes = 0;
  for (const v of violations.slice(0, MAX_LISTED)) {
    const text = `${v.field}: ${v.problem}`;
    bytes += Buffer.byteLength(text) + 2;
    if (listed.length > 0 && bytes > MAX_LISTING) break;
    listed.push(text);
  }
  const rest = violations.length - listed.length;
  return rest > 0 ? `${listed.join("; ")}; and ${rest} more` : listed.join("; ");
}
