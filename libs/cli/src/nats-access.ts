import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats, ServerVersionError } from "@tenantplane/messaging";
import { CliError, EXIT_UNREACHABLE } from "./cli-io.js";

/** The `--nats-url` flag of commands that read Decisions. */
export const NATS_FLAGS = { "nats-url": { type: "string" } } as const;

/** Help line of {@link NATS_FLAGS}. */
export const NATS_FLAGS_HELP = `  --nats-url <url>    NATS server (default: $NATS_URL); credentials from NATS_USER and
                      NATS_PASSWORD, NATS_TOKEN or NATS_CREDS_FILE`;

/** The NATS URL from `--nats-url`, else `NATS_URL`; undefined when neither is set. */
export function natsUrlOf(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  return flag ?? (env["NATS_URL"] || undefined);
}

/**
 * Connects to NATS as an outside subscriber would. Unreachable is exit 3; refused
 * credentials or a server too old for tenantplane are exit 1 with what to change.
 */
export async function openNats(
  url: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<NatsConnection> {
  try {
    return await connectNats({
      url,
      name: "tenantplane-cli",
      user: env["NATS_USER"] || undefined,
      password: env["NATS_PASSWORD"] || undefined,
      token: env["NATS_TOKEN"] || undefined,
      credsFile: env["NATS_CREDS_FILE"] || undefined,
    });
  } catch (error) {
    if (error instanceof ServerVersionError) throw new CliError(error.message);
    const message = error instanceof Error ? error.message : String(error);
    if (/auth/i.test(message) || /auth/i.test(String((error as { name?: string }).name))) {
      throw new CliError(
        `NATS at ${url} refused the connection (${message}): set NATS_USER and NATS_PASSWORD, NATS_TOKEN or NATS_CREDS_FILE`,
      );
    }
    throw new CliError(
      `cannot reach NATS at ${url} (${message}): check that it is running and that --nats-url or NATS_URL point at it`,
      EXIT_UNREACHABLE,
    );
  }
}
