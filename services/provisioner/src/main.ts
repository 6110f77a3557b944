import { publishDecision, runConsumer, stampDecision, TenantChangeSchema } from "@tenantplane/messaging";
import { CommonEnvSchema } from "@tenantplane/runtime";
import { startService, warnOnRejection } from "@tenantplane/service";
import { reconcileTenant } from "./reconciler.js";

const svc = await startService({ name: "provisioner", envSchema: CommonEnvSchema, consumers: ["provisioner"] });
const deps = {
  objects: svc.objects,
  events: svc.events,
  logger: svc.logger,
  publish: async (planned: Parameters<typeof stampDecision>[0]) => {
    const decision = stampDecision(planned, svc.name);
    await publishDecision(svc.js, decision);
    svc.metrics.decisions.inc({ action: decision.action });
  },
};
const consuming = runConsumer({
  js: svc.js,
  consumer: "provisioner",
  schema: TenantChangeSchema,
  key: (change) => change.tenant,
  logger: svc.logger,
  metrics: svc.metrics,
  signal: svc.signal,
  onReady: svc.setReady,
  onRejected: warnOnRejection(svc.events, svc.objects, svc.name, svc.logger),
  handle: (change, ctx) => {
    ctx.logger.debug({ reason: change.reason }, "reconciling");
    return reconcileTenant(change.tenant, { ...deps, logger: ctx.logger });
  },
});
svc.onShutdown({ name: "consumer", run: () => consuming });
