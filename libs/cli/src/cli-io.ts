/** Everything a command may touch outside itself; `main.ts` wires the real process, tests pass fakes. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads a UTF-8 file; `-` reads standard input. */
  readFile(path: string): Promise<string>;
  now(): Date;
  /** Print stacks of unexpected errors (TENANTPLANE_DEBUG=1). */
  debug?: boolean;
}

/** Exit status for input the command could not use (files, tenant name, policy). */
export const EXIT_INVALID_INPUT = 1;
/** Exit status for a command line that does not parse (unknown flag, missing option). */
export const EXIT_USAGE = 2;

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
