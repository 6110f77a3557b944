import { CommonEnvSchema } from "@tenantplane/runtime";
import { API_VERSION, CONDITION_ISOLATION_APPLIED, KIND_TENANT_CLUSTER } from "@tenantplane/api";
import {
  consumeTenantChanges,
  profileReferrersOf,
  startService,
  tenantSpecChangeOf,
  tenantToWake,
} from "@tenantplane/service";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { reconcileIsolation } from "./reconciler.js";

const svc = await startService({
  name: "isolation",
  envSchema: CommonEnvSchema,
  consumers: ["isolation"],
  cache: ["TenantCluster", "IsolationProfile", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange"],
});
const { wake } = consumeTenantChanges(
  svc,
  "isolation",
  (tenant, logger) =>
    reconcileIsolation(tenant, {
      objects: svc.objects,
      events: svc.events,
      publish: svc.publish,
      logger,
      namespaceWatches: svc.cache,
    }),
  {
    condition: CONDITION_ISOLATION_APPLIED,
    fix: (tenant) =>
      `Change the IsolationProfile named by spec.isolationProfileRef of TenantCluster ${tenant} so the API server accepts it.`,
  },
);
// A new host namespace, and any hand edit or deletion of an isolation object, wakes a pass for
// its tenant at once: repair takes one watch event, not one resync. So does this service's own
// watch catching up with a TenantCluster or IsolationProfile change whose message came first
// (the pass it ran read the cache as it was); status writes to TenantClusters wake nothing.
svc.cache?.onChange((event) => {
  const tenant =
    tenantToWake(event, ["Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange"]) ?? tenantSpecChangeOf(event);
  if (tenant && !(event.type === "add" && namespaceNotYet(tenant))) wake(tenant);
  for (const referrer of profileReferrersOf(event, () => svc.cache?.list(API_VERSION, KIND_TENANT_CLUSTER) ?? []))
    wake(referrer);
});

// A new TenantCluster's namespace is created after it, and that creation wakes the pass that can
// do something: until then a pass would only find nothing to isolate.
function namespaceNotYet(tenant: string): boolean {
  return svc.cache?.get("v1", "Namespace", hostNamespaceFor(tenant)) === null;
}
