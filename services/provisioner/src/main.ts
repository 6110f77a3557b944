import { API_VERSION, CONDITION_CONTROL_PLANE_READY, KIND_TENANT_CLUSTER } from "@tenantplane/api";
import { consumeTenantChanges, profileReferrersOf, startService, tenantToWake } from "@tenantplane/service";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { ProvisionerEnvSchema } from "./config.js";
import { STATEFULSET_NAME, endpointFor } from "./control-plane.js";
import { podChangeMatters } from "./pod-wake.js";
import { reconcileTenant } from "./reconciler.js";

const svc = await startService({
  name: "provisioner",
  envSchema: ProvisionerEnvSchema,
  consumers: ["provisioner"],
  // The RoleBindings only when it makes them: without grants it neither reads nor may read them.
  cache: (env) => [
    "TenantCluster",
    "IsolationProfile",
    "Namespace",
    "Secret",
    "Service",
    "StatefulSet",
    "ConfigMap",
    "Deployment",
    "ControlPlanePod",
    ...(env.TENANT_ROLE_BINDINGS.length > 0 ? (["RoleBinding"] as const) : []),
  ],
});
const roleBindings = svc.env.TENANT_ROLE_BINDINGS;
if (roleBindings.length === 0) {
  svc.logger.info(
    "TENANT_ROLE_BINDINGS is unset: no RoleBindings are created in tenant namespaces, so every service needs its rights there cluster-wide",
  );
} else {
  svc.logger.info({ roleBindings }, "binding these ClusterRoles in every tenant namespace");
}
// One timer per tenant at most, the earliest asked for; the pass it runs re-reads everything,
// like any other wake, and asks again for any later moment (a join token's rotation, days away).
const wakeTimers = new Map<string, { timer: NodeJS.Timeout; due: number }>();
const MAX_TIMER_MS = 2 ** 31 - 1;
function wakeAfter(tenant: string, ms: number): void {
  const delay = Math.min(Math.max(ms, 0), MAX_TIMER_MS);
  const due = Date.now() + delay;
  const held = wakeTimers.get(tenant);
  if (held && held.due <= due) return;
  if (held) clearTimeout(held.timer);
  const timer = setTimeout(() => {
    wakeTimers.delete(tenant);
    wake(tenant);
  }, delay);
  timer.unref();
  wakeTimers.set(tenant, { timer, due });
}
const { wake } = consumeTenantChanges(
  svc,
  "provisioner",
  (tenant, logger) =>
    reconcileTenant(tenant, {
      objects: svc.objects,
      events: svc.events,
      publish: svc.publish,
      logger,
      adminCertLifetimeMs: svc.env.ADMIN_CERT_LIFETIME,
      roleBindings,
      dnsImage: svc.env.TENANT_DNS_IMAGE,
      namespaceWatches: svc.cache,
      wakeAfter,
      wake: (t) => wake(t),
    }),
  {
    condition: CONDITION_CONTROL_PLANE_READY,
    fix: (tenant) => `Change spec.controlPlane of TenantCluster ${tenant} so the API server accepts it.`,
    // A tenant's first report may be a refusal (its status waits for isolation's first report).
    fields: (tenant) => ({ hostNamespace: hostNamespaceFor(tenant), endpoint: endpointFor(tenant) }),
  },
);
// Readiness, load-balancer addresses, the isolation service's condition and hand edits arrive
// as watch events: each wakes a pass for its tenant, so nothing is polled.
svc.cache?.onChange((event) => {
  // A deleted tenant's pass would find nothing to do: its timer goes with it.
  if (event.type === "delete" && event.object.kind === "TenantCluster") {
    clearTimeout(wakeTimers.get(event.object.metadata.name)?.timer);
    wakeTimers.delete(event.object.metadata.name);
  }
  const tenant = tenantToWake(event, [
    "TenantCluster",
    "Namespace",
    "Secret",
    "Service",
    "StatefulSet",
    "ControlPlanePod",
    "RoleBinding",
  ]);
  // A profile change the watcher's message announced may reach this cache after the pass that
  // message ran (which then checked the control plane against the profile as it was).
  for (const referrer of profileReferrersOf(event, () => svc.cache?.list(API_VERSION, KIND_TENANT_CLUSTER) ?? []))
    wake(referrer);
  if (!tenant) return;
  if (event.object.kind === "Pod") {
    const sts = svc.cache?.get("apps/v1", "StatefulSet", STATEFULSET_NAME, hostNamespaceFor(tenant));
    if (!podChangeMatters(event.type, sts, Date.now())) return;
  }
  wake(tenant);
});
