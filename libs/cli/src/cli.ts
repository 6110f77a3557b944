import { CliError, type CliIo, EXIT_INVALID_INPUT, EXIT_USAGE } from "./cli-io.js";
import { explainSync } from "./explain-sync.js";

/** Usage text of `tenantplane`. */
export const CLI_HELP = `Usage: tenantplane <command> [options]

Commands:
  explain-sync   predict where tenant objects land on the host and why

Run 'tenantplane <command> --help' for a command's options.
`;

const COMMANDS: Record<string, (args: readonly string[], io: CliIo) => Promise<number>> = {
  "explain-sync": explainSync,
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
    const detail = io.debug === true && error instanceof Error ? (error.stack ?? error.message) : firstLine(error);
    io.stderr(`tenantplane ${command}: unexpected error: ${detail}\n`);
    return EXIT_INVALID_INPUT;
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
}
