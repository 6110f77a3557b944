import type { TenantChange } from "@tenantplane/messaging";

/** The few TenantCluster fields the watcher looks at; everything else is the consumers' business. */
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
 * Whether a TenantCluster update is worth a message: a spec change (generation) or the start
 * of its deletion. Status writes are not: every service that acts on another's condition (the
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

/** One change per TenantCluster that references the changed IsolationProfile or SyncPolicy. */
export function referencingChanges(
  kind: "IsolationProfile" | "SyncPolicy",
  name: string,
  tenants: Iterable<TenantKey>,
): TenantChange[] {
  const out: TenantChange[] = [];
  for (const t of tenants) {
    const ref = kind === "IsolationProfile" ? t.isolationProfileRef : t.syncPolicyRef;
    if (ref !== name) continue;
    out.push({
      tenant: t.name,
      generation: t.generation,
      reason: kind === "IsolationProfile" ? "IsolationProfileChanged" : "SyncPolicyChanged",
    });
  }
  return out.sort((a, b) => a.tenant.localeCompare(b.tenant));
}

/**
 * Tells a profile or policy watch's initial list apart from real changes: the
 * objects listed at start say nothing new (every tenant is published on its own
 * initial add), while a profile created later may be one a tenant was waiting for.
 * Open it once the watch's first list has been delivered.
 */
export class InitialListGate {
  private opened = false;

  open(): void {
    this.opened = true;
  }

  accepts(type: "add" | "update" | "delete"): boolean {
    return this.opened || type !== "add";
  }
}
