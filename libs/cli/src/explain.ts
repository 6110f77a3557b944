import {
  ANNOTATION_CONTENT_HASH,
  ANNOTATION_DECISION,
  hostNamespaceFor,
  isManaged,
  LABEL_CONTROL_PLANE,
  LABEL_TENANT,
  reverseLookup,
} from "@tenantplane/mapping";
import {
  ANNOTATION_ISOLATION_PROFILE,
  COMPONENT_ISOLATION,
  ISOLATION_KINDS,
  isolationObjectSelector,
  LABEL_COMPONENT,
} from "@tenantplane/isolation";
import type { Decision } from "@tenantplane/messaging";
import { planKey } from "@tenantplane/sync";
import { outputFlag, parseCommandLine, stringFlag, usageError } from "./args.js";
import { CliError, type CliIo, EXIT_STATUS_HELP, EXIT_UNREACHABLE } from "./cli-io.js";
import { decisionSubject, readDecisions } from "./decisions.js";
import {
  formatExplanationData,
  formatObjectExplanation,
  formatTenantExplanation,
  isolationField,
  type ObjectExplanation,
  type TenantExplanation,
} from "./explain-format.js";
import { parseHashKeySecret, readHashKey } from "./hash-key.js";
import { type Cluster, HOST_FLAGS, HOST_FLAGS_HELP, isUnreachable, onCluster, openHost, openTenant } from "./host.js";
import { SYNC_KIND_NAMES, syncKindOf, TENANT_CLUSTER_NAMES } from "./kinds.js";
import { readTenantKubeconfig } from "./kubeconfig.js";
import { NATS_FLAGS, NATS_FLAGS_HELP, natsUrlOf } from "./nats-access.js";
import {
  type RawObject,
  readPlanContext,
  readTenantCluster,
  refName,
  type TenantPlanContext,
} from "./tenant-context.js";
import { checkTenantName } from "./tenants.js";
import { conditionsOf, endpointOf, syncCountsOf } from "./tenants-format.js";

/** Usage text of `tenantplane explain`. */
export const EXPLAIN_HELP = `Usage: tenantplane explain <kind>/<name> -n <host namespace> [--nats-url <url>] [-o table|json|yaml]
       tenantplane explain tc/<tenant> [-o table|json|yaml]

On a host object: whose it is. For a sync copy, the tenant, virtual namespace and name it
comes from, the SyncPolicy rule that put it there, whether its content hash matches what
the planner wants from the tenant object now (read through the tenant's kubeconfig), and
its last Decisions from the DECISIONS stream. A foreign object is said to be foreign.

On a tenant (tc/<tenant>): its phase, conditions, endpoint, the isolation objects in
tp-<tenant> with the IsolationProfile field that produced each, and the sync counts.

Options:
  -n, --namespace <ns>  the host namespace of <kind>/<name> (e.g. tp-payments-dev)
${NATS_FLAGS_HELP}
  --hash-key-secret <namespace>/<name>[/<key>]
                        the sync worker's content-hash key Secret (default: $CONTENT_HASH_KEY)
${HOST_FLAGS_HELP}
  -o, --output <fmt>    table (default, readable text), json or yaml
  -h, --help            show this help

Examples:
  tenantplane explain configmap/settings-x-shop-x-payments-dev -n tp-payments-dev
  tenantplane explain pod/web-x-shop-x-payments-dev -n tp-payments-dev --nats-url nats://localhost:4222
  tenantplane explain tc/payments-dev

${EXIT_STATUS_HELP} A host object is explained
even when its Decisions cannot be read; the exit status is then 3.
`;

const FORMATS = ["table", "json", "yaml"] as const;

/** The parsed target of `explain`. */
export type ExplainTarget = { tenant: string } | { kind: string; name: string; namespace: string };

/** Parses `<kind>/<name>` and `-n` into what to explain; exit 2 or 1 naming the bad part. */
export function parseExplainTarget(target: string | undefined, namespace: string | undefined): ExplainTarget {
  if (target === undefined) throw usageError("explain", "missing <kind>/<name> or tc/<tenant>");
  const slash = target.indexOf("/");
  if (slash <= 0 || slash === target.length - 1)
    throw usageError(
      "explain",
      `${JSON.stringify(target)}: write <kind>/<name>, e.g. configmap/settings or tc/payments-dev`,
    );
  const kindText = target.slice(0, slash);
  const name = target.slice(slash + 1);
  if (TENANT_CLUSTER_NAMES.includes(kindText.toLowerCase())) {
    checkTenantName(name, "tc/<tenant>");
    return { tenant: name };
  }
  const kind = syncKindOf(kindText);
  if (kind === undefined)
    throw new CliError(`<kind> ${JSON.stringify(kindText)}: explain knows tc and the synced kinds ${SYNC_KIND_NAMES}`);
  if (namespace === undefined) throw usageError("explain", `missing -n <host namespace> for ${kind} ${name}`);
  return { kind, name, namespace };
}

/** Runs `explain` with the arguments after the command name. */
export async function explain(args: readonly string[], io: CliIo): Promise<number> {
  const line = parseCommandLine("explain", args, {
    namespace: { type: "string", short: "n" },
    output: { type: "string", short: "o" },
    "hash-key-secret": { type: "string" },
    ...NATS_FLAGS,
    ...HOST_FLAGS,
  });
  if (line.help) {
    io.stdout(EXPLAIN_HELP);
    return 0;
  }
  if (line.positionals.length > 1) throw usageError("explain", `Unexpected argument '${line.positionals[1]}'`);
  const output = outputFlag("explain", line, FORMATS);
  const target = parseExplainTarget(line.positionals[0], stringFlag(line, "namespace"));
  const hashKeySecret = stringFlag(line, "hash-key-secret");
  if (hashKeySecret !== undefined) parseHashKeySecret(hashKeySecret);
  const host = openHost({ kubeconfig: stringFlag(line, "kubeconfig"), context: stringFlag(line, "context") });
  if ("tenant" in target) {
    const explanation = await explainTenant(host, target.tenant);
    io.stdout(
      output === "table"
        ? formatTenantExplanation(explanation, { color: io.color === true })
        : formatExplanationData(explanation, output),
    );
    return 0;
  }
  const env = io.env ?? {};
  const { explanation, natsUnreachable } = await explainObject(host, target, {
    natsUrl: natsUrlOf(stringFlag(line, "nats-url"), env),
    env,
    hashKeySecret,
  });
  io.stdout(output === "table" ? formatObjectExplanation(explanation) : formatExplanationData(explanation, output));
  return natsUnreachable ? EXIT_UNREACHABLE : 0;
}

/** How many of an object's Decisions `explain` shows. */
const LAST_DECISIONS = 5;

interface ObjectOptions {
  natsUrl: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  hashKeySecret: string | undefined;
}

/** Explains one host object; reads the tenant API and NATS only for sync copies. */
export async function explainObject(
  host: Cluster,
  target: { kind: string; name: string; namespace: string },
  options: ObjectOptions,
): Promise<{ explanation: ObjectExplanation; natsUnreachable: boolean }> {
  const object = await onCluster(
    host,
    `read ${target.kind} ${target.namespace}/${target.name}`,
    (o) => o.get<RawObject & { apiVersion: string; kind: string }>("v1", target.kind, target.name, target.namespace),
    `"get" on ${target.kind.toLowerCase()}s in namespace ${target.namespace}`,
  );
  if (object === undefined) {
    throw new CliError(
      `${target.kind} ${target.namespace}/${target.name} does not exist on ${host.server}; check the name and -n`,
    );
  }
  const base = { kind: target.kind, namespace: target.namespace, name: target.name };
  const metadata = { labels: object.metadata?.labels ?? {}, annotations: object.metadata?.annotations ?? {} };
  if (!isManaged(metadata)) {
    return {
      explanation: {
        ...base,
        owner: "foreign",
        summary:
          "not tenantplane's: it has no app.kubernetes.io/managed-by=tenantplane label, so tenantplane never updates or deletes it, and a tenant object mapped to this name is skipped",
      },
      natsUnreachable: false,
    };
  }
  const source = reverseLookup(metadata);
  if (source === undefined) return { explanation: explainOwnObject(base, metadata), natsUnreachable: false };
  if (target.namespace !== hostNamespaceFor(source.tenant)) {
    return {
      explanation: {
        ...base,
        owner: "foreign",
        summary: `carries tenant ${source.tenant}'s reverse mapping but lives outside ${hostNamespaceFor(source.tenant)}: the sync worker never writes or deletes objects there, so it is not one of its copies`,
        source: { tenant: source.tenant, namespace: source.namespace, name: source.name, kind: source.kind },
      },
      natsUnreachable: false,
    };
  }
  const explanation: ObjectExplanation = {
    ...base,
    owner: "sync-copy",
    summary: `a sync copy of tenant ${source.tenant}'s ${source.kind} ${source.namespace}/${source.name} (reverse-mapping labels and annotations)`,
    source: { tenant: source.tenant, namespace: source.namespace, name: source.name, kind: source.kind },
  };
  const madeBy = recordedDecision(metadata.annotations);
  if (madeBy !== undefined) explanation.madeBy = madeBy;
  let context: TenantPlanContext | undefined;
  try {
    context = await readPlanContext(host, source.tenant);
    const index = context.policy.toHost.findIndex((rule) => rule.kind === target.kind);
    explanation.rule =
      index < 0
        ? `none: ${context.policyName === undefined ? "the default policy" : `SyncPolicy ${context.policyName}`} no longer syncs ${target.kind}, so the sync worker deletes this copy`
        : context.policyName === undefined
          ? `the default policy (TenantCluster ${source.tenant} names no spec.syncPolicyRef): every supported kind, ${target.kind} included`
          : `SyncPolicy ${context.policyName} spec.toHost[${index}] (kind: ${target.kind})`;
  } catch (error) {
    if (!(error instanceof CliError) || error.exitCode === EXIT_UNREACHABLE) throw error;
    explanation.rule = `unknown: ${error.message}`;
  }
  explanation.contentHash = await hashState(host, object, source, context, options);
  const decisions = await lastDecisions(source.tenant, target, options);
  if ("note" in decisions) explanation.decisionsNote = decisions.note;
  else explanation.decisions = decisions.list;
  return { explanation, natsUnreachable: "unreachable" in decisions };
}

/** The Decision the sync worker recorded on a copy with its last write, when it is readable. */
function recordedDecision(annotations: Record<string, string>): ObjectExplanation["madeBy"] {
  const text = annotations[ANNOTATION_DECISION];
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const { id, time, action, reason } = value;
    if ([id, time, action, reason].every((v) => typeof v === "string")) {
      return { id, time, action, reason } as NonNullable<ObjectExplanation["madeBy"]>;
    }
  } catch {
    // An unreadable record explains nothing; the Decisions from NATS still do.
  }
  return undefined;
}

function explainOwnObject(
  base: { kind: string; namespace: string; name: string },
  metadata: { labels: Record<string, string>; annotations: Record<string, string> },
): ObjectExplanation {
  const tenant = metadata.labels[LABEL_TENANT] ?? "(unnamed)";
  if (metadata.labels[LABEL_COMPONENT] === COMPONENT_ISOLATION) {
    return {
      ...base,
      owner: "isolation",
      summary: `tenantplane's isolation object for tenant ${tenant}, from IsolationProfile ${metadata.annotations[ANNOTATION_ISOLATION_PROFILE] ?? "(unrecorded)"}`,
      rule: isolationField(base.name),
    };
  }
  const controlPlane = metadata.labels[LABEL_CONTROL_PLANE] === "true" ? " (a control-plane pod)" : "";
  return {
    ...base,
    owner: "control-plane",
    summary: `tenantplane's own object for tenant ${tenant}${controlPlane}: written by the provisioner for the tenant's control plane, not a sync copy`,
  };
}

async function hashState(
  host: Cluster,
  object: RawObject,
  source: { tenant: string; namespace: string; name: string; kind: string },
  context: TenantPlanContext | undefined,
  options: ObjectOptions,
): Promise<NonNullable<ObjectExplanation["contentHash"]>> {
  const recorded = object.metadata?.annotations?.[ANNOTATION_CONTENT_HASH];
  const withRecorded = recorded === undefined ? {} : { recorded };
  if (context === undefined) {
    return {
      state: "unchecked",
      ...withRecorded,
      detail: "cannot be checked: the tenant's SyncPolicy or IsolationProfile cannot be read (see rule)",
    };
  }
  let sourceObject: RawObject | undefined;
  try {
    const kubeconfig = await readTenantKubeconfig(
      host,
      source.tenant,
      context.tenantCluster.status?.["externalEndpoint"] !== undefined,
      context.tenantCluster,
    );
    const tenantApi = openTenant(source.tenant, kubeconfig);
    sourceObject = await onCluster(tenantApi, `read ${source.kind} ${source.namespace}/${source.name}`, (o) =>
      o.get<RawObject & { apiVersion: string; kind: string }>("v1", source.kind, source.name, source.namespace),
    );
  } catch (error) {
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return {
      state: "unchecked",
      ...withRecorded,
      detail: `cannot be checked: the tenant object is not reachable (${why})`,
    };
  }
  if (sourceObject === undefined) {
    return {
      state: "source gone",
      ...withRecorded,
      detail: `tenant ${source.tenant} has no ${source.kind} ${source.namespace}/${source.name}: the sync worker deletes this copy`,
    };
  }
  const hashKey = await readHashKey(host, options.hashKeySecret, options.env);
  const result = planKey(
    {
      tenant: source.tenant,
      policy: context.policy,
      rules: context.rules,
      tenantObjects: [{ ...sourceObject, kind: source.kind }],
      hostObjects: [object],
      ...(hashKey === undefined ? {} : { hashKey }),
    },
    { kind: source.kind, namespace: source.namespace, name: source.name },
  );
  if (result.inSync.length > 0)
    return {
      state: "in sync",
      ...withRecorded,
      detail: `${recorded ?? ""} is what the planner wants from the tenant object now`,
    };
  const decision = result.decisions[0] ?? result.ignored[0];
  if (decision?.action === "Update") {
    const desired = decision.object?.metadata.annotations?.[ANNOTATION_CONTENT_HASH];
    return {
      state: "drifted",
      ...withRecorded,
      ...(desired === undefined ? {} : { desired }),
      detail: `recorded ${recorded ?? "(none)"}, the tenant object now gives ${desired ?? "another"}: the sync worker updates this copy${hashKey === undefined ? " (computed without a content-hash key: if the worker runs with CONTENT_HASH_KEY, set it or pass --hash-key-secret)" : ""}`,
    };
  }
  return {
    state: "other",
    ...withRecorded,
    detail:
      decision === undefined
        ? "the planner has nothing to do for this object"
        : `${decision.action}: ${decision.reason}`,
  };
}

async function lastDecisions(
  tenant: string,
  target: { kind: string; name: string; namespace: string },
  options: ObjectOptions,
): Promise<{ list: Decision[] } | { note: string; unreachable?: true }> {
  if (options.natsUrl === undefined) return { note: "not read: pass --nats-url or set NATS_URL" };
  const found: Decision[] = [];
  try {
    await readDecisions(
      options.natsUrl,
      options.env,
      { subject: decisionSubject({ tenant, kind: target.kind }), since: undefined, follow: false },
      (d) => {
        if (d.hostRef.namespace === target.namespace && d.hostRef.name === target.name) {
          found.push(d);
          if (found.length > LAST_DECISIONS) found.shift();
        }
      },
      () => undefined,
    );
  } catch (error) {
    if (error instanceof CliError) {
      return error.exitCode === EXIT_UNREACHABLE ? { note: error.message, unreachable: true } : { note: error.message };
    }
    if (isUnreachable(error)) return { note: `cannot reach NATS at ${options.natsUrl}`, unreachable: true };
    throw error;
  }
  return { list: found };
}

/** Explains a tenant: phase, conditions, isolation objects and the profile field behind each, sync counts. */
export async function explainTenant(host: Cluster, tenant: string): Promise<TenantExplanation> {
  const tc = await readTenantCluster(host, tenant);
  const namespace =
    typeof tc.status?.["hostNamespace"] === "string"
      ? (tc.status["hostNamespace"] as string)
      : hostNamespaceFor(tenant);
  const notes: string[] = [];
  const isolation: TenantExplanation["isolation"] = [];
  for (const { apiVersion, kind } of ISOLATION_KINDS) {
    const items = await onCluster(host, `list ${kind}s in ${namespace}`, (o) =>
      o.list<RawObject & { apiVersion: string }>(apiVersion, kind, {
        namespace,
        labelSelector: isolationObjectSelector(tenant),
      }),
    );
    for (const item of items) {
      const name = item.metadata?.name ?? "";
      isolation.push({
        kind,
        name,
        field: isolationField(name),
        profile: item.metadata?.annotations?.[ANNOTATION_ISOLATION_PROFILE] ?? "",
      });
    }
  }
  const ns = await onCluster(host, `read Namespace ${namespace}`, (o) =>
    o.get<RawObject & { apiVersion: string; kind: string }>("v1", "Namespace", namespace),
  );
  if (ns === undefined) notes.push(`host namespace ${namespace} does not exist (yet)`);
  const podSecurity = Object.fromEntries(
    Object.entries(ns?.metadata?.labels ?? {}).filter(([key]) => key.startsWith("pod-security.kubernetes.io/")),
  );
  const counts = syncCountsOf(tc);
  const profile = refName(tc, "isolationProfileRef");
  const policy = refName(tc, "syncPolicyRef");
  return {
    name: tenant,
    phase: typeof tc.status?.["phase"] === "string" ? (tc.status["phase"] as string) : "Pending",
    endpoint: endpointOf(tc),
    hostNamespace: namespace,
    profile: profile === undefined ? "(built-in)" : `IsolationProfile ${profile}`,
    policy: policy === undefined ? "(default: every supported kind)" : `SyncPolicy ${policy}`,
    conditions: conditionsOf(tc),
    isolation,
    podSecurity,
    ...(counts === undefined ? {} : { sync: counts }),
    notes,
  };
}
