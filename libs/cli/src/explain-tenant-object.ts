import { hostName, hostNamespaceFor, isManaged, reverseLookup } from "@tenantplane/mapping";
import type { ObjectExplanation } from "./explain-format.js";
import {
  explainObject,
  type ObjectOptions,
  planSource,
  ruleOf,
  type TenantObjectTarget,
  withLastDecisions,
} from "./explain.js";
import { dryRunEntries } from "./host-dry-run.js";
import { type Cluster, onCluster, openTenant } from "./host.js";
import { readTenantKubeconfig } from "./kubeconfig.js";
import { listHostObjects, type RawObject, type TenantPlanContext } from "./tenant-context.js";

/**
 * Explains a tenant object named from the tenant's side. With a host copy at its mapped
 * name, that copy is explained (as `explain <kind>/<host name> -n tp-<tenant>`). Without one,
 * it says so, what the planner and the host's admission make of the object now (its Skip, or
 * the Fail a dry run of its Create predicts), and the object's last Decisions by its tenant
 * reference: the Skips and Fails that say why it was never copied.
 */
export async function explainTenantObject(
  host: Cluster,
  target: TenantObjectTarget,
  options: ObjectOptions,
): Promise<{ explanation: ObjectExplanation; natsUnreachable: boolean }> {
  const hostNamespace = hostNamespaceFor(target.tenant);
  const mapped = hostName({ tenant: target.tenant, namespace: target.namespace, name: target.name }).name;
  const where = `${hostNamespace}/${mapped}`;
  const found = await onCluster(
    host,
    `read ${target.kind} ${where}`,
    (o) => o.get<RawObject & { apiVersion: string; kind: string }>("v1", target.kind, mapped, hostNamespace),
    `"get" on ${target.kind.toLowerCase()}s in namespace ${hostNamespace}`,
  );
  if (found !== undefined && isCopyOf(found, target)) {
    return explainObject(host, { kind: target.kind, namespace: hostNamespace, name: mapped }, options);
  }
  const label = `${target.kind} ${target.namespace}/${target.name}`;
  const explanation: ObjectExplanation = {
    kind: target.kind,
    namespace: hostNamespace,
    name: mapped,
    owner: "none",
    summary:
      found === undefined
        ? `no host copy: tenant ${target.tenant}'s ${label} maps to ${where}, which does not exist`
        : `no host copy: ${where} is held by ${isManaged({ labels: found.metadata?.labels ?? {}, annotations: {} }) ? "another tenantplane object" : "a foreign object (not managed by tenantplane)"}`,
    source: { tenant: target.tenant, namespace: target.namespace, name: target.name, kind: target.kind },
  };
  const { context, rule } = await ruleOf(
    host,
    target.tenant,
    target.kind,
    "does not sync",
    "so it stays in the tenant",
  );
  explanation.rule = rule;
  if (context !== undefined) explanation.plannedNow = await plannedNow(host, context, target, options);
  return withLastDecisions(
    explanation,
    options,
    target.tenant,
    (d) => d.tenantRef.namespace === target.namespace && d.tenantRef.name === target.name,
  );
}

/** Whether `host` is the sync copy of `target` (its reverse mapping names it). */
function isCopyOf(host: RawObject, target: TenantObjectTarget): boolean {
  const metadata = { labels: host.metadata?.labels ?? {}, annotations: host.metadata?.annotations ?? {} };
  if (!isManaged(metadata)) return false;
  const source = reverseLookup(metadata);
  return (
    source !== undefined &&
    source.kind === target.kind &&
    source.namespace === target.namespace &&
    source.name === target.name
  );
}

/**
 * What the sync worker does with the tenant object as it is now: the planner's answer for
 * it against the host namespace, its Create or Update dry-run on the host. A tenant API that
 * cannot be read is said, not thrown: the Decisions still explain the past.
 */
async function plannedNow(
  host: Cluster,
  context: TenantPlanContext,
  target: TenantObjectTarget,
  options: ObjectOptions,
): Promise<string> {
  const label = `${target.kind} ${target.namespace}/${target.name}`;
  let source: RawObject | undefined;
  try {
    const external = typeof context.tenantCluster.status?.["externalEndpoint"] === "string";
    const kubeconfig = await readTenantKubeconfig(host, target.tenant, external, context.tenantCluster);
    const tenantApi = openTenant(target.tenant, kubeconfig);
    source = await onCluster(tenantApi, `read ${label}`, (o) =>
      o.get<RawObject & { apiVersion: string; kind: string }>("v1", target.kind, target.name, target.namespace),
    );
  } catch (error) {
    return `cannot be planned: the tenant object cannot be read (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`;
  }
  if (source === undefined) {
    return `tenant ${target.tenant} has no ${label} now (the Decisions below are about an earlier one)`;
  }
  const { objects: hostObjects } = await listHostObjects(host, target.tenant);
  const { result } = await planSource(host, context, target, source, hostObjects, options);
  if (result.inSync.length > 0) return "InSync: the host copy carries the desired content hash";
  const entry = result.decisions[0] ?? result.ignored[0];
  if (entry === undefined) return "nothing: the planner has no action for it";
  const checked = await dryRunEntries(host, [entry], hostObjects);
  const predicted = checked.entries[0] ?? entry;
  const notes = checked.notes.length > 0 ? ` (${checked.notes.join("; ")})` : "";
  return `${predicted.action}: ${predicted.reason}${notes}`;
}
