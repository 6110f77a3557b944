import { hostname } from "node:os";
import type { KubeConfig } from "@kubernetes/client-node";
import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import { millis, type NatsConnection } from "@nats-io/transport-node";
import {
  EventRecorder,
  JsonClient,
  loadKubeConfig,
  mayWatchEverywhere,
  ObjectCache,
  Objects,
  RequestBudget,
} from "@tenantplane/kube";
import {
  connectNats,
  DecisionPipeline,
  ensureTopology,
  whenJetStreamAnswers,
  loggableServers,
  stampDecision,
  streamSettingsFromEnv,
  trackConnection,
  type ConnectionState,
  StreamEnvSchema,
  type ConsumerName,
  type PlannedDecision,
} from "@tenantplane/messaging";
import {
  describe as describeError,
  createLogger,
  createMetrics,
  handleShutdown,
  parseEnv,
  sleep,
  startHttpServer,
  type CommonEnvSchema,
  type Logger,
  type ServiceMetrics,
  type ShutdownStep,
} from "@tenantplane/runtime";
import * as z from "zod";
import { decisionRecords } from "./decision-record.js";
import { configureFaults } from "./faults.js";
import { hostKinds, scopeByAccess, type HostKind } from "./host-cache.js";

const VERSION = "0.1.0";

// Only "1" switches a fault on, so no ordinary value ever does.
const FaultEnvSchema = z.object({ TENANTPLANE_FAULT_KILL_AFTER_HOST_WRITE: z.string().optional() });

/** How hard a service may drive the host API server, and how many tenants it reconciles at once. */
export const BudgetEnvSchema = z.object({
  /** Host API requests per second on average (reads from caches and watches do not count). */
  HOST_QPS: z.coerce.number({ error: "must be a number" }).positive("must be positive").default(200),
  /** Host API requests allowed at once above the average. */
  HOST_BURST: z.coerce.number({ error: "must be a number" }).int().positive("must be positive").default(400),
  /** Tenants reconciled concurrently; one slow tenant holds only its own slot. */
  RECONCILE_CONCURRENCY: z.coerce.number({ error: "must be a number" }).int().positive("must be positive").default(16),
});

/** Everything a service's main.ts wires together, opened in one call. */
export interface ServiceContext<E> {
  readonly name: string;
  /** This replica's identity: POD_NAME in a cluster, else host and pid. */
  readonly identity: string;
  readonly env: E;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  readonly kc: KubeConfig;
  /** `tenantplane-<name>/<version>`: the User-Agent of every host API request this service makes. */
  readonly userAgent: string;
  /** Host objects under this service's field manager (`tenantplane-<name>`), read through `cache` when there is one. */
  readonly objects: Objects;
  /**
   * The list+watch cache of the host kinds asked for in startService's `cache`. A namespaced kind
   * the service may not watch cluster-wide is cached only in the namespaces the service names
   * with `watchNamespace` (those where a RoleBinding lets it act).
   */
  readonly cache: ObjectCache | undefined;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  /** Writes aggregated, rate-limited Events as `tenantplane/<name>`. */
  readonly events: EventRecorder;
  /**
   * Stamps a planned Decision with this service's name (keeping a recorded id and
   * time) and publishes it on JetStream, pipelined with the service's other Decisions
   * (DecisionPipeline) and retried with the same id until it is stored or the service
   * stops: the handler, and so its message, waits for NATS however long it is down.
   * Throws a TransientError only on shutdown.
   */
  publish(planned: PlannedDecision): Promise<void>;
  /** Aborts on SIGTERM/SIGINT. */
  readonly signal: AbortSignal;
  /** Tenants reconciled at once (RECONCILE_CONCURRENCY). */
  readonly concurrency: number;
  /** Marks the service ready (or not) for /readyz. */
  setReady(ready: boolean): void;
  /** Registers a shutdown step; steps run in registration order, before NATS is drained. */
  onShutdown(step: ShutdownStep): void;
}

/**
 * Reads the environment through `envSchema` (CommonEnvSchema extended), starts
 * logging, metrics and the health server, connects to NATS (refusing servers
 * older than 2.11), declares the streams and this service's consumers, and
 * installs graceful shutdown. A bad variable exits at once with one line naming it.
 */
export async function startService<S extends typeof CommonEnvSchema>(opts: {
  name: string;
  envSchema: S;
  consumers: readonly ConsumerName[];
  /**
   * Host kinds to read from a list+watch cache instead of the API server (tenantplane's own
   * objects and its CRDs), or a function of the parsed environment naming them; the service
   * starts consuming once the cluster-wide caches are filled.
   */
  cache?: readonly HostKind[] | ((env: z.infer<S>) => readonly HostKind[]);
}): Promise<ServiceContext<z.infer<S>>> {
  let env: z.infer<S>;
  let streams: z.infer<typeof StreamEnvSchema>;
  let budget: z.infer<typeof BudgetEnvSchema>;
  try {
    env = parseEnv(opts.envSchema, process.env);
    streams = parseEnv(StreamEnvSchema, process.env);
    budget = parseEnv(BudgetEnvSchema, process.env);
    const faultEnv = parseEnv(FaultEnvSchema, process.env);
    configureFaults({ killAfterHostWrite: faultEnv.TENANTPLANE_FAULT_KILL_AFTER_HOST_WRITE === "1" });
  } catch (err) {
    process.stderr.write(`${opts.name}: configuration error: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger(opts.name, env.LOG_LEVEL);
  // Installed before anything is opened: a SIGTERM while the service still waits for JetStream
  // or its caches (a rollout, a test's stop) closes what is open and exits 0, instead of killing
  // the process by the signal. What start-up opens is closed by the steps as far as it got.
  const steps: ShutdownStep[] = [];
  let cache: ObjectCache | undefined;
  let nc: NatsConnection | undefined;
  let http: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  const signal = handleShutdown(logger, [
    {
      name: "service",
      run: async () => {
        for (const step of steps) await step.run();
      },
    },
    { name: "caches", run: async () => cache?.stop() },
    { name: "nats", run: () => nc?.drain() },
    { name: "http", run: () => http?.close() },
  ]);
  try {
    return await startOpened();
  } catch (err) {
    // Start-up failed because the shutdown closed what it was using: the shutdown ends the process.
    if (signal.aborted) return new Promise<never>(() => undefined);
    throw err;
  }

  async function startOpened(): Promise<ServiceContext<z.infer<S>>> {
    const metrics = createMetrics(opts.name);
    const identity = env.POD_NAME ?? `${hostname()}-${process.pid}`;
    let ready = false;
    const nats: ConnectionState = { connected: () => false };
    // Ready needs both: the service's own say (consuming, or leading) and a live NATS
    // connection, so a pod cut off from every cluster member leaves the Service's endpoints.
    http = await startHttpServer({
      port: env.HTTP_PORT,
      registry: metrics.registry,
      ready: () => ready && nats.connected(),
    });
    logger.info({ port: http.port }, "health server listening");

    const kc = loadKubeConfig(env.KUBECONFIG);
    // One user agent per service, so the API server's audit log tells its requests apart.
    const userAgent = `tenantplane-${opts.name}/${VERSION}`;
    let connected: NatsConnection;
    try {
      connected = await connectNats({
        url: env.NATS_URL,
        name: `${opts.name}-${identity}`,
        user: env.NATS_USER,
        password: env.NATS_PASSWORD,
        token: env.NATS_TOKEN,
        credsFile: env.NATS_CREDS_FILE,
        tls: env.NATS_TLS === "true",
        tlsCaFile: env.NATS_TLS_CA_FILE,
        tlsCertFile: env.NATS_TLS_CERT_FILE,
        tlsKeyFile: env.NATS_TLS_KEY_FILE,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      logger.fatal({ err, servers: loggableServers(env.NATS_URL) }, "cannot use NATS");
      process.exit(1);
    }
    nc = connected;
    logger.info({ servers: loggableServers(env.NATS_URL), server: nc.info?.version }, "connected to NATS");
    nats.connected = trackConnection(nc, (connected, status) => {
      const server = "server" in status ? status.server : undefined;
      logger.warn(
        { status: status.type, server, connected },
        connected ? "NATS connection back" : "NATS connection lost",
      );
    }).connected;
    // A NATS cluster that is still electing its JetStream leader (or placing the streams' replicas)
    // is waited for: the service stays not ready and says why, rather than exiting.
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    const stored = await whenJetStreamAnswers(
      () => ensureTopology(jsm, opts.consumers, streamSettingsFromEnv(streams)),
      {
        onRetry: (err, attempt, delayMs) =>
          logger.warn({ err: describeError(err), attempt, retryInMs: delayMs }, "JetStream not available yet; waiting"),
      },
    );
    // Recorded Decisions are republished only inside the duplicate window the server applied to
    // DECISIONS (an operator may have set another), so a republish is never stored twice.
    decisionRecords.useDuplicateWindow(millis(stored.decisions.duplicate_window ?? 0));
    logger.info(
      { republishWithinMs: decisionRecords.windowMs },
      "recorded Decisions are republished within this window",
    );

    const objects = new Objects(kc, `tenantplane-${opts.name}`, {
      userAgent,
      budget: new RequestBudget(budget.HOST_QPS, budget.HOST_BURST),
    });
    const wanted = hostKinds(typeof opts.cache === "function" ? opts.cache(env) : (opts.cache ?? []));
    if (wanted.length > 0) {
      // Every open watch holds a connection, and per-namespace caches open one per kind and namespace.
      const client = new JsonClient(kc, { userAgent, timeoutMs: 60_000, maxSockets: Infinity });
      // Rights in tenant namespaces may be granted per namespace (the chart's RoleBindings), so a
      // cluster-wide watch is refused: such kinds are cached in each namespace once it is bound.
      const cachedKinds = await scopeByAccess(wanted, (kind) =>
        mayWatchEverywhere(client, kind.apiVersion, kind.resource.resource),
      );
      const perNamespace = cachedKinds.filter((k) => k.perNamespace).map((k) => k.kind);
      if (perNamespace.length > 0)
        logger.info({ perNamespace }, "cached per tenant namespace: not allowed to list and watch them cluster-wide");
      cache = new ObjectCache({ client, kinds: cachedKinds, logger });
      objects.useCache(cache);
      // Until a kind's cache is filled its reads go to the API server, so waiting is an optimisation only.
      const filled = await Promise.race([cache.synced().then(() => true), sleep(CACHE_FILL_WAIT_MS).then(() => false)]);
      logger.info({ filled, objects: cache.sizes() }, filled ? "host caches filled" : "host caches still filling");
    }

    const js = jetstream(nc);
    // The host write already happened, so a Decision must not be lost to an outage of any length.
    const decisions = new DecisionPipeline(js, {
      signal,
      // One line per minute or so is enough to say NATS is still away.
      onRetry: (err, attempt, waiting) => {
        if (attempt % 12 === 1) logger.warn({ err, attempt, waiting }, "publishing Decisions failed; retrying");
      },
    });
    return {
      name: opts.name,
      identity,
      env,
      logger,
      metrics,
      kc,
      userAgent,
      objects,
      cache,
      nc,
      js,
      publish: async (planned) => {
        const decision = stampDecision(planned, opts.name);
        await decisions.publish(decision);
        metrics.decisions.inc({ action: decision.action });
      },
      events: new EventRecorder(kc, {
        component: opts.name,
        instance: identity,
        clusterEventsNamespace: env.EVENTS_NAMESPACE,
        userAgent,
        logger,
      }),
      signal,
      concurrency: budget.RECONCILE_CONCURRENCY,
      setReady: (value) => {
        ready = value;
      },
      onShutdown: (step) => steps.push(step),
    };
  }
}

const CACHE_FILL_WAIT_MS = 30_000;
