/** Everything a command may touch outside itself; `main.ts` wires the real process, tests pass fakes. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads a UTF-8 file; `-` reads standard input. */
  readFile(path: string): Promise<string>;
  now(): Date;
  /** Print stacks of unexpected errors (TENANTPLANE_DEBUG=1). */
  debug?: boolean;
  /** The environment (NATS_URL, KUBECONFIG, CONTENT_HASH_KEY); absent: none. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Colour table cells: stdout is a terminal and NO_COLOR is unset. */
  color?: boolean;
  /** Aborted on Ctrl-C: following commands (`decisions --follow`, `--wait`) stop and exit 0. */
  signal?: AbortSignal;
}

/** Exit status for input the command could not use (files, tenant name, policy, a missing object). */
export const EXIT_INVALID_INPUT = 1;
/** Exit status for a command line that does not parse (unknown flag, missing option). */
export const EXIT_USAGE = 2;
/** Exit status when the host cluster, a tenant API or NATS cannot be reached. */
export const EXIT_UNREACHABLE = 3;

/** A failure the user can fix; its message is printed as is and the process exits with `exitCode`. */
export class CliError extends Error {
  override readonly name = "CliError";

  constructor(
    message: string,
    readonly exitCode: number = EXIT_INVALID_INPUT,
  ) {
    super(message);
  }
}

/** The exit-status paragraph every command's help ends with. */
export const EXIT_STATUS_HELP = `Exit status: 0 ok; 1 invalid input (the message names the field or object);
2 invalid command line; 3 the host cluster, a tenant API or NATS cannot be reached.`;

/** Whether tables may be coloured: only on a terminal, and never with `NO_COLOR` set to anything non-empty (no-color.org). */
export function colorEnabled(isTty: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  const noColor = env["NO_COLOR"];
  return isTty && (noColor === undefined || noColor === "");
}
