import { parseTenantCluster, type TenantCluster } from "@tenantplane/api";

// Keyed by the cached object itself: a watch replaces the object on every change, so an entry
// can never answer for another version, and it goes when the cache lets go of the object.
const parsed = new WeakMap<object, { tc: TenantCluster } | { error: unknown }>();

/**
 * parseTenantCluster for a TenantCluster read from a service's cache, validated once per
 * version rather than on every pass (each watch event on the tenant's objects wakes one).
 * The answer is shared: callers treat it as read-only, as they do the cached object.
 */
export function parseCachedTenantCluster(raw: object): TenantCluster {
  let entry = parsed.get(raw);
  if (!entry) {
    try {
      entry = { tc: parseTenantCluster(raw) };
    } catch (error) {
      entry = { error };
    }
    parsed.set(raw, entry);
  }
  if ("error" in entry) throw entry.error;
  return entry.tc;
}
