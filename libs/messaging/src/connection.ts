import { readFile } from "node:fs/promises";
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
  type Status,
} from "@nats-io/transport-node";

/** The Node transport's TLS settings (CA, client certificate and key files). */
type NodeTlsOptions = NonNullable<NodeConnectionOptions["tls"]>;

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
  /** Require TLS; implied by any of the files below. Without a CA file the system CAs verify the server. */
  tls?: boolean | undefined;
  /** PEM bundle of the CA(s) that signed the server certificate. */
  tlsCaFile?: string | undefined;
  /** PEM client certificate and key for mutual TLS; both or neither. */
  tlsCertFile?: string | undefined;
  tlsKeyFile?: string | undefined;
}

/** Raised for options that cannot work together; terminal, the operator must fix the configuration. */
export class NatsOptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NatsOptionsError";
  }
}

/**
 * The server list of a NATS URL that may name every member of a cluster separated by
 * commas, so a service can reach any member and fail over between them.
 */
export function natsServers(url: string): string[] {
  return url
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * The servers of a NATS URL setting as they may be logged: scheme, host and port only,
 * since a URL can carry `user:password@` (which the client accepts) and logs must not.
 */
export function loggableServers(url: string): string[] {
  return natsServers(url).map((server) => {
    try {
      const parsed = new URL(server.includes("://") ? server : `nats://${server}`);
      return `${parsed.protocol}//${parsed.host}`;
    } catch {
      return "(unparsable server URL)";
    }
  });
}

/**
 * TLS settings for the client, or undefined for plain connections. The files are read by
 * the transport at connect time, so a rotated certificate is picked up on reconnect.
 */
export function natsTlsOptions(opts: NatsOptions): NodeTlsOptions | undefined {
  if ((opts.tlsCertFile === undefined) !== (opts.tlsKeyFile === undefined)) {
    throw new NatsOptionsError(
      "NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together: set both for mutual TLS, or neither",
    );
  }
  if (!opts.tls && !opts.tlsCaFile && !opts.tlsCertFile) return undefined;
  const tls: NodeTlsOptions = {};
  if (opts.tlsCaFile) tls.caFile = opts.tlsCaFile;
  if (opts.tlsCertFile) tls.certFile = opts.tlsCertFile;
  if (opts.tlsKeyFile) tls.keyFile = opts.tlsKeyFile;
  return tls;
}

/** The client options for `opts`, without I/O beyond reading the credentials file. */
export async function natsConnectionOptions(opts: NatsOptions): Promise<NodeConnectionOptions> {
  return {
    servers: natsServers(opts.url),
    name: opts.name,
    user: opts.user,
    pass: opts.password,
    token: opts.token,
    authenticator: opts.credsFile ? credsAuthenticator(await readFile(opts.credsFile)) : undefined,
    tls: natsTlsOptions(opts),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    reconnectJitter: 250,
    pingInterval: 10_000,
    // Otherwise every request builds two errors with captured stacks up front, in case it fails:
    // the sync worker renews up to 128 leases every 2 s, and that garbage alone kept its young
    // generation large (bench/footprint.ts). Failures still say what failed, without the caller's frames.
    noAsyncTraces: true,
  };
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
 * Connects to any server of `opts.url` with unlimited reconnects (a NATS restart must
 * never kill a service) and refuses servers older than MIN_SERVER_VERSION.
 */
export async function connectNats(opts: NatsOptions): Promise<NatsConnection> {
  const nc = await connect(await natsConnectionOptions(opts));
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

/**
 * Whether the client holds a connection to a server after `status`, given whether it
 * did before. Losing the socket (disconnect, a stale connection, a forced reconnect)
 * or closing counts as down until the client reports `reconnect`; every other event
 * (cluster updates, pings, server errors) leaves the state as it was.
 */
export function connectedAfter(connected: boolean, status: Pick<Status, "type">): boolean {
  switch (status.type) {
    case "reconnect":
      return true;
    case "disconnect":
    case "reconnecting":
    case "staleConnection":
    case "forceReconnect":
    case "close":
      return false;
    default:
      return connected;
  }
}

/** A live view of one connection's state, for readiness. */
export interface ConnectionState {
  /** True while the client holds a connection to some server. */
  connected(): boolean;
}

/**
 * Follows `nc`'s status events (connected at the start, as a connection returned by
 * connectNats is) and calls `onChange` whenever the state flips, with the event that
 * flipped it. Never throws; ends with the connection.
 */
export function trackConnection(
  nc: NatsConnection,
  onChange: (connected: boolean, status: Status) => void = () => undefined,
): ConnectionState {
  let connected = !nc.isClosed();
  void (async () => {
    for await (const status of nc.status()) {
      const next = connectedAfter(connected, status);
      if (next === connected) continue;
      connected = next;
      onChange(next, status);
    }
    connected = false;
  })();
  return { connected: () => connected };
}
