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
import { Objects } from "@tenantplane/kube";
import { reconcileIsolation } from "./reconciler.js";
import { NODES_FIELD_MANAGER, reserveNodes } from "./node-reservation.js";
import { reservationsToWake } from "./node-events.js";

const svc = await startService({
  name: "isolation",
  envSchema: CommonEnvSchema,
  consumers: ["isolation"],
  cache: ["TenantCluster", "IsolationProfile", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "Node"],
});
// NodesReserved has a field manager of its own: a status apply drops every field its manager
// no longer sends, so one manager writing two conditions in separate passes would undo one.
const statusObjects = new Objects(svc.kc, NODES_FIELD_MANAGER, { userAgent: svc.userAgent });
const { wake } = consumeTenantChanges(
  svc,
  "isolation",
  async (tenant, logger) => {
    // The reservation does not wait for the namespace, and a failure of one step never holds
    // the other back: both run, and a failure of either retries the pass.
    const failed = await reserveNodes(tenant, {
      objects: svc.objects,
      statusObjects,
      events: svc.events,
      publish: svc.publish,
      logger,
    }).then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    try {
      await reconcileIsolation(tenant, {
        objects: svc.objects,
        events: svc.events,
        publish: svc.publish,
        logger,
        namespaceWatches: svc.cache,
      });
    } catch (err) {
      // The reservation's failure is the one retried and reported (a waiting namespace would
      // otherwise hold it back a minute); the next pass runs both steps again.
      if (!failed) throw err;
    }
    if (failed) throw failed.err;
  },
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
// A Node whose labels or dedicated taints change wakes the tenants whose reservation it concerns.
svc.cache?.onChange((event) => {
  const specChange = tenantSpecChangeOf(event);
  const tenant = tenantToWake(event, ["Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange"]) ?? specChange;
  if (tenant && !(event.type === "add" && namespaceNotYet(tenant))) wake(tenant);
  for (const peer of reservationsToWake(
    event,
    specChange,
    () => svc.cache?.list(API_VERSION, KIND_TENANT_CLUSTER) ?? [],
  ))
    wake(peer);
  for (const referrer of profileReferrersOf(event, () => svc.cache?.list(API_VERSION, KIND_TENANT_CLUSTER) ?? []))
    wake(referrer);
});

// A new TenantCluster's namespace is created after it, and that creation wakes the pass that can
// do something: until then a pass would only find nothing to isolate.
function namespaceNotYet(tenant: string): boolean {
  return svc.cache?.get("v1", "Namespace", hostNamespaceFor(tenant)) === null;
}
