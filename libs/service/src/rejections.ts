import { API_VERSION, KIND_TENANT_CLUSTER } from "@tenantplane/api";
import type { EventRecorder, Objects } from "@tenantplane/kube";
import type { Rejection } from "@tenantplane/messaging";
import type { Logger } from "@tenantplane/runtime";
import { tenantRegarding } from "./tenant-status.js";

/** The tenant a `tenantplane.tenants.<tenant>.changed` subject is about, even when its payload is garbage. */
export function tenantOfSubject(subject: string): string | undefined {
  const parts = subject.split(".");
  return parts.length === 4 && parts[0] === "tenantplane" && parts[1] === "tenants" ? parts[2] : undefined;
}

/**
 * Turns a termed message into a Warning Event on the tenant it was about, so a
 * rejected message is visible with `kubectl describe`, not only in logs.
 */
export function warnOnRejection(events: EventRecorder, objects: Objects, service: string, logger: Logger) {
  return async (rejection: Rejection<unknown>): Promise<void> => {
    const tenant = tenantOfSubject(rejection.subject);
    if (!tenant) return;
    // kubectl describe matches Events by uid, so attach it; no TenantCluster, no Event.
    // Fresh, not from a cache that may still hold a TenantCluster deleted a moment ago.
    const tc = await objects.get(API_VERSION, KIND_TENANT_CLUSTER, tenant, undefined, { fresh: true });
    if (!tc) return;
    await events.record({
      regarding: tenantRegarding(tenant, tc.metadata?.uid),
      type: "Warning",
      reason: "MessageRejected",
      message: `${service} rejected a message and will not retry it: ${rejection.reason}`,
    });
    logger.debug({ tenant }, "rejection reported");
  };
}
