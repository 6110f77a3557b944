import { CliError, type CliIo, EXIT_INVALID_INPUT, EXIT_STATUS_HELP, EXIT_UNREACHABLE, EXIT_USAGE } from "./cli-io.js";
import { decisions } from "./decisions.js";
import { explain } from "./explain.js";
import { explainSync } from "./explain-sync.js";
import { isUnreachable } from "./host.js";
import { joinCommand } from "./join-command.js";
import { kubeconfig } from "./kubeconfig.js";
import { create, get } from "./tenants.js";

/** Usage text of `tenantplane` (also run as `kubectl tenantplane`). */
export const CLI_HELP = `Usage: tenantplane <command> [options]
       kubectl tenantplane <command> [options]

Commands:
  explain-sync   predict what the sync worker does with tenant objects, and why
  explain        say why a host object exists (or that it is not tenantplane's), why a tenant
                 object was not copied (--tenant), or what a tenant has not synced
  decisions      read and follow Decisions from NATS
  kubeconfig     print a tenant's admin kubeconfig
  join-command   print the command that joins a machine to a Private tenant as its node
  get tenants    list tenants: phase, conditions, endpoint, sync counts
  create tenant  create a TenantCluster

Commands that read the host cluster use the kubeconfig's current context (--kubeconfig,
then KUBECONFIG, ~/.kube/config, the in-cluster service account; --context to choose); those
that read Decisions use --nats-url or NATS_URL. 'explain-sync --offline' needs neither. Output is
chosen with -o; colours appear only on a terminal and never with NO_COLOR set.

Examples:
  tenantplane get tenants
  tenantplane explain-sync --tenant payments-dev -f app.yaml
  tenantplane explain configmap/settings-x-shop-x-payments-dev -n tp-payments-dev
  tenantplane explain pod/shop/web --tenant payments-dev
  tenantplane decisions --tenant payments-dev --since 10m --follow
  tenantplane join-command tc/payments-dev

${EXIT_STATUS_HELP}
Run 'tenantplane <command> --help' for a command's options and examples.
`;

const COMMANDS: Record<string, (args: readonly string[], io: CliIo) => Promise<number>> = {
  "explain-sync": explainSync,
  explain,
  decisions,
  kubeconfig,
  "join-command": joinCommand,
  get,
  create,
};

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit
 * status. User errors are printed on stderr as they are; anything else is a bug, printed
 * as one line (set TENANTPLANE_DEBUG=1 in the environment for the stack) with exit 1.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    io.stdout(CLI_HELP);
    return command === undefined ? EXIT_USAGE : 0;
  }
  const run = COMMANDS[command];
  if (run === undefined) {
    io.stderr(`tenantplane: unknown command ${JSON.stringify(command)}\n${CLI_HELP}`);
    return EXIT_USAGE;
  }
  try {
    return await run(args, io);
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr(`tenantplane ${command}: ${error.message}\n`);
      return error.exitCode;
    }
    if (isUnreachable(error)) {
      io.stderr(
        `tenantplane ${command}: cannot reach a server: ${firstLine(error)}; check --kubeconfig, --context and --nats-url\n`,
      );
      return EXIT_UNREACHABLE;
    }
    const detail = io.debug === true && error instanceof Error ? (error.stack ?? error.message) : firstLine(error);
    io.stderr(`tenantplane ${command}: unexpected error: ${detail}\n`);
    return EXIT_INVALID_INPUT;
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
}
