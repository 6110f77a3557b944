import type { KubeConfig } from "@kubernetes/client-node";
import { httpStatusOf, sleep, type Logger } from "@tenantplane/runtime";
import { RestClient } from "./internal/rest.js";

/** The fields of a coordination.k8s.io/v1 Lease this elector reads and writes; times are MicroTime strings. */
interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

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
  const rest = new RestClient(opts.kc);
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(opts.namespace)}/leases`;
  const leasePath = `${leases}/${encodeURIComponent(opts.name)}`;
  const readLease = () => rest.request<Lease>({ method: "GET", path: leasePath });
  const replaceLease = (body: Lease) => rest.request<Lease>({ method: "PUT", path: leasePath, body });
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
      let lease: Lease;
      try {
        lease = await readLease();
      } catch (err) {
        if (httpStatusOf(err) !== 404) throw err;
        await rest.request({
          method: "POST",
          path: leases,
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
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
      await replaceLease({
        ...lease,
        spec: {
          ...spec,
          holderIdentity: opts.identity,
          leaseDurationSeconds: Math.ceil(leaseMs / 1000),
          acquireTime: holder === opts.identity ? spec.acquireTime : stamp,
          renewTime: stamp,
          leaseTransitions: transitions,
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
      const lease = await readLease();
      if (lease.spec?.holderIdentity !== opts.identity) return;
      await replaceLease({ ...lease, spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1 } });
      log.info("released leadership");
    } catch (err) {
      log.warn({ err }, "releasing the lease failed; it will expire");
    }
  }
}

// Lease times are metav1.MicroTime: the API server insists on six fractional digits.
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
