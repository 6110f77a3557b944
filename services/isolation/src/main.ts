import { runConsumer, TenantChangeSchema } from "@tenantplane/messaging";
import { CommonEnvSchema } from "@tenantplane/runtime";
import { startService, warnOnRejection } from "@tenantplane/service";
import { reconcileIsolation } from "./reconciler.js";

const svc = await startService({ name: "isolation", envSchema: CommonEnvSchema, consumers: ["isolation"] });
const consuming = runConsumer({
  js: svc.js,
  consumer: "isolation",
  schema: TenantChangeSchema,
  key: (change) => change.tenant,
  logger: svc.logger,
  metrics: svc.metrics,
  signal: svc.signal,
  onReady: svc.setReady,
  onRejected: warnOnRejection(svc.events, svc.objects, svc.name, svc.logger),
  handle: (change, ctx) =>
    reconcileIsolation(change.tenant, { objects: svc.objects, events: svc.events, publish: svc.publish, logger: ctx.logger }),
});
svc.onShutdown({ name: "consumer", run: () => consuming });
