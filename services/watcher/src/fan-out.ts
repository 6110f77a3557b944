import type { TenantChange } from "@tenantplane/messaging";
import { referrersOf, type TenantKey } from "@tenantplane/service";

/** One change per TenantCluster that references the changed IsolationProfile or SyncPolicy. */
export function referencingChanges(
  kind: "IsolationProfile" | "SyncPolicy",
  name: string,
  tenants: Iterable<TenantKey>,
): TenantChange[] {
  const reason = kind === "IsolationProfile" ? "IsolationProfileChanged" : "SyncPolicyChanged";
  return referrersOf(kind, name, tenants)
    .map((t): TenantChange => ({ tenant: t.name, generation: t.generation, reason }))
    .sort((a, b) => a.tenant.localeCompare(b.tenant));
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
