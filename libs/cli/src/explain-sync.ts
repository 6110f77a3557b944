import { parseArgs } from "node:util";
import { defaultSyncPolicySpec, TENANT_NAME_MESSAGE, TenantNameSchema } from "@tenantplane/api";
import { type Decision, DecisionSchema } from "@tenantplane/messaging";
import {
  applyServiceQuota,
  compileHostRules,
  contentHash,
  defaultHostRules,
  explanation,
  plan,
  type PlannedDecisionWithObject,
} from "@tenantplane/sync";
import { CliError, type CliIo, EXIT_INVALID_INPUT, EXIT_USAGE } from "./cli-io.js";
import { formatDecisions, formatTable, OUTPUT_FORMATS, type OutputFormat } from "./format.js";
import { readManifests } from "./read-manifests.js";
import { parsePolicyManifest, parseProfileManifest } from "./read-policy.js";

/** The `service` field of Decisions printed by explain-sync. */
export const EXPLAIN_SYNC_SERVICE = "explain-sync";

/** Usage text of `tenantplane explain-sync`. */
export const EXPLAIN_SYNC_HELP = `Usage: tenantplane explain-sync --offline --tenant <name> -f <file|-> [--policy <file>] [--profile <file>] [-o table|json|yaml]

Predicts where each tenant object would land on the host and what the sync engine would
do with it, using the same planner as the sync service against an empty host namespace.

Options:
  --offline           plan without contacting a cluster (required; the only mode so far)
  --tenant <name>     tenant name: a DNS label of at most 60 characters
  -f, --file <file>   multi-document YAML or JSON with tenant objects; '-' reads stdin.
                      List kinds contribute their items; objects without a namespace
                      (or namespace "") are placed in 'default'. Reasons cite objects as
                      'item N', counting objects (List items one by one) from 1.
  --policy <file>     a SyncPolicy manifest (apiVersion tenantplane.io/v1alpha1);
                      default: every supported kind is synced
  --profile <file>    an IsolationProfile manifest whose host rules (spec.workloads, the
                      Pod Security enforce level, the Service quota) the plan applies;
                      default: the built-in profile
  -o, --output <fmt>  table (default), json or yaml; json and yaml print Decisions
  -h, --help          show this help

Exit status: 0 planned, 1 invalid input (an unreadable file, tenant, policy or profile;
or any malformed document or object, after planning all the others), 2 invalid command line.
`;

interface ExplainOptions {
  tenant: string;
  file: string;
  policy: string | undefined;
  profile: string | undefined;
  output: OutputFormat;
}

/**
 * Runs `explain-sync` with the arguments after the command name; prints the plan on
 * stdout and returns the exit status. Throws {@link CliError} for input it cannot use.
 */
export async function explainSync(args: readonly string[], io: CliIo): Promise<number> {
  const options = parseOptions(args);
  if (options === "help") {
    io.stdout(EXPLAIN_SYNC_HELP);
    return 0;
  }
  const policy =
    options.policy === undefined
      ? defaultSyncPolicySpec
      : parsePolicyManifest(await read(io, options.policy), options.policy);
  const rules =
    options.profile === undefined
      ? defaultHostRules
      : compileHostRules(parseProfileManifest(await read(io, options.profile), options.profile));
  const source = options.file === "-" ? "<stdin>" : options.file;
  const { objects: tenantObjects, problems } = readManifests(await read(io, options.file), source);
  const planned = plan({ tenant: options.tenant, policy, rules, tenantObjects, hostObjects: [] });
  const entries = explanation(applyServiceQuota(planned, rules, options.tenant, []));

  if (options.output === "table") {
    io.stdout(entries.length === 0 ? `no objects found in ${source}\n` : formatTable(entries));
  } else {
    const time = io.now().toISOString();
    io.stdout(
      formatDecisions(
        entries.map((entry) => toDecision(entry, time)),
        options.output,
      ),
    );
  }
  // Everything readable is planned and printed first; bad input still fails the run.
  for (const problem of problems) io.stderr(`tenantplane explain-sync: ${problem}\n`);
  const malformed = entries.filter((entry) => entry.malformed === true).length;
  if (malformed > 0) {
    io.stderr(
      `tenantplane explain-sync: ${source}: ${malformed} malformed ${malformed === 1 ? "object" : "objects"} (Skip rows citing 'item N')\n`,
    );
  }
  return problems.length > 0 || malformed > 0 ? EXIT_INVALID_INPUT : 0;
}

/** A planned entry stamped as a Decision; the id is a hash of its content, so reruns agree. */
export function toDecision(entry: PlannedDecisionWithObject, time: string): Decision {
  const { tenant, action, kind, tenantRef, hostRef, reason } = entry;
  const planned = { tenant, action, kind, tenantRef, hostRef, reason };
  return DecisionSchema.parse({ id: contentHash(planned), time, service: EXPLAIN_SYNC_SERVICE, ...planned });
}

function parseOptions(args: readonly string[]): ExplainOptions | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        offline: { type: "boolean" },
        tenant: { type: "string" },
        file: { type: "string", short: "f" },
        policy: { type: "string" },
        profile: { type: "string" },
        output: { type: "string", short: "o", default: "table" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw usage(error instanceof Error ? error.message : String(error));
  }
  if (values.help === true) return "help";
  if (values.offline !== true) {
    throw usage("explain-sync needs --offline: planning against a live host cluster is not available yet");
  }
  if (values.tenant === undefined) throw usage("missing --tenant <name>");
  if (values.file === undefined) throw usage("missing -f <file|->");
  const output = OUTPUT_FORMATS.find((format) => format === values.output);
  if (output === undefined) throw usage(`-o ${values.output}: use one of ${OUTPUT_FORMATS.join(", ")}`);
  if (!TenantNameSchema.safeParse(values.tenant).success) {
    throw new CliError(`--tenant ${JSON.stringify(values.tenant)}: a tenant name ${TENANT_NAME_MESSAGE}`);
  }
  return { tenant: values.tenant, file: values.file, policy: values.policy, profile: values.profile, output };
}

async function read(io: CliIo, path: string): Promise<string> {
  try {
    return await io.readFile(path);
  } catch (error) {
    throw new CliError(
      `cannot read ${path === "-" ? "<stdin>" : path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function usage(message: string): CliError {
  return new CliError(`${message}\nRun 'tenantplane explain-sync --help' for usage.`, EXIT_USAGE);
}
