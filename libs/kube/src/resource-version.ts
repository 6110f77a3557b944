/**
 * Whether resourceVersion `a` is known to be older than `b`. Versions are opaque to clients,
 * but the API servers tenantplane talks to (etcd, and k3s's kine) hand out increasing integers;
 * anything else is never "older", so a caller that waits for a newer version stops waiting.
 */
export function olderVersion(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return a.length === b.length ? a < b : a.length < b.length;
}
