// Audit-log requests grouped the ways the benches report them: by user agent (with each agent's
// verbs and resources) and by service, verb and resource (with when each was sent).
import { agentOf, isWrite, type AuditRequest } from "../test/harness/index.js";

/** One user agent's requests: how many, how many wrote, and how many per "verb resource". */
export interface AgentRequests {
  all: number;
  writes: number;
  what: Map<string, number>;
}

/** Requests per user agent, the busiest first. */
export function byAgent(requests: Iterable<AuditRequest>): Array<[string, AgentRequests]> {
  const rows = new Map<string, AgentRequests>();
  for (const r of requests) {
    const agent = agentOf(r);
    const row = rows.get(agent) ?? { all: 0, writes: 0, what: new Map<string, number>() };
    row.all++;
    if (isWrite(r)) row.writes++;
    const what = `${r.verb} ${r.resource}${subresourceOf(r)}`;
    row.what.set(what, (row.what.get(what) ?? 0) + 1);
    rows.set(agent, row);
  }
  return [...rows].sort((a, b) => b[1].all - a[1].all);
}

/** One line per user agent: its requests, its writes, and its `top` commonest kinds of request. */
export function formatAgents(agents: Array<[string, AgentRequests]>, top: number): string[] {
  return agents.map(([agent, n]) => {
    const commonest = [...n.what]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([w, c]) => `${w} ${c}`);
    return `${agent} ${n.all} (${n.writes} writes: ${commonest.join(", ")})`;
  });
}

function subresourceOf(r: AuditRequest): string {
  const sub = /\/(status|binding|log|token|eviction)(\?|$)/.exec(r.uri)?.[1];
  return sub ? `/${sub}` : "";
}

/**
 * Send times (ms) per "service verb resource", a subresource and a dry run named, the service
 * without its "tenantplane-" prefix.
 */
export function byRequest(requests: Iterable<AuditRequest>): Map<string, number[]> {
  const rows = new Map<string, number[]>();
  for (const r of requests) {
    const what = `${agentOf(r).replace(/^tenantplane-/, "")} ${r.verb}${r.dryRun ? " (dry run)" : ""} ${r.resource}${subresourceOf(r)}`;
    const times = rows.get(what) ?? [];
    times.push(r.receivedMs);
    rows.set(what, times);
  }
  return rows;
}
