import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError, EXIT_USAGE } from "./cli-io.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Parsed flags and positionals of one command; `help` is true when -h/--help was given. */
export interface CommandLine {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  help: boolean;
}

/**
 * Parses `args` strictly with `options` plus `-h/--help`. Anything that does not parse is
 * a usage error (exit 2) pointing at `tenantplane <command> --help`.
 */
export function parseCommandLine(command: string, args: readonly string[], options: Options): CommandLine {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: true,
      options: { ...options, help: { type: "boolean", short: "h" } },
    });
    const flat = values as Record<string, string | boolean | undefined>;
    return { values: flat, positionals, help: flat["help"] === true };
  } catch (error) {
    throw usageError(command, error instanceof Error ? error.message : String(error));
  }
}

/** A usage error (exit 2) for `command`, pointing at its help. */
export function usageError(command: string, message: string): CliError {
  return new CliError(`${message}\nRun 'tenantplane ${command} --help' for usage.`, EXIT_USAGE);
}

/** The string value of flag `name`, or undefined. */
export function stringFlag(line: CommandLine, name: string): string | undefined {
  const value = line.values[name];
  return typeof value === "string" ? value : undefined;
}

/** The value of `-o` checked against `allowed`; a usage error names the allowed formats. */
export function outputFlag<T extends string>(command: string, line: CommandLine, allowed: readonly T[]): T {
  const value = stringFlag(line, "output") ?? allowed[0];
  const found = allowed.find((format) => format === value);
  if (found === undefined) throw usageError(command, `-o ${String(value)}: use one of ${allowed.join(", ")}`);
  return found;
}

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/**
 * Milliseconds of a duration such as `90s`, `10m`, `1h30m` (hours, minutes, seconds, in that
 * order); undefined when `text` is not one.
 */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (match === null || text === "") return undefined;
  const [, h, m, s] = match;
  return ((Number(h ?? 0) * 60 + Number(m ?? 0)) * 60 + Number(s ?? 0)) * 1000;
}
