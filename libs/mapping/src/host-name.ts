import { isDnsLabel, MAX_LABEL_LENGTH } from "./dns-label.js";
import { HASH_HEX_LENGTH, HASHED_SUFFIX, identityHash } from "./internal/hash.js";

/** Where a tenant object lives in its virtual cluster. */
export interface VirtualIdentity {
  tenant: string;
  namespace: string;
  name: string;
}

/** A host object name, and whether it had to be shortened with a hash. */
export interface HostName {
  name: string;
  hashed: boolean;
}

/** The host namespace holding every synced object of `tenant`: `tp-<tenant>` (a DNS label for tenant names of ≤ 60 characters). */
export function hostNamespaceFor(tenant: string): string {
  return `tp-${tenant}`;
}

const SEPARATOR = "-x-";

/**
 * The host object name for a tenant object: `<name>-x-<namespace>-x-<tenant>` when that
 * is a DNS-1123 label that reads back unambiguously, else a sanitised prefix plus `-` and
 * a hash of the full identity. Always a DNS label, deterministic, and distinct for
 * distinct identities (plain names by construction, hashed ones with 64-bit hashes).
 */
export function hostName(id: VirtualIdentity): HostName {
  const plain = `${id.name}${SEPARATOR}${id.namespace}${SEPARATOR}${id.tenant}`;
  if (isDnsLabel(plain) && countOccurrences(plain, SEPARATOR) === 2 && !HASHED_SUFFIX.test(plain)) {
    return { name: plain, hashed: false };
  }
  return { name: hashedName(plain, id), hashed: true };
}

// Plain names are injective because exactly two separators fix where each part starts
// ("a-x" + "b" and "a" + "x-b" both spell a-x-x-b, with three); they never end like a
// hashed name does, so the two families cannot meet either.
function hashedName(plain: string, id: VirtualIdentity): string {
  const hash = identityHash([id.tenant, id.namespace, id.name]);
  const room = MAX_LABEL_LENGTH - HASH_HEX_LENGTH - 1;
  const prefix = plain
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .slice(0, room)
    .replace(/^[^a-z0-9]+/, "");
  return `${prefix === "" ? "tp" : prefix}-${hash}`;
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) count++;
  return count;
}
