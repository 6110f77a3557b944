import { CoordinationV1Api, type KubeConfig, type V1Lease } from "@kubernetes/client-node";
import { httpStatusOf, sleep, type Logger } from "@tenantplane/runtime";

/** Lease timing, as in client-go: a leader that cannot renew within `leaseDurationMs` is replaced. */
export interface LeaderElectionOptions {
  kc: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger;
}

/**
 * Runs `lead` while holding a coordination.k8s.io Lease. `lead` receives a
 * signal that aborts the moment leadership is lost (renewal failed past the
 * deadline, or another holder took over), and must stop acting at once.
 * Returns when `signal` aborts; a held lease is then released so a standby
 * takes over without waiting for expiry.
 */
export async function runWithLeaderElection(
  opts: LeaderElectionOptions,
  signal: AbortSignal,
  lead: (lost: AbortSignal) => Promise<void>,
): Promise<void> {
  const api = opts.kc.makeApiClient(CoordinationV1Api);
  const leaseMs = opts.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
  const retryMs = opts.retryPeriodMs ?? 2_000;
  const log = opts.logger.child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });

  while (!signal.aborted) {
    if (!(await tryAcquireOrRenew())) {
      await sleep(retryMs, signal);
      continue;
    }
    log.info("acquired leadership");
    const lost = new AbortController();
    const leading = lead(lost.signal).catch((err) => log.error({ err }, "leader work failed"));
    let lastRenew = Date.now();
    while (!signal.aborted && !lost.signal.aborted) {
      await sleep(retryMs, signal);
      if (signal.aborted) break;
      if (await tryAcquireOrRenew()) {
        lastRenew = Date.now();
      } else if (Date.now() - lastRenew > renewDeadlineMs) {
        log.warn("lost leadership");
        lost.abort();
      }
    }
    lost.abort();
    await leading;
    if (signal.aborted) await release();
  }

  async function tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const stamp = microTime(now);
    try {
      let lease: V1Lease;
      try {
        lease = await api.readNamespacedLease({ name: opts.name, namespace: opts.namespace });
      } catch (err) {
        if (httpStatusOf(err) !== 404) throw err;
        await api.createNamespacedLease({
          namespace: opts.namespace,
          body: {
            metadata: { name: opts.name, namespace: opts.namespace },
            spec: {
              holderIdentity: opts.identity,
              leaseDurationSeconds: Math.ceil(leaseMs / 1000),
              acquireTime: stamp,
              renewTime: stamp,
              leaseTransitions: 0,
            },
          },
        });
        return true;
      }
      const spec = lease.spec ?? {};
      const holder = spec.holderIdentity ?? "";
      const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
      const duration = (spec.leaseDurationSeconds ?? 0) * 1000;
      const expired = renewed + duration < now.getTime();
      if (holder !== opts.identity && holder !== "" && !expired) return false;
      const transitions = (spec.leaseTransitions ?? 0) + (holder === opts.identity ? 0 : 1);
      // Replace with the read resourceVersion: a concurrent candidate makes this a 409 and loses.
      await api.replaceNamespacedLease({
        name: opts.name,
        namespace: opts.namespace,
        body: {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: opts.identity,
            leaseDurationSeconds: Math.ceil(leaseMs / 1000),
            acquireTime: holder === opts.identity ? spec.acquireTime : stamp,
            renewTime: stamp,
            leaseTransitions: transitions,
          },
        },
      });
      return true;
    } catch (err) {
      log.debug({ err }, "lease acquire/renew failed");
      return false;
    }
  }

  async function release(): Promise<void> {
    try {
      const lease = await api.readNamespacedLease({ name: opts.name, namespace: opts.namespace });
      if (lease.spec?.holderIdentity !== opts.identity) return;
      await api.replaceNamespacedLease({
        name: opts.name,
        namespace: opts.namespace,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1 } },
      });
      log.info("released leadership");
    } catch (err) {
      log.warn({ err }, "releasing the lease failed; it will expire");
    }
  }
}

// Lease times are metav1.MicroTime: the API server insists on six fractional
// digits, while the client would send a Date with three. The client passes
// strings through untouched.
function microTime(date: Date): Date {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z") as unknown as Date;
}
