import { API_VERSION, GROUP, KIND_TENANT_CLUSTER, PLURAL_TENANT_CLUSTERS, VERSION } from "@tenantplane/api";
import {
  AggregatedEvents,
  JsonClient,
  jsonEventSink,
  startListWatch,
  TokenBucket,
  type RawObject,
} from "@tenantplane/kube";
import { DecisionSchema, runConsumer, type Decision } from "@tenantplane/messaging";
import { CommonEnvSchema, TransientError, describe as describeError, httpStatusOf } from "@tenantplane/runtime";
import { startService } from "@tenantplane/service";
import { Counter } from "prom-client";
import * as z from "zod";
import { planEvents, ROUTINE_EVENTS } from "./event-policy.js";
import { RecentIds } from "./rate.js";

const EnvSchema = CommonEnvSchema.extend({
  // Per TenantCluster, as client-go's spam filter limits one object's Events (burst 25): past the
  // burst a write a second carries every Decision that queued for it, so a tenant syncing
  // thousands of objects costs the host API about one Event write a second, not one per object.
  EVENT_BURST: z.coerce.number({ error: "must be a number" }).int().positive("must be positive").default(25),
  EVENTS_PER_SECOND: z.coerce.number({ error: "must be a number" }).positive("must be positive").default(1),
  // Over every object: Events follow the API server's pace (a busy server answers slower, so
  // fewer are written meanwhile) instead of competing with the writes they explain; a burst of
  // a hundred new tenants is provisioned first and explained moments later, nothing dropped.
  EVENT_WRITES_IN_FLIGHT: z.coerce.number({ error: "must be a number" }).int().positive("must be positive").default(1),
  /** Decision ids remembered to drop redelivered and republished Decisions. */
  DEDUPE_IDS: z.coerce.number({ error: "must be a number" }).int().positive("must be positive").default(50_000),
  // Events on host objects are a convenience copy of what the TenantCluster's Events, the
  // DECISIONS stream and the copy's own recorded Decision already hold: a burst of thousands of
  // creates must not double the host API's writes, so past this budget they are left out.
  HOST_EVENT_BURST: z.coerce.number({ error: "must be a number" }).int().positive("must be positive").default(25),
  HOST_EVENTS_PER_SECOND: z.coerce.number({ error: "must be a number" }).positive("must be positive").default(2),
  // Routine Creates and Updates (see event-policy.ts): one counted series per TenantCluster and
  // reason (the default), an Event each, or none. Skip, Delete and Fail are always Events.
  ROUTINE_EVENTS: z
    .enum(ROUTINE_EVENTS, { error: `must be one of ${ROUTINE_EVENTS.join(", ")}` })
    .default("aggregated"),
  // How often a routine series' Event is written at most; its count catches up on each write.
  ROUTINE_EVENT_INTERVAL_SECONDS: z.coerce
    .number({ error: "must be a number" })
    .positive("must be positive")
    .default(10),
});

const svc = await startService({ name: "recorder", envSchema: EnvSchema, consumers: ["recorder"] });
const outcomes = new Counter({
  name: "tenantplane_recorder_events_total",
  help: "Decisions turned into Events, by outcome (created, aggregated, series: counted in a routine series, unrecorded: routine with ROUTINE_EVENTS=none, duplicate) and whether the TenantCluster still existed.",
  labelNames: ["outcome", "tenant"],
  registers: [svc.metrics.registry],
});
const hostEvents = new Counter({
  name: "tenantplane_recorder_host_events_total",
  help: "Events written on the host object a Decision created or updated, by outcome (created, aggregated, failed, over_budget: left out past HOST_EVENTS_PER_SECOND).",
  labelNames: ["outcome"],
  registers: [svc.metrics.registry],
});
const routineWriteFailures = new Counter({
  name: "tenantplane_recorder_routine_series_write_failures_total",
  help: "Failed writes of routine series Events (ROUTINE_EVENTS=aggregated); each is retried with its Decisions kept in the count.",
  registers: [svc.metrics.registry],
});
const api = new JsonClient(svc.kc, { userAgent: svc.userAgent });
const decisionEvents = new AggregatedEvents(jsonEventSink(api), {
  component: "tenantplane",
  instance: svc.identity,
  clusterEventsNamespace: svc.env.EVENTS_NAMESPACE,
  burst: svc.env.EVENT_BURST,
  perSecond: svc.env.EVENTS_PER_SECOND,
  maxInFlight: svc.env.EVENT_WRITES_IN_FLIGHT,
  seriesIntervalMs: svc.env.ROUTINE_EVENT_INTERVAL_SECONDS * 1000,
  onSeriesError: (err, event) => {
    routineWriteFailures.inc();
    svc.logger.info(
      { err: describeError(err), reason: event.reason, regarding: event.regarding.name },
      "routine series Event not written yet; retrying",
    );
  },
});
const recorded = new RecentIds(svc.env.DEDUPE_IDS);
const hostEventBudget = new TokenBucket(svc.env.HOST_EVENT_BURST, svc.env.HOST_EVENTS_PER_SECOND);

// The TenantCluster cache gives each Event the uid that `kubectl describe` matches on.
const tenantsPath = `/apis/${GROUP}/${VERSION}/${PLURAL_TENANT_CLUSTERS}`;
const tenants = startListWatch({
  client: new JsonClient(svc.kc, { userAgent: svc.userAgent, timeoutMs: 60_000 }),
  path: tenantsPath,
  apiVersion: API_VERSION,
  kind: KIND_TENANT_CLUSTER,
  onEvent: () => undefined,
  logger: svc.logger,
});
await tenants.synced;

// The cache can lag behind (a tenant created a moment ago, a delete a moment ago); only the
// API says a tenant is gone. A Delete is re-read when the cache says the tenant is not being
// deleted, because that decides whether it is routine teardown or a Warning.
async function tenantState(tenant: string, fresh: boolean): Promise<{ uid?: string | undefined; deleting: boolean }> {
  const cached = tenants.get(undefined, tenant);
  if (cached && !(fresh && !cached.metadata.deletionTimestamp)) {
    return { uid: cached.metadata.uid, deleting: cached.metadata.deletionTimestamp !== undefined };
  }
  try {
    const tc = await api.request<RawObject>("GET", `${tenantsPath}/${encodeURIComponent(tenant)}`);
    return { uid: tc.metadata.uid, deleting: tc.metadata.deletionTimestamp !== undefined };
  } catch (err) {
    if (httpStatusOf(err) === 404) return { deleting: false };
    // The re-read only refines what the cache knows; without it the cache's view stands.
    if (cached) return { uid: cached.metadata.uid, deleting: cached.metadata.deletionTimestamp !== undefined };
    throw err;
  }
}

async function record(decision: Decision): Promise<void> {
  if (recorded.has(decision.id)) {
    outcomes.inc({ outcome: "duplicate", tenant: "present" });
    return;
  }
  const { uid, deleting } = await tenantState(decision.tenant, decision.action === "Delete");
  // Without its TenantCluster (deleted while the recorder was behind) the Event still
  // names the tenant, in the events namespace: a Decision is never dropped silently.
  const regarding = { apiVersion: API_VERSION, kind: KIND_TENANT_CLUSTER, name: decision.tenant, uid };
  const plan = planEvents(decision, regarding, { gone: uid === undefined, deleting }, svc.env.ROUTINE_EVENTS);
  const tenantLabel = uid === undefined ? "gone" : "present";
  // Counted in its routine series: written with the others of its reason within the interval
  // (flushed on shutdown); the Decision itself stays in the stream and on its host object.
  if (plan.tenant?.write !== "event") {
    if (plan.tenant) decisionEvents.tally(plan.tenant.event);
    recorded.add(decision.id);
    outcomes.inc({ outcome: plan.tenant ? "series" : "unrecorded", tenant: tenantLabel });
    return;
  }
  let onHost = plan.host;
  if (onHost && !hostEventBudget.take()) {
    hostEvents.inc({ outcome: "over_budget" });
    onHost = undefined;
  }
  const [onTenant, hostOutcome] = await Promise.allSettled([
    decisionEvents.record(plan.tenant.event),
    onHost ? decisionEvents.record(onHost) : Promise.resolve(undefined),
  ]);
  // The Event on the host object is a convenience copy: its namespace may be terminating or the
  // object gone already, and retrying would count the TenantCluster's Event twice.
  if (onHost) {
    if (hostOutcome.status === "fulfilled") {
      hostEvents.inc({ outcome: hostOutcome.value ?? "created" });
    } else {
      hostEvents.inc({ outcome: "failed" });
      svc.logger.info(
        { err: describeError(hostOutcome.reason), kind: decision.kind, host: decision.hostRef },
        "Event on the host object not written",
      );
    }
  }
  if (onTenant.status === "rejected") {
    const err: unknown = onTenant.reason;
    // Even a refusal (an admission webhook or policy on Events) is retried: a Decision
    // is a fact that must end up in an Event, and whatever refuses it today may not tomorrow.
    throw new TransientError(`writing the Event for Decision ${decision.id} failed: ${describeError(err)}`, {
      code: "EventWriteFailed",
      cause: err,
    });
  }
  recorded.add(decision.id);
  outcomes.inc({ outcome: onTenant.value, tenant: tenantLabel });
}

// Keyed by id: Decisions are facts, not keys, so none supersedes another, a tenant's
// Decisions are written concurrently (and share rate-limited writes), and two copies
// of one Decision are handled one after the other, the second dropped as a duplicate.
const consuming = runConsumer({
  js: svc.js,
  consumer: "recorder",
  schema: DecisionSchema,
  key: (d) => d.id,
  // Decisions of one tenant wait together for its next Event write; enough of them in flight
  // that each write carries many, so the rate limit does not become the recorder's throughput.
  concurrency: 256,
  logger: svc.logger,
  metrics: svc.metrics,
  signal: svc.signal,
  onReady: svc.setReady,
  handle: (decision) => record(decision),
});
svc.onShutdown({ name: "consumer", run: () => consuming });
// After the consumer drained: the routine series' last counts are written before exit.
svc.onShutdown({ name: "routine events", run: () => decisionEvents.flush() });
svc.onShutdown({ name: "watch", run: async () => tenants.stop() });
