import { hostNamespaceFor } from "@tenantplane/mapping";
import { parseCommandLine, usageError } from "./args.js";
import { CliError, type CliIo, EXIT_STATUS_HELP } from "./cli-io.js";
import { HOST_FLAGS, HOST_FLAGS_HELP, hostOptionsOf, onCluster, openHost } from "./host.js";
import { TENANT_CLUSTER_NAMES } from "./kinds.js";
import { type RawObject, readTenantCluster } from "./tenant-context.js";
import { checkTenantName } from "./tenants.js";

/** Usage text of `tenantplane join-command`. */
export const JOIN_COMMAND_HELP = `Usage: tenantplane join-command tc/<tenant> [--kubeconfig <file>] [--context <name>]

Prints the command that joins a machine to a Private tenant as one of its nodes: the k3s
agent installer with the tenant API's address and the tenant's join token. The provisioner
issues the token (a bootstrap token valid for 7 days, rotated after half of that) while
spec.isolation.mode is Private, and keeps it in Secret <tenant>-join in the tenant's host
namespace; reading it needs RBAC permission to get that Secret. Anyone holding the token can
join a machine to the tenant until it expires: treat the output as a secret.

Options:
${HOST_FLAGS_HELP}
  -h, --help          show this help

Examples:
  tenantplane join-command tc/payments-dev
  tenantplane join-command tc/payments-dev | ssh root@node-9 sh

${EXIT_STATUS_HELP}
`;

/** Secret in the tenant's host namespace holding its join credential (written by the provisioner). */
export function joinSecretName(tenant: string): string {
  return `${tenant}-join`;
}

/** Keys of the join Secret: the k3s token (`K10<CA hash>::<id>.<secret>`), the server URL, the server CA. */
export const JOIN_SECRET_KEYS = ["token", "server", "ca.crt"] as const;

/** What `join-command` prints: the command on stdout, warnings on stderr. */
export interface JoinCommandOutput {
  stdout: string;
  warnings: string[];
}

/**
 * The agent command for `tenant` from its TenantCluster and its join Secret (undefined when
 * absent). Pure; every refusal names the field or object to look at and how to fix it.
 */
export function joinCommandFor(tenant: string, tc: RawObject, secret: RawObject | undefined): JoinCommandOutput {
  checkPrivate(tenant, tc);
  const where = `Secret ${hostNamespaceFor(tenant)}/${joinSecretName(tenant)}`;
  if (secret === undefined) {
    throw new CliError(
      `${where} does not exist yet: the provisioner issues it once the tenant API answers in Private mode. ` +
        `Look at the ControlPlaneReady condition ('tenantplane explain tc/${tenant}')`,
    );
  }
  const data = (secret["data"] ?? {}) as Record<string, unknown>;
  const value = (key: string) => {
    const encoded = data[key];
    if (typeof encoded !== "string" || encoded === "")
      throw new CliError(
        `${where} has no key ${key}: the provisioner rewrites it; look at the ControlPlaneReady condition ('tenantplane explain tc/${tenant}')`,
      );
    return Buffer.from(encoded, "base64").toString("utf8");
  };
  const token = value("token");
  const server = value("server");
  const warnings: string[] = [];
  const effective = (tc.status?.["isolation"] as { mode?: unknown } | undefined)?.mode;
  if (effective !== undefined && effective !== "Private")
    warnings.push(
      `tenant ${tenant} is still moving to Private (status.isolation.mode is ${String(effective)}): ` +
        `nodes may join now; its Pods are placed on them once the move completes`,
    );
  if (inClusterOnly(server))
    warnings.push(
      `${server} is the tenant API's address inside the host cluster: only machines that resolve and reach ` +
        `the host's Services can join through it. For nodes outside, set spec.controlPlane.expose.loadBalancer.enabled: true ` +
        `on TenantCluster ${tenant}; the join Secret then names the load balancer's address`,
    );
  const expires = secret.metadata?.annotations?.["tenantplane.io/join-token-expires"];
  const lines = [
    `curl -sfL https://get.k3s.io | K3S_URL=${shellWord(server)} K3S_TOKEN=${shellWord(token)} sh -s - agent`,
    `# Labels and taints: append --node-label <key>=<value> or --node-taint <key>=<value>:NoSchedule after 'agent'.` +
      (expires ? ` The token expires ${expires}; run join-command again for the current one.` : ""),
  ];
  return { stdout: `${lines.join("\n")}\n`, warnings };
}

/** Refuses a tenant whose spec.isolation.mode is not Private, saying how to set it. */
export function checkPrivate(tenant: string, tc: RawObject): void {
  const isolation = tc.spec?.["isolation"] as { mode?: unknown } | undefined;
  const mode = typeof isolation?.mode === "string" ? isolation.mode : undefined;
  if (mode === "Private") return;
  throw new CliError(
    `TenantCluster ${tenant} has spec.isolation.mode ${mode ?? "unset (Shared)"}: only a Private tenant has nodes of ` +
      `its own. Set it with: kubectl patch tc ${tenant} --type merge -p '{"spec":{"isolation":{"mode":"Private"}}}'`,
  );
}

// The host Service's DNS name (k3s.tp-<tenant>.svc) resolves only inside the host cluster.
function inClusterOnly(server: string): boolean {
  try {
    return /\.svc(\.|$)/.test(new URL(server).hostname);
  } catch {
    return false;
  }
}

function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,[\]-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The tenant named by `tc/<tenant>` (or a bare `<tenant>`). */
export function parseJoinTarget(target: string | undefined): string {
  if (target === undefined) throw usageError("join-command", "missing tc/<tenant>");
  const parts = target.split("/");
  if (parts.length > 2 || (parts.length === 2 && !TENANT_CLUSTER_NAMES.includes(parts[0]!.toLowerCase())))
    throw usageError("join-command", `${JSON.stringify(target)}: write tc/<tenant>`);
  const tenant = parts[parts.length - 1]!;
  checkTenantName(tenant, "tc/<tenant>");
  return tenant;
}

/** Runs `join-command` with the arguments after the command name. */
export async function joinCommand(args: readonly string[], io: CliIo): Promise<number> {
  const line = parseCommandLine("join-command", args, { ...HOST_FLAGS });
  if (line.help) {
    io.stdout(JOIN_COMMAND_HELP);
    return 0;
  }
  const [target, ...rest] = line.positionals;
  if (rest.length > 0) throw usageError("join-command", `Unexpected argument '${rest[0]}'`);
  const tenant = parseJoinTarget(target);
  const host = openHost(hostOptionsOf(line, io));
  const tc = await readTenantCluster(host, tenant);
  const namespace = hostNamespaceFor(tenant);
  const name = joinSecretName(tenant);
  // The mode is checked before the Secret is read: a tenant that is not Private has none to read.
  checkPrivate(tenant, tc);
  const secret = await onCluster(
    host,
    `read Secret ${namespace}/${name}`,
    (o) => o.get<RawObject & { apiVersion: string; kind: string }>("v1", "Secret", name, namespace),
    `"get" on "secrets" in namespace ${namespace} (check with: kubectl auth can-i get secret/${name} -n ${namespace})`,
  );
  const output = joinCommandFor(tenant, tc, secret);
  for (const warning of output.warnings) io.stderr(`warning: ${warning}\n`);
  io.stdout(output.stdout);
  return 0;
}
