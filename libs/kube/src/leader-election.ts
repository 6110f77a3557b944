import type { KubeConfig } from "@kubernetes/client-node";
import { httpStatusOf, onAbort, sleep, type Logger } from "@tenantplane/runtime";
import { LeaseObservation } from "./lease-observation.js";
import { JsonClient } from "./json-client.js";

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

/** Lease timing, as in client-go: a leader that cannot renew within `renewDeadlineMs` stops leading. */
export interface LeaderElectionOptions {
  kc: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger;
  /** Sent as User-Agent, so the API server's audit log tells the elector's requests apart. */
  userAgent?: string;
}

/** Leading stopped without a shutdown: leadership was lost or the leader's work failed. The process should exit non-zero. */
export class LeadershipLostError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "LeadershipLostError";
  }
}

/**
 * Runs `lead` while holding a coordination.k8s.io Lease. Another holder's lease
 * counts as expired only when this process saw its record unchanged for a lease
 * duration on its own monotonic clock, so clock skew cannot split the brain. Every
 * Lease call has a timeout. `lead` receives a signal that aborts the moment
 * leadership is lost (no successful renewal within the renew deadline, measured
 * on the monotonic clock, so a process frozen past it stops as soon as it runs
 * again) and must stop acting at once.
 *
 * Resolves after `signal` aborts (shutdown), releasing a held lease so a standby
 * takes over at once. Rejects with LeadershipLostError when leadership is lost or
 * `lead` fails or returns on its own; the lease is released first where still held.
 */
export async function runWithLeaderElection(
  opts: LeaderElectionOptions,
  signal: AbortSignal,
  lead: (lost: AbortSignal) => Promise<void>,
): Promise<void> {
  const client = new JsonClient(opts.kc, { userAgent: opts.userAgent });
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(opts.namespace)}/leases`;
  const leasePath = `${leases}/${encodeURIComponent(opts.name)}`;
  const leaseMs = opts.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
  const retryMs = opts.retryPeriodMs ?? 2_000;
  // A call that outlives the retry period would let the renew deadline pass unseen.
  const callTimeoutMs = Math.max(250, Math.min(retryMs, renewDeadlineMs / 2));
  const log = opts.logger.child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });
  const seen = new LeaseObservation();
  // The Lease as this process last wrote it. A leader renews from it without reading first: its
  // resourceVersion makes the write a 409 if anyone else changed the Lease since, and then the
  // next attempt reads. One request per renewal instead of two.
  let mine: Lease | undefined;
  // Every Lease call has a timeout shorter than the retry period.
  const readLease = () => client.request<Lease>("GET", leasePath, { timeoutMs: callTimeoutMs });
  const replaceLease = (body: Lease) => client.request<Lease>("PUT", leasePath, { body, timeoutMs: callTimeoutMs });
  const now = () => performance.now();

  while (!signal.aborted) {
    if (!(await tryAcquireOrRenew())) {
      await sleep(retryMs, signal);
      continue;
    }
    log.info("acquired leadership");
    const lost = new AbortController();
    let failure: unknown;
    let endedOnItsOwn = false;
    const leading = lead(lost.signal).then(
      () => {
        endedOnItsOwn = !lost.signal.aborted;
        lost.abort();
      },
      (err: unknown) => {
        endedOnItsOwn = !lost.signal.aborted;
        failure = err;
        lost.abort();
      },
    );
    let lastRenew = now();
    // Fires first when the process resumes after being frozen past the deadline,
    // before any I/O callback of the leader's work can act.
    let deadline = setTimeout(() => lost.abort(), renewDeadlineMs);
    // A shutdown requested while the Lease was being acquired ends the leading at once.
    const unlisten = onAbort(signal, () => lost.abort());
    while (!lost.signal.aborted) {
      await sleep(retryMs, lost.signal);
      if (lost.signal.aborted || now() - lastRenew >= renewDeadlineMs) break;
      if (await tryAcquireOrRenew()) {
        lastRenew = now();
        clearTimeout(deadline);
        deadline = setTimeout(() => lost.abort(), renewDeadlineMs);
      }
    }
    clearTimeout(deadline);
    unlisten();
    lost.abort();
    await leading;
    await release();
    if (signal.aborted) return;
    const why =
      failure !== undefined
        ? "leader work failed"
        : endedOnItsOwn
          ? "leader work ended on its own"
          : `no renewal within ${renewDeadlineMs} ms`;
    log.error({ err: failure }, `stopped leading: ${why}`);
    throw new LeadershipLostError(`lost leadership of Lease ${opts.namespace}/${opts.name}: ${why}`, failure);
  }

  async function tryAcquireOrRenew(): Promise<boolean> {
    const stamp = microTime(new Date());
    try {
      if (mine?.spec?.holderIdentity === opts.identity) {
        const next = { ...mine.spec, leaseDurationSeconds: Math.ceil(leaseMs / 1000), renewTime: stamp };
        try {
          mine = await replaceLease({ ...mine, spec: next });
          seen.observe(recordOf(next), now());
          return true;
        } catch (err) {
          mine = undefined;
          if (httpStatusOf(err) !== 409) throw err;
        }
      }
      let lease: Lease;
      try {
        lease = await readLease();
      } catch (err) {
        if (httpStatusOf(err) !== 404) throw err;
        const spec = {
          holderIdentity: opts.identity,
          leaseDurationSeconds: Math.ceil(leaseMs / 1000),
          acquireTime: stamp,
          renewTime: stamp,
          leaseTransitions: 0,
        };
        mine = await client.request<Lease>("POST", leases, {
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name: opts.name, namespace: opts.namespace },
            spec,
          },
          timeoutMs: callTimeoutMs,
        });
        seen.observe(recordOf(spec), now());
        return true;
      }
      const spec = lease.spec ?? {};
      seen.observe(recordOf(spec), now());
      const holder = spec.holderIdentity ?? "";
      if (holder !== opts.identity && !seen.expired(now())) return false;
      const next = {
        ...spec,
        holderIdentity: opts.identity,
        leaseDurationSeconds: Math.ceil(leaseMs / 1000),
        acquireTime: holder === opts.identity ? spec.acquireTime : stamp,
        renewTime: stamp,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === opts.identity ? 0 : 1),
      };
      // Replace with the read resourceVersion: a concurrent candidate makes this a 409 and loses.
      mine = await replaceLease({ ...lease, spec: next });
      seen.observe(recordOf(next), now());
      return true;
    } catch (err) {
      // A write that timed out may still have landed: read before the next one.
      mine = undefined;
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

function recordOf(spec: {
  holderIdentity?: string | undefined;
  renewTime?: string | undefined;
  leaseDurationSeconds?: number | undefined;
  leaseTransitions?: number | undefined;
}) {
  return {
    holderIdentity: spec.holderIdentity ?? "",
    renewTime: spec.renewTime ?? "",
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 15,
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

// Lease times are metav1.MicroTime: the API server insists on six fractional digits.
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
