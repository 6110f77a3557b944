import { API_VERSION, KIND_TENANT_CLUSTER, TENANT_NAME_MESSAGE, TenantNameSchema } from "@tenantplane/api";
import { outputFlag, parseCommandLine, parseDuration, stringFlag, usageError } from "./args.js";
import { CliError, type CliIo, EXIT_STATUS_HELP } from "./cli-io.js";
import { HOST_FLAGS, HOST_FLAGS_HELP, onCluster, hostOptionsOf, openHost } from "./host.js";
import { TENANT_CLUSTER_NAMES } from "./kinds.js";
import { type RawObject } from "./tenant-context.js";
import { conditionsOf, formatTenants, TENANT_FORMATS } from "./tenants-format.js";

/** Exit 1 naming `field` when `name` cannot be a tenant name. */
export function checkTenantName(name: string, field: string): void {
  if (!TenantNameSchema.safeParse(name).success) {
    throw new CliError(`${field} ${JSON.stringify(name)}: a tenant name ${TENANT_NAME_MESSAGE}`);
  }
}

/** Usage text of `tenantplane get`. */
export const GET_HELP = `Usage: tenantplane get tenants [<name>...] [-o table|json|yaml|name] [--kubeconfig <file>] [--context <name>]

Lists TenantClusters: phase, conditions, the endpoint a user outside the host cluster can
use (the external one when it exists), and the sync worker's counts from status.sync.

Options:
  -o, --output <fmt>  table (default), json or yaml (a List of the objects), or name
${HOST_FLAGS_HELP}
  -h, --help          show this help

Examples:
  tenantplane get tenants
  tenantplane get tenant payments-dev -o yaml

${EXIT_STATUS_HELP}
`;

/** Runs `get` with the arguments after the command name. */
export async function get(args: readonly string[], io: CliIo): Promise<number> {
  const line = parseCommandLine("get", args, { output: { type: "string", short: "o" }, ...HOST_FLAGS });
  if (line.help) {
    io.stdout(GET_HELP);
    return 0;
  }
  const [resource, ...names] = line.positionals;
  if (resource === undefined) throw usageError("get", "missing what to get: tenants");
  if (!TENANT_CLUSTER_NAMES.includes(resource.toLowerCase())) {
    throw usageError("get", `cannot get ${JSON.stringify(resource)}: only tenants (tc, tenantclusters)`);
  }
  const output = outputFlag("get", line, TENANT_FORMATS);
  for (const name of names) checkTenantName(name, "<name>");
  const host = openHost(hostOptionsOf(line, io));
  let tenants: RawObject[];
  if (names.length === 0) {
    tenants = await onCluster(
      host,
      "list TenantClusters",
      (o) => o.list<RawObject & { apiVersion: string }>(API_VERSION, KIND_TENANT_CLUSTER),
      '"list" on "tenantclusters.tenantplane.io"',
    );
  } else {
    tenants = [];
    for (const name of names) {
      const tc = await onCluster(
        host,
        `read TenantCluster ${name}`,
        (o) => o.get<RawObject & { apiVersion: string; kind: string }>(API_VERSION, KIND_TENANT_CLUSTER, name),
        '"get" on "tenantclusters.tenantplane.io"',
      );
      if (tc === undefined)
        throw new CliError(`TenantCluster ${name} does not exist (list them with 'tenantplane get tenants')`);
      tenants.push(tc);
    }
  }
  if (tenants.length === 0 && output === "table") {
    io.stdout("no tenants: create one with 'tenantplane create tenant <name>'\n");
    return 0;
  }
  io.stdout(formatTenants(tenants, output, io.now(), { color: io.color === true }));
  return 0;
}

/** Usage text of `tenantplane create`. */
export const CREATE_HELP = `Usage: tenantplane create tenant <name> [--profile <name>] [--policy <name>] [--expose] [--wait [--timeout <duration>]] [-o table|json|yaml|name]

Creates a TenantCluster without writing YAML. The tenant's host namespace is tp-<name>.

Options:
  --profile <name>     IsolationProfile to isolate it with (default: the built-in profile)
  --policy <name>      SyncPolicy naming the kinds synced to the host (default: every kind)
  --expose             publish the tenant API through a LoadBalancer Service
  --wait               wait until the tenant is Ready (or Failed) before returning
  --timeout <duration> how long --wait waits (default 5m)
  -o, --output <fmt>   name (default), table, json or yaml: the TenantCluster as stored
${HOST_FLAGS_HELP}
  -h, --help           show this help

Examples:
  tenantplane create tenant payments-dev --profile standard --policy workloads --wait
  tenantplane create tenant scratch -o yaml

${EXIT_STATUS_HELP} --wait exits 1 when the
tenant turns Failed or is not Ready within --timeout.
`;

/** The TenantCluster `create tenant` sends. */
export function tenantClusterFor(
  name: string,
  options: { profile?: string | undefined; policy?: string | undefined; expose?: boolean },
): RawObject {
  return {
    apiVersion: API_VERSION,
    kind: KIND_TENANT_CLUSTER,
    metadata: { name },
    spec: {
      ...(options.profile === undefined ? {} : { isolationProfileRef: { name: options.profile } }),
      ...(options.policy === undefined ? {} : { syncPolicyRef: { name: options.policy } }),
      ...(options.expose === true ? { controlPlane: { expose: { loadBalancer: { enabled: true } } } } : {}),
    },
  };
}

/** Runs `create` with the arguments after the command name. */
export async function create(args: readonly string[], io: CliIo): Promise<number> {
  const line = parseCommandLine("create", args, {
    profile: { type: "string" },
    policy: { type: "string" },
    expose: { type: "boolean" },
    wait: { type: "boolean" },
    timeout: { type: "string" },
    output: { type: "string", short: "o" },
    ...HOST_FLAGS,
  });
  if (line.help) {
    io.stdout(CREATE_HELP);
    return 0;
  }
  const [resource, name, ...rest] = line.positionals;
  if (resource === undefined || !TENANT_CLUSTER_NAMES.includes(resource.toLowerCase())) {
    throw usageError(
      "create",
      `${resource === undefined ? "missing" : `cannot create ${JSON.stringify(resource)};`} use: create tenant <name>`,
    );
  }
  if (name === undefined) throw usageError("create", "missing <name>");
  if (rest.length > 0) throw usageError("create", `Unexpected argument '${rest[0]}'`);
  const output = outputFlag("create", line, ["name", "table", "json", "yaml"] as const);
  const timeoutText = stringFlag(line, "timeout") ?? "5m";
  const timeoutMs = parseDuration(timeoutText);
  if (timeoutMs === undefined)
    throw new CliError(`--timeout ${JSON.stringify(timeoutText)}: use a duration such as 90s or 5m`);
  checkTenantName(name, "<name>");
  const host = openHost(hostOptionsOf(line, io));
  const desired = tenantClusterFor(name, {
    profile: stringFlag(line, "profile"),
    policy: stringFlag(line, "policy"),
    expose: line.values["expose"] === true,
  });
  let created: RawObject;
  try {
    created = await onCluster(
      host,
      `create TenantCluster ${name}`,
      (o) => o.create(desired as RawObject & { apiVersion: string; kind: string }),
      '"create" on "tenantclusters.tenantplane.io"',
    );
  } catch (error) {
    if (error instanceof CliError && /already exists/i.test(error.message)) {
      throw new CliError(
        `<name> ${name}: TenantCluster ${name} already exists; pick another name or see 'tenantplane get tenant ${name}'`,
      );
    }
    throw error;
  }
  for (const [field, kind, ref] of [
    ["--profile", "IsolationProfile", stringFlag(line, "profile")],
    ["--policy", "SyncPolicy", stringFlag(line, "policy")],
  ] as const) {
    if (ref === undefined) continue;
    const found = await onCluster(host, `read ${kind} ${ref}`, (o) => o.get(API_VERSION, kind, ref)).catch(
      () => "unknown",
    );
    if (found === undefined)
      io.stderr(
        `tenantplane create: warning: ${field} ${ref}: ${kind} ${ref} does not exist yet; the tenant waits for it\n`,
      );
  }
  if (line.values["wait"] === true) created = await waitReady(host, name, timeoutMs, io);
  io.stdout(
    output === "name"
      ? `${formatTenants([created], "name", io.now())}`.replace(/\n$/, " created\n")
      : formatTenants([created], output, io.now(), { color: io.color === true }),
  );
  return 0;
}

async function waitReady(
  host: ReturnType<typeof openHost>,
  name: string,
  timeoutMs: number,
  io: CliIo,
): Promise<RawObject> {
  const deadline = Date.now() + timeoutMs;
  let last: RawObject | undefined;
  while (Date.now() < deadline && io.signal?.aborted !== true) {
    last = await onCluster(host, `read TenantCluster ${name}`, (o) =>
      o.get<RawObject & { apiVersion: string; kind: string }>(API_VERSION, KIND_TENANT_CLUSTER, name),
    );
    const phase = last?.status?.["phase"];
    if (phase === "Ready") return last!;
    if (phase === "Failed") {
      const why = conditionsOf(last!)
        .filter((c) => c.status !== "True")
        .map((c) => `${c.type}: ${c.message}`)
        .join("; ");
      throw new CliError(
        `TenantCluster ${name} is Failed${why ? ` (${why})` : ""}; see 'tenantplane explain tc/${name}'`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const phase = (last?.status?.["phase"] as string | undefined) ?? "Pending";
  if (io.signal?.aborted === true) {
    throw new CliError(
      `stopped waiting: TenantCluster ${name} exists and is ${phase}; follow it with 'tenantplane get tenant ${name}'`,
    );
  }
  throw new CliError(`TenantCluster ${name} is still ${phase} after --timeout; see 'tenantplane explain tc/${name}'`);
}
