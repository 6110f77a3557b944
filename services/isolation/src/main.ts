import { CONDITION_ISOLATION_APPLIED } from "@tenantplane/api";
import { CommonEnvSchema } from "@tenantplane/runtime";
import { consumeTenantChanges, startService, tenantToWake } from "@tenantplane/service";
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
// its tenant at once: repair takes one watch event, not one resync.
svc.cache?.onChange((event) => {
  const tenant = tenantToWake(event, ["Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange"]);
  if (tenant) wake(tenant);
});
