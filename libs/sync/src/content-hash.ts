import { createHash, createHmac } from "node:crypto";
import { canonicalJson } from "@tenantplane/api";

/** Hex digits kept from the sha256 of the canonical object: 64 bits, so a missed update is out of reach. */
export const CONTENT_HASH_LENGTH = 16;

/**
 * Stable hash of `value`'s canonical JSON (see {@link canonicalJson}): HMAC-SHA256 under
 * `key` when given, so a hash of a Secret cannot be checked against guessed values by
 * anyone without the key; plain SHA-256 otherwise.
 */
export function contentHash(value: unknown, key?: string): string {
  const digest = key === undefined ? createHash("sha256") : createHmac("sha256", key);
  return digest.update(canonicalJson(value)).digest("hex").slice(0, CONTENT_HASH_LENGTH);
}
