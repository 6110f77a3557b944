import { JsonClient, LeadershipLostError, runWithLeaderElection } from "@tenantplane/kube";
import { CommonEnvSchema } from "@tenantplane/runtime";
import { startService } from "@tenantplane/service";
import * as z from "zod";
import { runWatcher } from "./watcher.js";

const EnvSchema = CommonEnvSchema.extend({
  POD_NAMESPACE: z.string().min(1).default("tenantplane-system"),
  LEASE_NAME: z.string().min(1).default("tenantplane-watcher"),
  RESYNC_INTERVAL_SECONDS: z.coerce
    .number({ error: "must be a number of seconds" })
    .positive("must be positive")
    .default(300),
  LEASE_DURATION_SECONDS: z.coerce
    .number({ error: "must be a number of seconds" })
    .positive("must be positive")
    .default(15),
});

const svc = await startService({ name: "watcher", envSchema: EnvSchema, consumers: [] });
const leaseMs = svc.env.LEASE_DURATION_SECONDS * 1000;
const done = runWithLeaderElection(
  {
    kc: svc.kc,
    namespace: svc.env.POD_NAMESPACE,
    name: svc.env.LEASE_NAME,
    identity: svc.identity,
    leaseDurationMs: leaseMs,
    renewDeadlineMs: Math.round(leaseMs * 0.66),
    retryPeriodMs: Math.max(500, Math.round(leaseMs / 7)),
    logger: svc.logger,
    userAgent: svc.userAgent,
  },
  svc.signal,
  async (lost) => {
    svc.setReady(true);
    await runWatcher(
      {
        client: new JsonClient(svc.kc, { userAgent: svc.userAgent, timeoutMs: 60_000 }),
        js: svc.js,
        logger: svc.logger,
        registry: svc.metrics.registry,
        resyncIntervalMs: svc.env.RESYNC_INTERVAL_SECONDS * 1000,
      },
      lost,
    );
  },
);
// A standby is ready too: it is healthy and waiting for the lease.
svc.setReady(true);
svc.onShutdown({ name: "leader election", run: () => done.catch(() => undefined) });
// Losing the lease is not recoverable in-process (the leader's work may have been cut
// off mid-way): the lease is already released, so exit non-zero and let the pod restart.
done.catch(async (err: unknown) => {
  svc.logger.fatal({ err }, err instanceof LeadershipLostError ? "leadership lost; exiting" : "leader election failed");
  await svc.nc.close().catch(() => undefined);
  process.exit(1);
});
