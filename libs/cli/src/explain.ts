import {
  ANNOTATION_CONTENT_HASH,
  ANNOTATION_DECISION,
  hostNamespaceFor,
  isManaged,
  LABEL_CONTROL_PLANE,
  LABEL_TENANT,
  reverseLookup,
  TENANT_API_SERVICE,
  TENANT_DNS_SERVICE,
} from "@tenantplane/mapping";
import {
  ANNOTATION_ISOLATION_PROFILE,
  COMPONENT_ISOLATION,
  ISOLATION_KINDS,
  isolationObjectSelector,
  LABEL_COMPONENT,
} from "@tenantplane/isolation";
import { planKey, type PlanResult } from "@tenantplane/sync";
import { outputFlag, parseCommandLine, stringFlag, usageError } from "./args.js";
import { CliError, type CliIo, EXIT_STATUS_HELP, EXIT_UNREACHABLE } from "./cli-io.js";
import type { Decision } from "@tenantplane/messaging";
import { decisionHistory, type NotSynced, notSyncedOf } from "./decision-history.js";
import { decisionSubject } from "./decisions.js";
import {
  formatExplanationData,
  formatObjectExplanation,
  formatTenantExplanation,
  isolationField,
  type ObjectExplanation,
  type TenantExplanation,
} from "./explain-format.js";
import { isolationModeOf } from "./explain-isolation.js";
import { explainTenantObject } from "./explain-tenant-object.js";
import { parseHashKeySecret, readHashKey } from "./hash-key.js";
import { type Cluster, HOST_FLAGS, HOST_FLAGS_HELP, onCluster, hostOptionsOf, openHost, openTenant } from "./host.js";
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
       tenantplane explain <kind>/<namespace>/<name> --tenant <tenant> [--nats-url <url>] [-o ...]
       tenantplane explain <kind>/<name> -n <namespace> --tenant <tenant> [--nats-url <url>] [-o ...]
       tenantplane explain tc/<tenant> [--nats-url <url>] [-o table|json|yaml]

On a host object: whose it is. For a sync copy, the tenant, virtual namespace and name it
comes from, the SyncPolicy rule that put it there, whether its content hash matches what
the planner wants from the tenant object now (read through the tenant's kubeconfig), and
its last Decisions from the DECISIONS stream. A foreign object is said to be foreign.

On a tenant object (with --tenant, named as the tenant names it; -n is then the tenant's
namespace, default 'default'): its host copy explained as above when there is one; when
there is none, that there is none, what the sync worker does with the object now (the
planner's action and reason, a Create dry-run on the host so a refusal shows as Fail), and
its last Decisions (the Skips and Fails that say why it was never copied).

On a tenant (tc/<tenant>): its phase, conditions, endpoint, its isolation mode (the mode in
effect, the mode asked for, the dedicated nodes, and its last migration: from and to, phase,
Pods moved and left, blocked Pods with reasons, started and finished, and each step the sync
worker published as a Decision), the isolation objects in tp-<tenant> with the
IsolationProfile field that produced each, the sync counts, and every
object not synced: each object whose latest Decision in the DECISIONS stream is a Skip or a
Fail, with its reason (objects the tenant has deleted since are left out).

Options:
  -n, --namespace <ns>  the host namespace of <kind>/<name> (e.g. tp-payments-dev), or with
                        --tenant the tenant's namespace
  --tenant <name>       <kind>/... names this tenant's object, not a host object
${NATS_FLAGS_HELP}
  --hash-key-secret <namespace>/<name>[/<key>]
                        the sync worker's content-hash key Secret (default: $CONTENT_HASH_KEY)
${HOST_FLAGS_HELP}
  -o, --output <fmt>    table (default, readable text), json or yaml
  -h, --help            show this help

Examples:
  tenantplane explain configmap/settings-x-shop-x-payments-dev -n tp-payments-dev
  tenantplane explain pod/web-x-shop-x-payments-dev -n tp-payments-dev --nats-url nats://localhost:4222
  tenantplane explain pod/shop/web --tenant payments-dev
  tenantplane explain pod/web -n shop --tenant payments-dev
  tenantplane explain tc/payments-dev

${EXIT_STATUS_HELP} A host object or a
tenant is explained even when its Decisions cannot be read; the exit status is then 3.
`;

const FORMATS = ["table", "json", "yaml"] as const;

/** A tenant object named from the tenant's side (`--tenant`): explained whether or not it has a host copy. */
export interface TenantObjectTarget {
  tenant: string;
  kind: string;
  /** The tenant (virtual) namespace. */
  namespace: string;
  name: string;
}

/** The parsed target of `explain`: a tenant, a tenant object, or a host object. */
export type ExplainTarget =
  | { tenant: string }
  | { tenantObject: TenantObjectTarget }
  | { kind: string; name: string; namespace: string };

/**
 * Parses `<kind>/<name>` (or `<kind>/<namespace>/<name>` with `--tenant`), `-n` and `--tenant`
 * into what to explain; exit 2 or 1 naming the bad part. With `--tenant` the reference is the
 * tenant's own (its namespace from the reference or `-n`, else `default`); without, it is a
 * host object and `-n` is its host namespace.
 */
export function parseExplainTarget(
  target: string | undefined,
  namespace: string | undefined,
  tenant?: string | undefined,
): ExplainTarget {
  if (target === undefined) throw usageError("explain", "missing <kind>/<name> or tc/<tenant>");
  const parts = target.split("/");
  if (parts.some((part) => part === "") || parts.length < 2 || parts.length > 3)
    throw usageError(
      "explain",
      `${JSON.stringify(target)}: write <kind>/<name>, e.g. configmap/settings or tc/payments-dev, or <kind>/<namespace>/<name> with --tenant`,
    );
  const [kindText = "", ...rest] = parts;
  if (TENANT_CLUSTER_NAMES.includes(kindText.toLowerCase())) {
    if (rest.length !== 1) throw usageError("explain", `${JSON.stringify(target)}: write tc/<tenant>`);
    if (tenant !== undefined)
      throw usageError("explain", "--tenant names a tenant object's tenant; tc/<tenant> needs none");
    checkTenantName(rest[0]!, "tc/<tenant>");
    return { tenant: rest[0]! };
  }
  const kind = syncKindOf(kindText);
  if (kind === undefined)
    throw new CliError(`<kind> ${JSON.stringify(kindText)}: explain knows tc and the synced kinds ${SYNC_KIND_NAMES}`);
  const name = rest[rest.length - 1]!;
  if (tenant !== undefined) {
    checkTenantName(tenant, "--tenant");
    const inReference = rest.length === 2 ? rest[0] : undefined;
    if (inReference !== undefined && namespace !== undefined && namespace !== inReference)
      throw usageError("explain", `${target} names namespace ${inReference} but -n says ${namespace}: give one`);
    return { tenantObject: { tenant, kind, namespace: inReference ?? namespace ?? "default", name } };
  }
  if (rest.length === 2)
    throw usageError(
      "explain",
      `${target}: <kind>/<namespace>/<name> is a tenant object's reference: add --tenant <tenant>`,
    );
  if (namespace === undefined)
    throw usageError(
      "explain",
      `missing -n <host namespace> for ${kind} ${name} (or --tenant <tenant> to name the tenant's object)`,
    );
  return { kind, name, namespace };
}

/** Runs `explain` with the arguments after the command name. */
export async function explain(args: readonly string[], io: CliIo): Promise<number> {
  const line = parseCommandLine("explain", args, {
    namespace: { type: "string", short: "n" },
    tenant: { type: "string" },
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
  const target = parseExplainTarget(line.positionals[0], stringFlag(line, "namespace"), stringFlag(line, "tenant"));
  const hashKeySecret = stringFlag(line, "hash-key-secret");
  if (hashKeySecret !== undefined) parseHashKeySecret(hashKeySecret);
  const host = openHost(hostOptionsOf(line, io));
  const env = io.env ?? {};
  const options = { natsUrl: natsUrlOf(stringFlag(line, "nats-url"), env), env, hashKeySecret };
  if ("tenant" in target) {
    const { explanation, natsUnreachable } = await explainTenant(host, target.tenant, options);
    io.stdout(
      output === "table"
        ? formatTenantExplanation(explanation, { color: io.color === true })
        : formatExplanationData(explanation, output),
    );
    return natsUnreachable ? EXIT_UNREACHABLE : 0;
  }
  const { explanation, natsUnreachable } =
    "tenantObject" in target
      ? await explainTenantObject(host, target.tenantObject, options)
      : await explainObject(host, target, options);
  io.stdout(output === "table" ? formatObjectExplanation(explanation) : formatExplanationData(explanation, output));
  return natsUnreachable ? EXIT_UNREACHABLE : 0;
}

/** How many of an object's Decisions `explain` shows. */
const LAST_DECISIONS = 5;

/** What explaining an object reads besides the host: NATS for its Decisions, the content-hash key. */
export interface ObjectOptions {
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
  const { context, rule } = await ruleOf(
    host,
    source.tenant,
    target.kind,
    "no longer syncs",
    "so the sync worker deletes this copy",
  );
  explanation.rule = rule;
  explanation.contentHash = await hashState(host, object, source, context, options);
  return withLastDecisions(
    explanation,
    options,
    source.tenant,
    (d) => d.hostRef.namespace === target.namespace && d.hostRef.name === target.name,
  );
}

/**
 * The tenant's plan context and the SyncPolicy rule for `kind` (see {@link policyRuleOf});
 * a policy or profile that cannot be used leaves the context unknown and says why in the rule.
 */
export async function ruleOf(
  host: Cluster,
  tenant: string,
  kind: string,
  verb: string,
  consequence: string,
): Promise<{ context: TenantPlanContext | undefined; rule: string }> {
  try {
    const context = await readPlanContext(host, tenant);
    return { context, rule: policyRuleOf(context, kind, verb, consequence) };
  } catch (error) {
    if (!(error instanceof CliError) || error.exitCode === EXIT_UNREACHABLE) throw error;
    return { context: undefined, rule: `unknown: ${error.message}` };
  }
}

/**
 * `explanation` with the last Decisions of its kind in `tenant` that are `about` it (or why
 * they could not be read), and whether NATS was unreachable.
 */
export async function withLastDecisions(
  explanation: ObjectExplanation,
  options: ObjectOptions,
  tenant: string,
  about: (decision: Decision) => boolean,
): Promise<{ explanation: ObjectExplanation; natsUnreachable: boolean }> {
  const subject = decisionSubject({ tenant, kind: explanation.kind });
  const history = await decisionHistory(options, subject, about, LAST_DECISIONS);
  if ("note" in history) explanation.decisionsNote = history.note;
  else explanation.decisions = history.list;
  return { explanation, natsUnreachable: "unreachable" in history };
}

/**
 * The SyncPolicy rule that syncs `kind` for the tenant of `context`, or, when none does, that
 * the policy `verb` (e.g. "does not sync") it and what follows (`consequence`).
 */
export function policyRuleOf(context: TenantPlanContext, kind: string, verb: string, consequence: string): string {
  const index = context.policy.toHost.findIndex((rule) => rule.kind === kind);
  if (index < 0) {
    return `none: ${context.policyName === undefined ? "the default policy" : `SyncPolicy ${context.policyName}`} ${verb} ${kind}, ${consequence}`;
  }
  return context.policyName === undefined
    ? `the default policy (TenantCluster ${context.tenant} names no spec.syncPolicyRef): every supported kind, ${kind} included`
    : `SyncPolicy ${context.policyName} spec.toHost[${index}] (kind: ${kind})`;
}

/**
 * The planner's answer for the tenant object `source` (read as `object`) against
 * `hostObjects`, with the sync worker's content-hash key when it can be found.
 */
export async function planSource(
  host: Cluster,
  context: TenantPlanContext,
  source: { kind: string; namespace: string; name: string },
  object: RawObject,
  hostObjects: readonly RawObject[],
  options: ObjectOptions,
): Promise<{ result: PlanResult; hashKey: string | undefined }> {
  const hashKey = await readHashKey(host, options.hashKeySecret, options.env);
  const result = planKey(
    {
      tenant: context.tenant,
      policy: context.policy,
      rules: context.rules,
      tenantObjects: [{ ...object, kind: source.kind }],
      hostObjects,
      ...(hashKey === undefined ? {} : { hashKey }),
    },
    { kind: source.kind, namespace: source.namespace, name: source.name },
  );
  return { result, hashKey };
}

/** The tenant's own API and DNS Services in its host namespace, those that exist, with `kind` set. */
async function tenantServicesOf(host: Cluster, namespace: string): Promise<RawObject[]> {
  const found: RawObject[] = [];
  for (const name of [TENANT_API_SERVICE, TENANT_DNS_SERVICE]) {
    const service = await onCluster(host, `read Service ${namespace}/${name}`, (o) =>
      o.get<RawObject & { apiVersion: string; kind: string }>("v1", "Service", name, namespace),
    );
    if (service !== undefined) found.push({ ...service, kind: "Service" });
  }
  return found;
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
  // A Pod's copy carries where it reaches the tenant's API and DNS: plan it with the same
  // Services the sync worker reads, or the hash comes out of placeholder addresses.
  const environment = source.kind === "Pod" ? await tenantServicesOf(host, hostNamespaceFor(source.tenant)) : [];
  const { result, hashKey } = await planSource(host, context, source, sourceObject, [object, ...environment], options);
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

/** Explains a tenant: phase, conditions, isolation objects and the profile field behind each, sync counts. */
export async function explainTenant(
  host: Cluster,
  tenant: string,
  options: ObjectOptions,
): Promise<{ explanation: TenantExplanation; natsUnreachable: boolean }> {
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
  const history = await decisionHistory(options, decisionSubject({ tenant }), () => true);
  const notSynced =
    "note" in history
      ? { notSyncedNote: history.note }
      : { notSynced: await stillInTenant(host, tc, tenant, notSyncedOf(history.list), notes) };
  const explanation: TenantExplanation = {
    name: tenant,
    phase: typeof tc.status?.["phase"] === "string" ? (tc.status["phase"] as string) : "Pending",
    endpoint: endpointOf(tc),
    hostNamespace: namespace,
    profile: profile === undefined ? "(built-in)" : `IsolationProfile ${profile}`,
    policy: policy === undefined ? "(default: every supported kind)" : `SyncPolicy ${policy}`,
    conditions: conditionsOf(tc),
    isolation,
    isolationMode: isolationModeOf(
      tc,
      "list" in history ? history.list : undefined,
      "note" in history ? history.note : undefined,
    ),
    podSecurity,
    ...(counts === undefined ? {} : { sync: counts }),
    ...notSynced,
    notes,
  };
  return { explanation, natsUnreachable: "unreachable" in history };
}

/**
 * `list` without the objects the tenant no longer has (their last Skip or Fail is history),
 * read through the tenant's kubeconfig. Entries about no tenant object of a synced kind (the
 * tenant's DNS zone, another service's Decisions) are kept. A tenant API that cannot be read
 * keeps every entry and adds a note saying so.
 */
async function stillInTenant(
  host: Cluster,
  tc: RawObject,
  tenant: string,
  list: NotSynced[],
  notes: string[],
): Promise<NotSynced[]> {
  const synced = (n: NotSynced) => n.tenantRef.namespace !== "" && syncKindOf(n.kind) === n.kind;
  const kinds = [...new Set(list.filter(synced).map((n) => n.kind))];
  if (kinds.length === 0) return list;
  try {
    const external = typeof tc.status?.["externalEndpoint"] === "string";
    const tenantApi = openTenant(tenant, await readTenantKubeconfig(host, tenant, external, tc));
    const present = new Set<string>();
    for (const kind of kinds) {
      const items = await onCluster(tenantApi, `list ${kind}s`, (o) =>
        o.list<RawObject & { apiVersion: string }>("v1", kind),
      );
      for (const item of items) present.add(`${kind}/${item.metadata?.namespace}/${item.metadata?.name}`);
    }
    return list.filter((n) => !synced(n) || present.has(`${n.kind}/${n.tenantRef.namespace}/${n.tenantRef.name}`));
  } catch (error) {
    if (error instanceof CliError && error.exitCode !== EXIT_UNREACHABLE) throw error;
    notes.push(
      `tenant ${tenant}'s API cannot be read (${error instanceof Error ? error.message.split("\n")[0] : String(error)}): objects deleted since their last Decision may be listed as not synced`,
    );
    return list;
  }
}
