import { HASH_HEX_LENGTH, HASHED_SUFFIX, identityHash } from "./internal/hash.js";

/** Longest StorageClass name: a DNS-1123 subdomain. */
export const MAX_SUBDOMAIN_LENGTH = 253;

/** Annotation on a tenant's StorageClass copy naming, verbatim, the host class it copies. */
export const ANNOTATION_STORAGE_CLASS_SOURCE = "tenantplane.io/storage-class";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** True for a DNS-1123 subdomain (the name of a StorageClass): dot-separated labels, ≤ 253 characters. */
export function isDnsSubdomain(value: string): boolean {
  return value.length <= MAX_SUBDOMAIN_LENGTH && DNS_SUBDOMAIN.test(value);
}

/**
 * The name of `tenant`'s own copy of host StorageClass `hostClass`: `tp-<tenant>.<hostClass>`
 * when that is a DNS subdomain of at most 253 characters that does not end like a hashed name,
 * else a sanitised prefix of it plus `-` and a hash of (tenant, class). Deterministic, always a
 * valid StorageClass name, and distinct for distinct (tenant, class) pairs: the tenant's label
 * `tp-<tenant>` ends at the first dot, and hashed names never meet plain ones.
 */
export function storageClassCopyName(tenant: string, hostClass: string): string {
  const plain = `tp-${tenant}.${hostClass}`;
  if (isDnsSubdomain(plain) && !HASHED_SUFFIX.test(plain)) return plain;
  const room = MAX_SUBDOMAIN_LENGTH - HASH_HEX_LENGTH - 1;
  const prefix = plain
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, "-")
    .slice(0, room)
    // Every dot-separated label must start and end with an alphanumeric.
    .replace(/\.[^a-z0-9]+/g, ".")
    .replace(/[^a-z0-9]+\./g, ".")
    .replace(/\.{2,}/g, ".")
    .replace(/[^a-z0-9]+$/, "");
  return `${prefix}-${identityHash(["storage-class", tenant, hostClass])}`;
}
