import type { CacheEvent } from "@tenantplane/kube";
import { dedicatedTenantsOf, nodeViewOf, reservationViewChanged, tenantsAffectedByNode } from "@tenantplane/isolation";

/**
 * The tenants whose node reservation a cache event may change, besides the tenant the event is
 * about: for a Node, the tenants its dedicated taints name and the Dedicated tenants whose
 * selector matches it, before or after (a relabelled node joins or leaves at once, without a
 * resync); for a spec change or deletion (`specChange`) of a TenantCluster that is or was
 * Dedicated, every Dedicated tenant, since a node it gave up or stopped contesting may now be
 * another's. A new Dedicated TenantCluster wakes itself too: the caller holds a new tenant's
 * pass back until its namespace exists, but the reservation does not wait for the namespace, and
 * when the watcher's message overtook this service's watch, that message's pass found no tenant
 * and nothing else would wake it. `tenants` is read only for those events.
 */
export function reservationsToWake(
  event: CacheEvent,
  specChange: string | undefined,
  tenants: () => readonly unknown[],
): string[] {
  if (event.object.kind === "Node") {
    const before =
      event.type === "add" ? undefined : nodeViewOf(event.type === "delete" ? event.object : event.previous);
    const after = event.type === "delete" ? undefined : nodeViewOf(event.object);
    // A heartbeat or status update (most Node events) costs no walk over the tenants.
    if ((!before && !after) || !reservationViewChanged(before, after)) return [];
    return tenantsAffectedByNode(before, after, dedicatedTenantsOf(tenants()));
  }
  if (event.object.kind !== "TenantCluster" || !specChange) return [];
  const concerned = [event.previous, event.object].some((tc) => dedicatedTenantsOf([tc]).length > 0);
  if (!concerned) return [];
  return dedicatedTenantsOf(tenants())
    .map((t) => t.name)
    .filter((name) => name !== specChange || event.type === "add");
}
