import { CustomObjectsApi, type KubernetesObject } from "@kubernetes/client-node";
import { API_VERSION, GROUP, KIND_TENANT_CLUSTER, PLURAL_TENANT_CLUSTERS, VERSION } from "@tenantplane/api";
import { EventRecorder, startWatch } from "@tenantplane/kube";
import { DecisionSchema, runConsumer } from "@tenantplane/messaging";
import { CommonEnvSchema } from "@tenantplane/runtime";
import { startService } from "@tenantplane/service";
import { Counter } from "prom-client";
import { z } from "zod";
import { eventForDecision } from "./event-for-decision.js";

const EnvSchema = CommonEnvSchema.extend({
  EVENT_BURST: z.coerce.number({ error: "must be a number" }).int().positive("must be positive").default(50),
  EVENTS_PER_SECOND: z.coerce.number({ error: "must be a number" }).positive("must be positive").default(5),
});

const svc = await startService({ name: "recorder", envSchema: EnvSchema, consumers: ["recorder"] });
const events = new Counter({
  name: "tenantplane_recorder_events_total",
  help: "Decisions turned into Events, by outcome (created, aggregated, dropped, orphaned).",
  labelNames: ["outcome"],
  registers: [svc.metrics.registry],
});
const recorder = new EventRecorder(svc.kc, {
  component: "tenantplane",
  instance: svc.identity,
  clusterEventsNamespace: svc.env.EVENTS_NAMESPACE,
  burst: svc.env.EVENT_BURST,
  perSecond: svc.env.EVENTS_PER_SECOND,
  logger: svc.logger,
});

// The TenantCluster cache gives each Event the uid that `kubectl describe` matches on.
const custom = svc.kc.makeApiClient(CustomObjectsApi);
const tenants = startWatch<KubernetesObject>({
  kc: svc.kc,
  path: `/apis/${GROUP}/${VERSION}/${PLURAL_TENANT_CLUSTERS}`,
  list: () => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL_TENANT_CLUSTERS }),
  onEvent: () => undefined,
  logger: svc.logger,
});
await tenants.synced;

const consuming = runConsumer({
  js: svc.js,
  consumer: "recorder",
  schema: DecisionSchema,
  key: (d) => d.tenant,
  logger: svc.logger,
  metrics: svc.metrics,
  signal: svc.signal,
  onReady: svc.setReady,
  handle: async (decision, ctx) => {
    const tc = tenants.get(decision.tenant);
    if (!tc) {
      // The TenantCluster is gone (teardown decisions outlive it): nothing to attach an Event to.
      events.inc({ outcome: "orphaned" });
      ctx.logger.debug({ decision: decision.id }, "no TenantCluster for decision");
      return;
    }
    const regarding = {
      apiVersion: API_VERSION,
      kind: KIND_TENANT_CLUSTER,
      name: decision.tenant,
      uid: tc.metadata?.uid,
    };
    const outcome = await recorder.record(eventForDecision(decision, regarding));
    events.inc({ outcome });
  },
});
svc.onShutdown({ name: "consumer", run: () => consuming });
svc.onShutdown({ name: "watch", run: () => tenants.stop() });
