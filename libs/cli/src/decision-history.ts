import type { Decision } from "@tenantplane/messaging";
import { CliError, EXIT_UNREACHABLE } from "./cli-io.js";
import { readDecisions } from "./decisions.js";
import { isUnreachable } from "./host.js";

/** Where to read Decisions from; without a URL nothing is read and the answer says how to ask. */
export interface HistorySource {
  natsUrl: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
}

/** The Decisions found, oldest first, or why none could be read (`unreachable`: NATS did not answer, exit 3). */
export type History = { list: Decision[] } | { note: string; unreachable?: true };

/**
 * The Decisions on `subject` that `keep` accepts, oldest first; with `last`, only the last
 * that many. A NATS that cannot be read is an answer (a note), not an error, so a command
 * can still print what it found elsewhere.
 */
export async function decisionHistory(
  source: HistorySource,
  subject: string,
  keep: (decision: Decision) => boolean,
  last?: number,
): Promise<History> {
  if (source.natsUrl === undefined) return { note: "not read: pass --nats-url or set NATS_URL" };
  const found: Decision[] = [];
  try {
    await readDecisions(
      source.natsUrl,
      source.env,
      { subject, since: undefined, follow: false },
      (d) => {
        if (!keep(d)) return;
        found.push(d);
        if (last !== undefined && found.length > last) found.shift();
      },
      () => undefined,
    );
  } catch (error) {
    if (error instanceof CliError) {
      return error.exitCode === EXIT_UNREACHABLE ? { note: error.message, unreachable: true } : { note: error.message };
    }
    if (isUnreachable(error)) return { note: `cannot reach NATS at ${source.natsUrl}`, unreachable: true };
    throw error;
  }
  return { list: found };
}

/** One object tenantplane did not copy, by its latest Decision. */
export interface NotSynced {
  kind: string;
  tenantRef: { namespace: string; name: string };
  hostRef: { namespace: string; name: string };
  action: "Skip" | "Fail";
  reason: string;
  time: string;
  service: string;
  error?: Decision["error"];
}

/**
 * The objects whose latest Decision (per kind and tenant object, in stream order) is a Skip
 * or a Fail: what is not synced now and why. A later Create, Update or Delete of the same
 * object supersedes its Skip or Fail. Sorted by kind, namespace and name.
 */
export function notSyncedOf(decisions: readonly Decision[]): NotSynced[] {
  const latest = new Map<string, Decision>();
  for (const d of decisions) latest.set(`${d.kind}/${d.tenantRef.namespace}/${d.tenantRef.name}`, d);
  const out: NotSynced[] = [];
  for (const d of latest.values()) {
    if (d.action !== "Skip" && d.action !== "Fail") continue;
    out.push({
      kind: d.kind,
      tenantRef: { namespace: d.tenantRef.namespace, name: d.tenantRef.name },
      hostRef: { namespace: d.hostRef.namespace, name: d.hostRef.name },
      action: d.action,
      reason: d.reason,
      time: d.time,
      service: d.service,
      ...(d.error === undefined ? {} : { error: d.error }),
    });
  }
  const key = (n: NotSynced) => `${n.kind}\n${n.tenantRef.namespace}\n${n.tenantRef.name}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
