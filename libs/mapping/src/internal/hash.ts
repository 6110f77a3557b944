import { createHash } from "node:crypto";

/**
 * Length in hex digits of the identity hash appended to shortened names and values.
 * 16 hex digits are 64 bits: by the birthday bound, n names collide with probability
 * about n²/2⁶⁵, i.e. 3·10⁻¹⁰ for 100,000 names in one host namespace (10 digits would
 * give 0.5 %). Only the hash separates names that share a truncated prefix, so it must
 * carry the whole collision budget on its own.
 */
export const HASH_HEX_LENGTH = 16;

/** Lowercase hex digest of `parts`; JSON array encoding keeps ("a-b","c") apart from ("a","b-c"). */
export function identityHash(parts: readonly string[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, HASH_HEX_LENGTH);
}

/** Matches a string ending the way every shortened output ends: `-` and the identity hash. */
export const HASHED_SUFFIX = new RegExp(`-[0-9a-f]{${HASH_HEX_LENGTH}}$`);
