import { createHash } from "node:crypto";

/** Hex digits kept from the sha256 of the canonical object: 64 bits, so a missed update is out of reach. */
export const CONTENT_HASH_LENGTH = 16;

/** JSON with object keys sorted at every depth and `undefined` members dropped, so equal content prints equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/** Stable hash of `value`'s canonical JSON (see {@link canonicalJson}). */
export function contentHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, CONTENT_HASH_LENGTH);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return sorted;
}
