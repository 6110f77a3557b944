import { runConsumer, TenantChangeSchema, type ConsumerName } from "@tenantplane/messaging";
import type { Logger } from "@tenantplane/runtime";
import { warnOnRejection } from "./rejections.js";
import type { ServiceContext } from "./service.js";

/**
 * Feeds tenant-change keys from `consumer` to `reconcile`, one tenant at a time
 * per tenant, until shutdown. Rejected messages become Warning Events on their
 * tenant; the ack/nak/term choice is the messaging library's.
 */
export function consumeTenantChanges<E>(
  svc: ServiceContext<E>,
  consumer: ConsumerName,
  reconcile: (tenant: string, logger: Logger) => Promise<void>,
): void {
  const consuming = runConsumer({
    js: svc.js,
    consumer,
    schema: TenantChangeSchema,
    key: (change) => change.tenant,
    logger: svc.logger,
    metrics: svc.metrics,
    signal: svc.signal,
    onReady: svc.setReady,
    supersede: true,
    onRejected: warnOnRejection(svc.events, svc.objects, svc.name, svc.logger),
    handle: (change, ctx) => reconcile(change.tenant, ctx.logger),
  });
  svc.onShutdown({ name: "consumer", run: () => consuming });
}
