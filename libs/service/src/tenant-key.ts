import type { CacheEvent } from "@tenantplane/kube";

/** The few TenantCluster fields the watcher publishes on and the services wake on; the rest is each pass's business. */
export interface TenantKey {
  name: string;
  generation?: number | undefined;
  deletionTimestamp?: string | Date | undefined;
  isolationProfileRef?: string | undefined;
  syncPolicyRef?: string | undefined;
}

/** Reads a TenantKey from a raw object without trusting its shape. */
export function tenantKeyOf(obj: unknown): TenantKey | undefined {
  const o = obj as {
    metadata?: { name?: unknown; generation?: unknown; deletionTimestamp?: unknown };
    spec?: { isolationProfileRef?: { name?: unknown }; syncPolicyRef?: { name?: unknown } };
  };
  const name = o?.metadata?.name;
  if (typeof name !== "string" || name === "") return undefined;
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  return {
    name,
    generation: typeof o.metadata?.generation === "number" ? o.metadata.generation : undefined,
    deletionTimestamp: o.metadata?.deletionTimestamp as string | undefined,
    isolationProfileRef: str(o.spec?.isolationProfileRef?.name),
    syncPolicyRef: str(o.spec?.syncPolicyRef?.name),
  };
}

/**
 * Whether a TenantCluster update changes what a pass must do whatever the status says: a spec
 * change (generation) or the start of its deletion. The watcher publishes a message for these
 * only; status writes are not worth one: every service that acts on another's condition (the
 * provisioner on IsolationApplied, the sync workers on ControlPlaneReady) watches
 * TenantClusters itself and wakes on the change, and a message would cost each consumer
 * another pass per condition flip.
 */
export function isMeaningfulUpdate(before: TenantKey | undefined, after: TenantKey): boolean {
  if (!before) return true;
  return (
    before.generation !== after.generation || Boolean(before.deletionTimestamp) !== Boolean(after.deletionTimestamp)
  );
}

/**
 * The tenant whose pass a TenantCluster cache event calls for in a service that reads only its
 * spec and deletion: a new TenantCluster, a spec change, the start of its deletion, or its removal.
 *
 * The watcher's message about the same change may arrive before this service's own watch has
 * delivered it; the pass it runs then reads the cache as it was (no tenant yet, or the previous
 * spec). This event is the cache catching up, so it wakes the pass that sees the change.
 */
export function tenantSpecChangeOf(event: CacheEvent): string | undefined {
  if (event.ours || event.object.kind !== "TenantCluster") return undefined;
  const after = tenantKeyOf(event.object);
  if (!after) return undefined;
  if (event.type !== "update") return after.name;
  return isMeaningfulUpdate(tenantKeyOf(event.previous), after) ? after.name : undefined;
}

/** The tenants among `tenants` that name the IsolationProfile or SyncPolicy `name`. */
export function referrersOf(
  kind: "IsolationProfile" | "SyncPolicy",
  name: string,
  tenants: Iterable<TenantKey>,
): TenantKey[] {
  const out: TenantKey[] = [];
  for (const t of tenants)
    if ((kind === "IsolationProfile" ? t.isolationProfileRef : t.syncPolicyRef) === name) out.push(t);
  return out;
}

/**
 * The tenants whose pass an IsolationProfile cache event calls for: every cached TenantCluster
 * that names the profile. As with tenantSpecChangeOf, the watcher's message about the profile
 * can overtake this service's own watch of it. `tenants` is read only for a profile's event:
 * every other event (the bulk of them) costs no walk over the tenants.
 */
export function profileReferrersOf(event: CacheEvent, tenants: () => Iterable<unknown>): string[] {
  if (event.ours || event.object.kind !== "IsolationProfile") return [];
  const keys: TenantKey[] = [];
  for (const tenant of tenants()) {
    const key = tenantKeyOf(tenant);
    if (key) keys.push(key);
  }
  return referrersOf("IsolationProfile", event.object.metadata.name, keys).map((t) => t.name);
}
