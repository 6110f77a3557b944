import { readFile } from "node:fs/promises";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";

/** The oldest NATS server tenantplane runs against: per-message TTL and delete markers arrived in 2.11. */
export const MIN_SERVER_VERSION = "2.11.0";

/** How a service reaches NATS; credentials never end up in logs because only `url` is ever logged. */
export interface NatsOptions {
  url: string;
  name: string;
  user?: string | undefined;
  password?: string | undefined;
  token?: string | undefined;
  credsFile?: string | undefined;
}

/** Raised when the server is too old; terminal, the operator must upgrade. */
export class ServerVersionError extends Error {
  constructor(found: string) {
    super(
      `NATS server ${found} is too old: tenantplane needs ${MIN_SERVER_VERSION} or newer ` +
        `(per-message TTL and delete markers); upgrade the server NATS_URL points at`,
    );
    this.name = "ServerVersionError";
  }
}

/**
 * Connects with unlimited reconnects (a NATS restart must never kill a service)
 * and refuses servers older than MIN_SERVER_VERSION.
 */
export async function connectNats(opts: NatsOptions): Promise<NatsConnection> {
  const nc = await connect({
    servers: opts.url,
    name: opts.name,
    user: opts.user,
    pass: opts.password,
    token: opts.token,
    authenticator: opts.credsFile ? credsAuthenticator(await readFile(opts.credsFile)) : undefined,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    reconnectJitter: 250,
    pingInterval: 10_000,
  });
  const version = nc.info?.version ?? "0.0.0";
  if (compareVersions(version, MIN_SERVER_VERSION) < 0) {
    await nc.close();
    throw new ServerVersionError(version);
  }
  return nc;
}

/** Compares dotted versions numerically, ignoring pre-release suffixes. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) =>
    v
      .split("-")[0]!
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0);
  const [pa, pb] = [parse(a), parse(b)];
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}
