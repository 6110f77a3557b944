import { KIND_TENANT_CLUSTER } from "@tenantplane/api";
import YAML from "yaml";
import { parseCommandLine, usageError } from "./args.js";
import { CliError, type CliIo, EXIT_STATUS_HELP } from "./cli-io.js";
import { type Cluster, HOST_FLAGS, HOST_FLAGS_HELP, onCluster, hostOptionsOf, openHost } from "./host.js";
import { type RawObject, readTenantCluster } from "./tenant-context.js";
import { checkTenantName } from "./tenants.js";

/** Usage text of `tenantplane kubeconfig`. */
export const KUBECONFIG_HELP = `Usage: tenantplane kubeconfig <tenant> [--external] [--kubeconfig <file>] [--context <name>]

Prints the tenant's admin kubeconfig, read from the Secret its TenantCluster names in
status.kubeconfigSecretRef. Reading it needs RBAC permission to get that Secret in the
tenant's host namespace.

Options:
  --external          point the kubeconfig at status.externalEndpoint (the load-balancer
                      address), for use outside the host cluster
${HOST_FLAGS_HELP}
  -h, --help          show this help

Examples:
  tenantplane kubeconfig payments-dev > payments-dev.kubeconfig
  KUBECONFIG=payments-dev.kubeconfig kubectl get namespaces
  tenantplane kubeconfig payments-dev --external

${EXIT_STATUS_HELP}
`;

/** Where a TenantCluster's kubeconfig is: its Secret reference, or undefined before the provisioner wrote it. */
export function kubeconfigRef(tc: RawObject): { namespace: string; name: string; key: string } | undefined {
  const ref = tc.status?.["kubeconfigSecretRef"] as { namespace?: unknown; name?: unknown; key?: unknown } | undefined;
  if (typeof ref?.namespace !== "string" || typeof ref.name !== "string" || typeof ref.key !== "string")
    return undefined;
  return { namespace: ref.namespace, name: ref.name, key: ref.key };
}

/** `kubeconfig` with every cluster's server replaced by `server`; the rest is kept as written. */
export function withServer(kubeconfig: string, server: string): string {
  const document = YAML.parseDocument(kubeconfig);
  const clusters = document.get("clusters");
  if (!YAML.isSeq(clusters)) throw new CliError("the stored kubeconfig has no clusters list");
  for (const item of clusters.items) {
    if (YAML.isMap(item) && YAML.isMap(item.get("cluster")))
      (item.get("cluster") as YAML.YAMLMap).set("server", server);
  }
  return document.toString({ lineWidth: 0 });
}

/**
 * The tenant's admin kubeconfig text from the host, optionally pointed at its external
 * endpoint. A 403 names the RBAC permission needed; a missing Secret says whether the
 * provisioner has written it yet.
 */
export async function readTenantKubeconfig(
  host: Cluster,
  tenant: string,
  external: boolean,
  tc?: RawObject,
): Promise<string> {
  const tenantCluster = tc ?? (await readTenantCluster(host, tenant));
  const ref = kubeconfigRef(tenantCluster);
  if (ref === undefined) {
    throw new CliError(
      `${KIND_TENANT_CLUSTER} ${tenant} has no status.kubeconfigSecretRef yet: its control plane is still being provisioned (watch 'tenantplane get tenants')`,
    );
  }
  const secret = await onCluster(
    host,
    `read Secret ${ref.namespace}/${ref.name}`,
    (o) =>
      o.get<{ apiVersion: string; kind: string; data?: Record<string, string> }>(
        "v1",
        "Secret",
        ref.name,
        ref.namespace,
      ),
    `"get" on "secrets" in namespace ${ref.namespace} (check with: kubectl auth can-i get secret/${ref.name} -n ${ref.namespace})`,
  );
  const encoded = secret?.data?.[ref.key];
  if (encoded === undefined) {
    throw new CliError(
      `Secret ${ref.namespace}/${ref.name} ${secret === undefined ? "does not exist" : `has no key ${ref.key}`}: the provisioner rewrites it; see 'tenantplane explain tc/${tenant}'`,
    );
  }
  const text = Buffer.from(encoded, "base64").toString("utf8");
  if (!external) return text;
  const endpoint = tenantCluster.status?.["externalEndpoint"];
  if (typeof endpoint !== "string" || endpoint === "") {
    throw new CliError(
      `--external: tenant ${tenant} has no status.externalEndpoint; set spec.controlPlane.expose.loadBalancer.enabled: true and wait for the load balancer's address`,
    );
  }
  return withServer(text, endpoint);
}

/** Runs `kubeconfig` with the arguments after the command name. */
export async function kubeconfig(args: readonly string[], io: CliIo): Promise<number> {
  const line = parseCommandLine("kubeconfig", args, { external: { type: "boolean" }, ...HOST_FLAGS });
  if (line.help) {
    io.stdout(KUBECONFIG_HELP);
    return 0;
  }
  const [tenant, ...rest] = line.positionals;
  if (tenant === undefined) throw usageError("kubeconfig", "missing <tenant>");
  if (rest.length > 0) throw usageError("kubeconfig", `Unexpected argument '${rest[0]}'`);
  checkTenantName(tenant, "<tenant>");
  const host = openHost(hostOptionsOf(line, io));
  const text = await readTenantKubeconfig(host, tenant, line.values["external"] === true);
  io.stdout(text.endsWith("\n") ? text : `${text}\n`);
  return 0;
}
