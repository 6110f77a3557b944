import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { publishTenantChange } from "@tenantplane/messaging";
import { agentOf, readAudit, type AuditRequest } from "./audit.js";
import { waitFor } from "./wait-for.js";

/** Waits until each of `durables` has handled and settled every message the TENANTS stream holds so far. */
export async function consumersSettled(jsm: JetStreamManager, durables: readonly string[]): Promise<void> {
  const last = (await jsm.streams.info("TENANTS")).state.last_seq;
  await waitFor(
    async () => {
      for (const durable of durables) {
        const info = await jsm.consumers.info("TENANTS", durable);
        if (info.ack_floor.stream_seq < last || info.num_ack_pending > 0) return false;
      }
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 250, description: `${durables.join(" and ")} to settle every message` },
  );
}

/**
 * Publishes `count` resyncs of `tenant`, waits until every consumer in `durables` was handed
 * them and settled them, and returns the host API requests that the components named in
 * `agents` (user agents up to their `/`) made meanwhile, from the audit log at `auditLogPath`.
 */
export async function requestsOfResync(opts: {
  js: JetStreamClient;
  jsm: JetStreamManager;
  tenant: string;
  durables: readonly string[];
  auditLogPath: string;
  agents: readonly string[];
  count?: number;
}): Promise<AuditRequest[]> {
  const count = opts.count ?? 3;
  const since = Date.now();
  const first = (await opts.jsm.streams.info("TENANTS")).state.last_seq;
  for (let i = 0; i < count; i++) await publishTenantChange(opts.js, { tenant: opts.tenant, reason: "Resync" });
  await consumersSettled(opts.jsm, opts.durables);
  for (const durable of opts.durables) {
    const delivered = (await opts.jsm.consumers.info("TENANTS", durable)).delivered.stream_seq;
    if (delivered < first + count) throw new Error(`${durable} was not handed the resyncs of ${opts.tenant}`);
  }
  // The audit log is written a moment after each answer.
  await new Promise((r) => setTimeout(r, 1_000));
  return readAudit(opts.auditLogPath, since).filter((r) => opts.agents.includes(agentOf(r)));
}

/** One line per request, `<agent> <verb> <resource> <namespace>/<name>`, for assertions that list what was wrong. */
export function describeRequests(requests: readonly AuditRequest[]): string[] {
  return requests.map((r) => `${agentOf(r)} ${r.verb} ${r.resource} ${r.namespace}/${r.name}`);
}
