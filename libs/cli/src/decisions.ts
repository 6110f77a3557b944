import { DeliverPolicy, jetstream, type JsMsg } from "@nats-io/jetstream";
import { TENANT_NAME_MESSAGE, TenantNameSchema } from "@tenantplane/api";
import { type Decision, DecisionActionSchema, DecisionSchema, subjects } from "@tenantplane/messaging";
import { outputFlag, parseCommandLine, parseDuration, stringFlag, usageError } from "./args.js";
import { CliError, type CliIo, EXIT_STATUS_HELP } from "./cli-io.js";
import {
  DECISION_FORMATS,
  type DecisionFormat,
  followHeader,
  followLine,
  formatDecisionJson,
  formatDecisionTable,
} from "./decisions-format.js";
import { SYNC_KIND_NAMES, syncKindOf } from "./kinds.js";
import { NATS_FLAGS, NATS_FLAGS_HELP, natsUrlOf, openNats } from "./nats-access.js";

/** Usage text of `tenantplane decisions`. */
export const DECISIONS_HELP = `Usage: tenantplane decisions [--tenant <name>] [--kind <kind>] [--action <action>] [--since <duration>] [--follow] [-o table|json]

Reads tenantplane's Decisions (what was done to which host object, and why) from the
DECISIONS stream in NATS JetStream, the way any outside subscriber would: an ordered
consumer filtered on tenantplane.decisions.<tenant>.<kind>.<action>. It creates nothing
durable on the server.

Options:
  --tenant <name>     only this tenant's Decisions
  --kind <kind>       only this kind: Pod, ConfigMap, Secret, Service, ServiceAccount,
                      PersistentVolumeClaim (kubectl names such as cm, svc, pvc work too)
  --action <action>   only Create, Update, Delete or Skip
  --since <duration>  only Decisions from the last <duration> (e.g. 30s, 10m, 1h30m);
                      default: everything the stream holds
  -f, --follow        keep printing new Decisions as they are published (Ctrl-C stops)
${NATS_FLAGS_HELP}
  -o, --output <fmt>  table (default) or json (one Decision per line, as published)
  -h, --help          show this help

Examples:
  tenantplane decisions --tenant payments-dev --since 10m
  tenantplane decisions --action Delete --follow
  tenantplane decisions --tenant payments-dev --kind cm -o json | jq .reason

${EXIT_STATUS_HELP}
`;

/** What `decisions` reads: the subject filter, where to start, and how to print. */
export interface DecisionsOptions {
  subject: string;
  /** Start time (RFC 3339), or undefined for everything the stream holds. */
  since: string | undefined;
  follow: boolean;
  output: DecisionFormat;
  natsUrl: string | undefined;
}

/** The subject filter for the given tenant, kind and action; unset parts are wildcards. */
export function decisionSubject(filter: {
  tenant?: string | undefined;
  kind?: string | undefined;
  action?: string | undefined;
}): string {
  return `tenantplane.decisions.${filter.tenant ?? "*"}.${filter.kind ?? "*"}.${filter.action ?? "*"}`;
}

/** Parses the command line of `decisions` (without the command name); `now` anchors --since. */
export function parseDecisionsArgs(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now: Date,
): DecisionsOptions | "help" {
  const line = parseCommandLine("decisions", args, {
    tenant: { type: "string" },
    kind: { type: "string" },
    action: { type: "string" },
    since: { type: "string" },
    follow: { type: "boolean", short: "f" },
    output: { type: "string", short: "o" },
    ...NATS_FLAGS,
  });
  if (line.help) return "help";
  if (line.positionals.length > 0) throw usageError("decisions", `Unexpected argument '${line.positionals[0]}'`);
  const output = outputFlag("decisions", line, DECISION_FORMATS);
  const tenant = stringFlag(line, "tenant");
  if (tenant !== undefined && !TenantNameSchema.safeParse(tenant).success) {
    throw new CliError(`--tenant ${JSON.stringify(tenant)}: a tenant name ${TENANT_NAME_MESSAGE}`);
  }
  const kindText = stringFlag(line, "kind");
  const kind = kindText === undefined ? undefined : decisionKindOf(kindText);
  if (kindText !== undefined && kind === undefined) {
    throw new CliError(
      `--kind ${JSON.stringify(kindText)}: use a Kind such as ${SYNC_KIND_NAMES}, or another Kind tenantplane decides about (Namespace, StatefulSet, NetworkPolicy, ...)`,
    );
  }
  const actionText = stringFlag(line, "action");
  const action =
    actionText === undefined
      ? undefined
      : DecisionActionSchema.options.find((a) => a.toLowerCase() === actionText.toLowerCase());
  if (actionText !== undefined && action === undefined) {
    throw new CliError(`--action ${JSON.stringify(actionText)}: use one of ${DecisionActionSchema.options.join(", ")}`);
  }
  const sinceText = stringFlag(line, "since");
  const sinceMs = sinceText === undefined ? undefined : parseDuration(sinceText);
  if (sinceText !== undefined && sinceMs === undefined) {
    throw new CliError(`--since ${JSON.stringify(sinceText)}: use a duration such as 30s, 10m or 1h30m`);
  }
  return {
    subject: decisionSubject({ tenant, kind, action }),
    // A duration longer than the epoch means "everything"; Date cannot represent much earlier.
    since: sinceMs === undefined ? undefined : new Date(Math.max(0, now.getTime() - sinceMs)).toISOString(),
    follow: line.values["follow"] === true,
    output,
    natsUrl: natsUrlOf(stringFlag(line, "nats-url"), env),
  };
}

/**
 * The Kind token of `--kind`: kubectl's names of the synced kinds map to their Kind; any
 * other Kind-shaped word (services also decide about Namespaces, StatefulSets, ...) is kept.
 */
export function decisionKindOf(text: string): string | undefined {
  return syncKindOf(text) ?? (/^[A-Z][A-Za-z0-9]*$/.test(text) ? text : undefined);
}

/** A message from the stream read as a Decision, or why it is not one. */
export function readDecision(data: Uint8Array): { decision: Decision } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return { problem: "not JSON" };
  }
  const parsed = DecisionSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { problem: `not a Decision (${issue?.path.join(".") || "message"}: ${issue?.message ?? "invalid"})` };
  }
  return { decision: parsed.data };
}

/** How long a history read waits for more messages before it calls the stream exhausted. */
const FETCH_EXPIRES_MS = 1_500;

/**
 * Reads the Decisions matching `subject` from `since` (or the stream's start): all of
 * them, then, with `follow`, each new one until `signal` aborts. `onDecision` gets each
 * in stream order; `onProblem` each message that is not a Decision.
 */
export async function readDecisions(
  natsUrl: string,
  env: Readonly<Record<string, string | undefined>>,
  options: { subject: string; since: string | undefined; follow: boolean; signal?: AbortSignal | undefined },
  onDecision: (decision: Decision) => void,
  onProblem: (problem: string) => void,
): Promise<void> {
  const nc = await openNats(natsUrl, env);
  try {
    const js = jetstream(nc);
    let consumer;
    try {
      consumer = await js.consumers.get(subjects.decisionsStream, {
        filter_subjects: [options.subject],
        ...(options.since === undefined
          ? { deliver_policy: DeliverPolicy.All }
          : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: options.since }),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/stream not found/i.test(message)) {
        throw new CliError(
          `NATS at ${natsUrl} has no stream ${subjects.decisionsStream}: no tenantplane service has started against this server; check --nats-url`,
        );
      }
      throw error;
    }
    const handle = (m: JsMsg) => {
      const read = readDecision(m.data);
      if ("decision" in read) onDecision(read.decision);
      else onProblem(`message ${m.seq} on ${m.subject}: ${read.problem}; skipped`);
    };
    if (!options.follow) {
      for (;;) {
        const batch = await consumer.fetch({ max_messages: 256, expires: FETCH_EXPIRES_MS });
        let seen = 0;
        let pending = 1;
        for await (const m of batch) {
          seen++;
          handle(m);
          pending = m.info.pending;
          if (pending === 0) break;
        }
        if (seen === 0 || pending === 0) return;
      }
    }
    const messages = await consumer.consume();
    const stop = () => void messages.close();
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener("abort", stop, { once: true });
    try {
      for await (const m of messages) handle(m);
    } finally {
      options.signal?.removeEventListener("abort", stop);
    }
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/** Runs `decisions` with the arguments after the command name. */
export async function decisions(args: readonly string[], io: CliIo): Promise<number> {
  const env = io.env ?? {};
  const options = parseDecisionsArgs(args, env, io.now());
  if (options === "help") {
    io.stdout(DECISIONS_HELP);
    return 0;
  }
  if (options.natsUrl === undefined) throw usageError("decisions", "no NATS server: pass --nats-url or set NATS_URL");
  const color = io.color === true;
  const problem = (text: string) => io.stderr(`tenantplane decisions: ${text}\n`);
  if (options.output === "json") {
    await readDecisions(
      options.natsUrl,
      env,
      { ...options, signal: io.signal },
      (d) => io.stdout(formatDecisionJson(d)),
      problem,
    );
    return 0;
  }
  if (options.follow) {
    io.stdout(followHeader());
    await readDecisions(
      options.natsUrl,
      env,
      { ...options, signal: io.signal },
      (d) => io.stdout(followLine(d, { color })),
      problem,
    );
    return 0;
  }
  const found: Decision[] = [];
  await readDecisions(options.natsUrl, env, options, (d) => found.push(d), problem);
  io.stdout(
    found.length === 0
      ? `no Decisions match ${options.subject}${options.since ? ` since ${options.since}` : ""}\n`
      : formatDecisionTable(found, { color }),
  );
  return 0;
}
