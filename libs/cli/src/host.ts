import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { JsonClient, KubeApiError, kubeConfigFromString, loadKubeConfig, Objects } from "@tenantplane/kube";
import type { CommandLine } from "./args.js";
import { CliError, type CliIo, EXIT_INVALID_INPUT, EXIT_UNREACHABLE } from "./cli-io.js";
import { findKubeconfig, noKubeconfigMessage } from "./kubeconfig-sources.js";

/** Field manager of the CLI's writes (`create tenant`). */
export const CLI_FIELD_MANAGER = "tenantplane-cli";

/** How to reach the host cluster: `--kubeconfig` and `--context`; unset means the usual defaults. */
export interface HostOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  /** The environment the defaults come from (KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST); absent: none. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The {@link HostOptions} of a parsed command line with {@link HOST_FLAGS}, in `io`'s environment. */
export function hostOptionsOf(line: CommandLine, io: CliIo): HostOptions {
  const flag = (name: string) => (typeof line.values[name] === "string" ? (line.values[name] as string) : undefined);
  return { kubeconfig: flag("kubeconfig"), context: flag("context"), env: io.env ?? {} };
}

/** A cluster the CLI talks to: its objects as plain JSON and the server address, for messages. */
export interface Cluster {
  objects: Objects;
  /** Raw requests, for writes sent exactly as another component sends them (explain-sync's dry runs). */
  client: JsonClient;
  server: string;
  /** What to call it in messages: "the host cluster" or "tenant X's API". */
  label: string;
}

/** The host-cluster flags every live command accepts. */
export const HOST_FLAGS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
} as const;

/** Help lines of {@link HOST_FLAGS}. */
export const HOST_FLAGS_HELP = `  --kubeconfig <file> host cluster kubeconfig (default: $KUBECONFIG, then ~/.kube/config,
                      then the in-cluster service account)
  --context <name>    kubeconfig context (default: the current context)`;

/**
 * Opens the host cluster named by the kubeconfig's current context (or `--context`).
 * A missing file or context is the user's to fix (exit 1), and so is having no
 * configuration at all: the message lists the sources tried. Nothing is contacted yet.
 */
export function openHost(options: HostOptions): Cluster {
  const source = findKubeconfig({
    flag: options.kubeconfig,
    env: options.env ?? {},
    home: homedir(),
    exists: existsSync,
  });
  if ("tried" in source) throw new CliError(noKubeconfigMessage(source.tried));
  let kc;
  try {
    if (source.type === "in-cluster") {
      kc = loadKubeConfig();
    } else {
      const [first, ...more] = source.paths;
      kc = loadKubeConfig(first);
      // Later files add clusters, users and contexts; the first file's current context wins, as in kubectl.
      for (const path of more) kc.mergeConfig(loadKubeConfig(path), true);
    }
  } catch (error) {
    const where = source.type === "in-cluster" ? "the in-cluster service account" : source.paths.join(", ");
    const via = source.type === "files" && source.via !== "--kubeconfig" ? ` (from ${source.via})` : "";
    throw new CliError(`--kubeconfig: cannot load ${where}${via}: ${firstLine(error)}`);
  }
  if (options.context !== undefined) {
    const names = kc.getContexts().map((c) => c.name);
    if (!names.includes(options.context)) {
      throw new CliError(
        `--context ${JSON.stringify(options.context)}: no such context in the kubeconfig (it has: ${names.join(", ") || "none"})`,
      );
    }
    kc.setCurrentContext(options.context);
  }
  const server = kc.getCurrentCluster()?.server;
  if (!server) {
    throw new CliError("the kubeconfig names no cluster for its current context: pass --kubeconfig or --context");
  }
  return {
    objects: new Objects(kc, CLI_FIELD_MANAGER),
    client: new JsonClient(kc, { userAgent: CLI_FIELD_MANAGER }),
    server,
    label: "the host cluster",
  };
}

/** A tenant API opened from its admin kubeconfig text (as stored in the tenant's Secret); writes as `fieldManager`. */
export function openTenant(tenant: string, kubeconfig: string, fieldManager = CLI_FIELD_MANAGER): Cluster {
  const kc = kubeConfigFromString(kubeconfig);
  const server = kc.getCurrentCluster()?.server ?? "";
  return {
    objects: new Objects(kc, fieldManager),
    client: new JsonClient(kc, { userAgent: CLI_FIELD_MANAGER }),
    server,
    label: `tenant ${tenant}'s API`,
  };
}

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ECONNABORTED",
]);

/** Whether `error` says the server could not be reached at all (as opposed to an answer). */
export function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && isUnreachable(cause);
}

/**
 * The {@link CliError} for a failed call to `cluster` while doing `doing` (e.g. "read
 * TenantCluster dev"): unreachable → exit 3 saying what to check; 401/403 → exit 1 naming
 * the permission; other answers → exit 1 with the server's message. Non-API errors pass through.
 */
export function clusterError(cluster: Cluster, doing: string, error: unknown, permission?: string): unknown {
  if (error instanceof CliError) return error;
  if (isUnreachable(error)) {
    const code = (error as { code?: string }).code ?? "unreachable";
    return new CliError(
      `cannot reach ${cluster.label} at ${cluster.server} (${code}) to ${doing}: check that it is running and that --kubeconfig/--context point at it`,
      EXIT_UNREACHABLE,
    );
  }
  if (error instanceof KubeApiError) {
    if (error.code === 401) {
      return new CliError(
        `${cluster.label} at ${cluster.server} refused the kubeconfig's credentials (401) to ${doing}: renew them or choose another --context`,
      );
    }
    if (error.code === 403) {
      const needs = permission === undefined ? "" : `; this needs RBAC permission ${permission}`;
      return new CliError(`forbidden to ${doing}: ${error.body.message ?? "HTTP 403"}${needs}`);
    }
    return new CliError(`cannot ${doing}: ${error.body.message ?? `HTTP ${error.code}`}`, EXIT_INVALID_INPUT);
  }
  const message = firstLine(error);
  if (/does not serve kind/.test(message)) {
    return new CliError(`cannot ${doing}: ${message}; are the tenantplane CRDs installed on ${cluster.server}?`);
  }
  return error;
}

/** Runs `call` against `cluster`, turning its failures into {@link clusterError}s. */
export async function onCluster<T>(
  cluster: Cluster,
  doing: string,
  call: (objects: Objects) => Promise<T>,
  permission?: string,
): Promise<T> {
  try {
    return await call(cluster.objects);
  } catch (error) {
    throw clusterError(cluster, doing, error, permission);
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
}
