import {
  CONDITION_CONTROL_PLANE_READY,
  defaultSyncPolicySpec,
  type IsolationMode,
  IsolationStatusSchema,
  TENANT_NAME_MESSAGE,
  TenantNameSchema,
} from "@tenantplane/api";
import { type Decision, DecisionSchema } from "@tenantplane/messaging";
import {
  applyServiceQuota,
  compileHostRules,
  LABEL_VIRTUAL_NODE,
  withEffectiveMode,
  contentHash,
  defaultHostRules,
  explanation,
  plan,
  planPodNetwork,
  podEnvironmentFrom,
  predictedHostObjects,
  type PlanInput,
  type PlannedDecisionWithObject,
  type PlanResult,
} from "@tenantplane/sync";
import { outputFlag, parseCommandLine, stringFlag, usageError } from "./args.js";
import { CliError, type CliIo, EXIT_INVALID_INPUT } from "./cli-io.js";
import { clusterScopedKinds } from "./cluster-scoped.js";
import { formatData, formatTable, OUTPUT_FORMATS, type OutputFormat, type PlanRow } from "./format.js";
import { parseHashKeySecret, readHashKey } from "./hash-key.js";
import { type Cluster, HOST_FLAGS, HOST_FLAGS_HELP, type HostOptions, openHost, openTenant } from "./host.js";
import { dryRunEntries } from "./host-dry-run.js";
import { markTemplates, relabel, type TemplateOrigin, type ViewEntry, withTemplateRows } from "./plan-view.js";
import { readManifests } from "./read-manifests.js";
import { parsePolicyManifest, parseProfileManifest } from "./read-policy.js";
import { listHostObjects, type RawObject, readPlanContext } from "./tenant-context.js";
import { applyManifest, asStored, deletableKinds, listTenantObjects, manifestView } from "./tenant-objects.js";
import { conditionsOf } from "./tenants-format.js";
import { type TemplateObject, templateObjects } from "./workload-pods.js";

/** Field manager of the dry runs when `--field-manager` is not given: `kubectl apply --server-side`'s. */
export const DEFAULT_FIELD_MANAGER = "kubectl";

/** The `service` field of Decisions printed by explain-sync. */
export const EXPLAIN_SYNC_SERVICE = "explain-sync";

/** Usage text of `tenantplane explain-sync`. */
export const EXPLAIN_SYNC_HELP = `Usage: tenantplane explain-sync --tenant <name> -f <file|-> [--prune] [--kubeconfig <file>] [--context <name>] [-o table|json|yaml]
       tenantplane explain-sync --offline --tenant <name> -f <file|-> [--policy <file>] [--profile <file>] [-o ...]

Predicts what the sync worker will do with each tenant object, using its own planner.

Live (the default) predicts what the worker does once the manifest is applied to the
tenant: the tenant's current objects (read through its admin kubeconfig) with the manifest's
objects in place of theirs, each as the tenant API would store it (a server-side dry run
fills in defaults; the worker hashes stored objects), planned against every object in
tp-<tenant> (read through the host kubeconfig) with the SyncPolicy and IsolationProfile
host rules the host cluster holds.
ACTION is Create where the copy is absent, Update where its content hash is outdated, Skip
where a foreign object or another source holds the name, Delete for copies whose source is
gone from the tenant, InSync where the copy already matches, and Fail where the host API
server refuses the write: every Create and Update is sent to the host as a server-side dry
run (dryRun=All) of the sync worker's own request, so quota, LimitRange, Pod Security,
ServiceAccount and admission webhook refusals are predicted, with the server's Status reason
and message. Each write is judged alone against the host as it is now: what the same plan
creates first (a ServiceAccount a Pod names) is taken into account, what several new Pods
use up together (quota) is not. Rows cover the manifest's
objects and every other action the worker will take. A tenant object the manifest leaves
out stays as it is, so an object removed from a manifest gets its Delete only with --prune,
which makes the manifest the complete desired state of its namespaces. If the tenant API
cannot be read, the plan uses the manifest alone and predicts no Delete for the policy's
kinds (the worker deletes nothing then either). Once the tenant is listed, the plan also
shows the worker's writes to the ConfigMaps that decide what the tenant's Pods reach by
name: its DNS zone (tenant-dns-records) and each namespace's service links
(service-links.<namespace>), as rows of tenant object "/<tenant>"; an address the host has
yet to assign shows as <ClusterIP of ...> or <IP of Pod ... once Ready>. --offline plans
the manifest against an empty namespace and sends nothing.

Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs are not synced: the
controller in the tenant makes Pods from their Pod template, and those Pods are. For each
one, a Pod is made from the template as the controller would (named <workload>-<hash>, or
<name>-0 for a StatefulSet, in the workload's namespace, with the ServiceAccount the
template names) and planned (and dry-run) like any Pod, so a refusal shows at the workload:
its rows follow the workload's and say "from spec.template of <Kind> <ns>/<name>"; a
StatefulSet's volumeClaimTemplates add the claims of its first Pod. In -o json these rows
carry a "template" field naming the workload (their names are stand-ins, not the
controller's). Cluster-scoped objects (Namespace, ClusterRole, StorageClass, CRDs and the
kinds of cluster-scoped CRDs in the manifest, ...) stay in the tenant API and are shown so.

The dry runs need the CLI's host credentials to create, update and patch the synced kinds
in tp-<tenant> (nothing is stored); without that permission a note says the writes were
not checked.

Options:
  --tenant <name>     tenant name: a DNS label of at most 60 characters
  -f, --file <file>   multi-document YAML or JSON with tenant objects; '-' reads stdin.
                      List kinds contribute their items; objects without a namespace
                      (or namespace "") are placed in 'default'. Reasons cite objects as
                      'item N', counting objects (List items one by one) from 1.
  --field-manager <name>
                      (live) the field manager the manifest is applied with; each object
                      is dry-run as it, so its fields replace rather than merge with those
                      it set before (default: kubectl, as 'kubectl apply --server-side')
  --prune             (live) the manifest is the complete desired state of every tenant
                      namespace it has objects in, as 'kubectl apply --prune' treats it:
                      the tenant's objects there that the manifest lacks count as deleted,
                      and their host copies are predicted as Delete. Other namespaces are
                      kept as they are.
${HOST_FLAGS_HELP}
  --hash-key-secret <namespace>/<name>[/<key>]
                      read the content-hash key (the sync worker's CONTENT_HASH_KEY) from
                      this host Secret (key default: hash-key); default: $CONTENT_HASH_KEY.
                      Without the worker's key every keyed copy looks outdated.
  --offline           plan without contacting a cluster, against an empty host namespace
  --policy <file>     (--offline) a SyncPolicy manifest; default: every supported kind
  --profile <file>    (--offline) an IsolationProfile manifest whose host rules apply
                      (spec.workloads, the Pod Security enforce level, the Service quota);
                      default: the built-in profile
  -o, --output <fmt>  table (default), json or yaml; json and yaml print Decisions
  -h, --help          show this help

Examples:
  tenantplane explain-sync --tenant payments-dev -f app.yaml
  tenantplane explain-sync --tenant payments-dev -f app.yaml --prune   # app.yaml is all of its namespaces
  kubectl kustomize overlays/dev | tenantplane explain-sync --tenant payments-dev -f - -o json
  tenantplane explain-sync --offline --tenant dev -f examples/tenant/workloads.yaml

Exit status: 0 planned; 1 invalid input (an unreadable file, tenant, policy or profile, a
TenantCluster, SyncPolicy or IsolationProfile that is missing or invalid, or any malformed
document or object, after planning all the others); 2 invalid command line; 3 the host
cluster cannot be reached.
`;

interface ExplainOptions {
  tenant: string;
  file: string;
  offline: boolean;
  prune: boolean;
  fieldManager: string;
  policy: string | undefined;
  profile: string | undefined;
  host: HostOptions;
  hashKeySecret: string | undefined;
  output: OutputFormat;
}

/**
 * Runs `explain-sync` with the arguments after the command name; prints the plan on
 * stdout and returns the exit status. Throws {@link CliError} for input it cannot use.
 */
export async function explainSync(args: readonly string[], io: CliIo): Promise<number> {
  const options = parseOptions(args);
  if (options === "help") {
    io.stdout(EXPLAIN_SYNC_HELP);
    return 0;
  }
  const source = options.file === "-" ? "<stdin>" : options.file;
  const manifest = await read(io, options.file);
  const { objects: manifestObjects, problems } = readManifests(manifest, source);
  const templates = templateObjects(manifestObjects);
  let prediction: Prediction;
  if (options.offline) {
    const policy =
      options.policy === undefined
        ? defaultSyncPolicySpec
        : parsePolicyManifest(await read(io, options.policy), options.policy);
    const rules =
      options.profile === undefined
        ? defaultHostRules
        : compileHostRules(parseProfileManifest(await read(io, options.profile), options.profile));
    const planned = plan({ tenant: options.tenant, policy, rules, hostObjects: [], tenantObjects: manifestObjects });
    prediction = {
      main: applyServiceQuota(planned, rules, options.tenant, []),
      templates: planTemplates({ tenant: options.tenant, policy, rules, hostObjects: [] }, templates.objects),
    };
  } else {
    prediction = await planLive(options, manifestObjects, templates.objects, io);
  }
  const clusterScoped = clusterScopedKinds(manifestObjects);
  const view = <T extends PlanRow & { malformed?: true }>(main: T[], fromTemplates: T[]) =>
    withTemplateRows(relabel(main, clusterScoped, templates.problems), markTemplates(fromTemplates, templates.objects));
  const entries = view(explanation(prediction.main), explanation(prediction.templates));

  if (options.output === "table") {
    const rows = options.offline ? entries : view(planRows(prediction.main), planRows(prediction.templates));
    io.stdout(rows.length === 0 ? `no objects found in ${source}\n` : formatTable(rows, { color: io.color === true }));
  } else {
    const time = io.now().toISOString();
    io.stdout(
      formatData(
        entries.map((entry) => toDecision(entry, time)),
        options.output,
      ),
    );
  }
  // Everything readable is planned and printed first; bad input still fails the run.
  for (const problem of problems) io.stderr(`tenantplane explain-sync: ${problem}\n`);
  const malformed = entries.filter((entry) => entry.malformed === true).length;
  if (malformed > 0) {
    io.stderr(
      `tenantplane explain-sync: ${source}: ${malformed} malformed ${malformed === 1 ? "object" : "objects"} (Skip rows citing 'item N')\n`,
    );
  }
  return problems.length > 0 || malformed > 0 ? EXIT_INVALID_INPUT : 0;
}

/** What explain-sync predicts: the plan of the tenant's objects, and that of the template stand-ins of its workloads. */
interface Prediction {
  main: PlanResult;
  templates: PlanResult;
}

/**
 * Plans the template stand-ins with the worker's planner on their own: against the same host
 * objects, but with no garbage collection (they are not the tenant's whole state).
 */
function planTemplates(input: Omit<PlanInput, "tenantObjects">, objects: readonly TemplateObject[]): PlanResult {
  return plan({ ...input, tenantObjects: objects.map((o) => o.object), completeKinds: [] });
}

/**
 * Plans as the sync worker will once the manifest is applied to the tenant: the tenant's
 * current objects (through its kubeconfig) with the manifest's objects replacing theirs,
 * against every object in tp-<tenant>, with the tenant's policy, host rules and hash key.
 * If the tenant API cannot be listed, no Delete is predicted for policy kinds, as the
 * worker deletes nothing then either.
 */
async function planLive(
  options: ExplainOptions,
  manifestObjects: unknown[],
  templates: readonly TemplateObject[],
  io: CliIo,
): Promise<Prediction> {
  const note = (text: string) => io.stderr(`tenantplane explain-sync: note: ${text}\n`);
  const host = openHost({ ...options.host, env: io.env ?? {} });
  const context = await readPlanContext(host, options.tenant);
  const notReady = notReadyNote(context.tenantCluster);
  if (notReady !== undefined) note(`tenant ${options.tenant} ${notReady}`);
  const hashKey = await readHashKey(host, options.hashKeySecret, io.env ?? {});
  const { objects: hostObjects } = await listHostObjects(host, options.tenant);
  const tenant = await listTenantObjects(host, context);
  if (!tenant.listed) {
    note(
      `cannot list tenant ${options.tenant}'s objects (${tenant.problem ?? "unknown"}): planned from the manifest alone, and no Delete is predicted for the policy's kinds${options.prune ? " (--prune included)" : ""}`,
    );
  }
  const policyKinds = context.policy.toHost.map((rule) => rule.kind);
  // The worker hashes objects as the tenant API stores them (defaults, stringData folded into data).
  let desired: unknown[] = manifestObjects;
  let templateObjects: unknown[] = templates.map((t) => t.object);
  let privateNodes: ReadonlySet<string> | undefined;
  if (tenant.kubeconfig !== undefined) {
    const api = openTenant(options.tenant, tenant.kubeconfig, options.fieldManager);
    // A Pod bound to one of the tenant's own nodes (joined to its API) is never copied, as the worker plans it.
    privateNodes = await listPrivateNodes(api).catch((error: unknown) => {
      note(`cannot list the tenant's Nodes (${String(error)}): Pods bound to its own nodes are planned as if lost`);
      return undefined;
    });
    const stored = await asStored(api, manifestObjects, policyKinds);
    // A controller's Pods are stored with the tenant's defaults and admission too (its ServiceAccount's token volume).
    const storedTemplates = await asStored(api, templateObjects, policyKinds);
    for (const text of [...stored.notes, ...storedTemplates.notes]) note(text);
    desired = stored.objects;
    templateObjects = storedTemplates.objects;
  }
  // What a host load balancer cannot serve follows the mode in effect, as the worker plans it.
  const rules = withEffectiveMode(context.rules, effectiveModeOf(context.tenantCluster));
  const input = {
    tenant: options.tenant,
    policy: context.policy,
    rules,
    hostObjects,
    ...(hashKey === undefined ? {} : { hashKey }),
    ...(privateNodes === undefined ? {} : { privateNodes }),
  };
  const tenantObjects = applyManifest(desired, tenant.objects, { prune: options.prune });
  const planned = plan({ ...input, tenantObjects, completeKinds: deletableKinds(policyKinds, tenant.listed) });
  // Load balancers and node ports are counted across Services, as the worker's full pass does.
  const result = applyServiceQuota(planned, rules, options.tenant, hostObjects);
  const fromTemplates = plan({ ...input, tenantObjects: templateObjects, completeKinds: [] });
  // The host's admission judges each write: refusals become Fails before anything is derived from the writes.
  const checked = await dryRunEntries(host, [...result.decisions, ...fromTemplates.decisions], hostObjects);
  for (const text of checked.notes) note(text);
  const decisions = checked.entries.slice(0, result.decisions.length);
  const templateDecisions = checked.entries.slice(result.decisions.length);
  const prediction = {
    main: manifestView({ ...result, decisions }, manifestObjects),
    templates: { ...fromTemplates, decisions: templateDecisions },
  };
  // Derived from all of the tenant's Services and Pods: a manifest alone would drop the others' names.
  if (!tenant.listed) return prediction;
  const network = podNetworkWrites(
    options.tenant,
    tenantObjects,
    hostObjects,
    { ...result, decisions },
    true,
    rules.placement?.mode === "Private",
  );
  if (network === undefined) {
    note(
      "the tenant API and DNS Services have no ClusterIPs yet: the tenant's DNS zone and service links are not predicted",
    );
    return prediction;
  }
  const networkChecked = await dryRunEntries(host, network, hostObjects);
  for (const text of networkChecked.notes) note(text);
  return { ...prediction, main: { ...prediction.main, decisions: [...decisions, ...networkChecked.entries] } };
}

/**
 * The sync worker's writes to the tenant's DNS zone and service-link ConfigMaps once `result`
 * is applied: planned by the worker's own planner against the host namespace as it will be
 * (a new Service's ClusterIP and a new Pod's address shown as placeholders naming the
 * object). Undefined while the pod environment is unknown (the worker writes none then).
 */
export function podNetworkWrites(
  tenant: string,
  tenantObjects: readonly unknown[],
  hostObjects: readonly RawObject[],
  result: PlanResult,
  complete: boolean,
  privateMode = false,
): PlannedDecisionWithObject[] | undefined {
  const environment = podEnvironmentFrom(hostObjects, tenant);
  if (environment === "unknown") return undefined;
  const hosts = predictedHostObjects(hostObjects, result.decisions) as RawObject[];
  const ofKind = (list: readonly unknown[], kind: string) =>
    list.filter((o) => (o as { kind?: unknown } | null)?.kind === kind);
  return planPodNetwork({
    tenant,
    environment,
    tenantServices: ofKind(tenantObjects, "Service"),
    tenantPods: ofKind(tenantObjects, "Pod"),
    hostServices: ofKind(hosts, "Service"),
    hostPods: ofKind(hosts, "Pod"),
    hostConfigMaps: ofKind(hosts, "ConfigMap"),
    complete,
    privateMode,
  }).decisions;
}

/** Names of the tenant's Nodes without the virtual-node label: nodes joined to its own API. */
async function listPrivateNodes(api: Cluster): Promise<Set<string>> {
  const list = await api.client.request<{ items?: RawObject[] }>("GET", "/api/v1/nodes");
  const names = new Set<string>();
  for (const node of list.items ?? []) {
    const name = node.metadata?.name;
    if (name !== undefined && node.metadata?.labels?.[LABEL_VIRTUAL_NODE] !== "true") names.add(name);
  }
  return names;
}

/** TenantCluster status.isolation.mode (the mode in effect), or undefined when it shows none. */
function effectiveModeOf(tenantCluster: RawObject): IsolationMode | undefined {
  const shown = IsolationStatusSchema.safeParse(tenantCluster.status?.["isolation"] ?? {});
  return shown.success ? shown.data.mode : undefined;
}

/** Every row of a live plan: decisions, ignored objects and copies already in sync (action `InSync`), in plan order. */
export function planRows(result: PlanResult): PlanRow[] {
  const inSync = result.inSync.map((target) => ({
    ...target,
    action: IN_SYNC,
    reason: `host ${target.kind} ${target.hostRef.namespace}/${target.hostRef.name} carries the desired content hash: no write`,
  }));
  return [...explanation(result), ...inSync].sort(
    (a, b) =>
      compare(a.tenantRef.namespace, b.tenantRef.namespace) ||
      compare(a.tenantRef.name, b.tenantRef.name) ||
      compare(a.kind, b.kind) ||
      compare(a.hostRef.name, b.hostRef.name),
  );
}

/**
 * Why the sync worker is not syncing the tenant yet (it starts once the control plane is
 * Ready), or undefined when it is.
 */
export function notReadyNote(tc: RawObject): string | undefined {
  if ((tc.metadata as { deletionTimestamp?: unknown } | undefined)?.deletionTimestamp !== undefined) {
    return "is being deleted: the sync worker no longer syncs it";
  }
  const ready = conditionsOf(tc).find((c) => c.type === CONDITION_CONTROL_PLANE_READY);
  if (ready?.status !== "True") {
    return "has no Ready control plane yet: the sync worker acts on this plan once ControlPlaneReady is True";
  }
  return undefined;
}

/** The ACTION of a copy that already matches its source. */
export const IN_SYNC = "InSync";

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A planned entry stamped as a Decision; the id is a hash of its content, so reruns agree. A
 * template stand-in keeps its `template` (the workload it stands for): its name is not the
 * one the controller will give its Pods, so no published Decision will match it by name.
 */
export function toDecision(entry: ViewEntry, time: string): Decision & { template?: TemplateOrigin } {
  const { tenant, action, kind, tenantRef, hostRef, reason, error } = entry;
  const planned = { tenant, action, kind, tenantRef, hostRef, reason, ...(error === undefined ? {} : { error }) };
  const decision = DecisionSchema.parse({ id: contentHash(planned), time, service: EXPLAIN_SYNC_SERVICE, ...planned });
  return entry.template === undefined ? decision : { ...decision, template: entry.template };
}

function parseOptions(args: readonly string[]): ExplainOptions | "help" {
  const line = parseCommandLine("explain-sync", args, {
    offline: { type: "boolean" },
    prune: { type: "boolean" },
    "field-manager": { type: "string" },
    tenant: { type: "string" },
    file: { type: "string", short: "f" },
    policy: { type: "string" },
    profile: { type: "string" },
    "hash-key-secret": { type: "string" },
    output: { type: "string", short: "o" },
    ...HOST_FLAGS,
  });
  if (line.help) return "help";
  if (line.positionals.length > 0) throw usage(`Unexpected argument '${line.positionals[0]}'`);
  const tenant = stringFlag(line, "tenant");
  const file = stringFlag(line, "file");
  const offline = line.values["offline"] === true;
  const prune = line.values["prune"] === true;
  if (tenant === undefined) throw usage("missing --tenant <name>");
  if (file === undefined) throw usage("missing -f <file|->");
  const output = outputFlag("explain-sync", line, OUTPUT_FORMATS);
  const policy = stringFlag(line, "policy");
  const profile = stringFlag(line, "profile");
  if (!offline && (policy !== undefined || profile !== undefined)) {
    throw usage(
      "--policy and --profile need --offline: live planning reads the tenant's own SyncPolicy and IsolationProfile",
    );
  }
  if (offline && prune) {
    throw usage("--prune needs a live tenant: --offline plans against no tenant objects, so there is nothing to prune");
  }
  if (offline && line.values["field-manager"] !== undefined) {
    throw usage("--field-manager needs a live tenant: --offline dry-runs nothing");
  }
  if (offline && (line.values["kubeconfig"] !== undefined || line.values["context"] !== undefined)) {
    throw usage("--kubeconfig and --context do not apply to --offline, which contacts no cluster");
  }
  const hashKeySecret = stringFlag(line, "hash-key-secret");
  if (hashKeySecret !== undefined) parseHashKeySecret(hashKeySecret);
  if (!TenantNameSchema.safeParse(tenant).success) {
    throw new CliError(`--tenant ${JSON.stringify(tenant)}: a tenant name ${TENANT_NAME_MESSAGE}`);
  }
  return {
    tenant,
    file,
    offline,
    prune,
    fieldManager: stringFlag(line, "field-manager") ?? DEFAULT_FIELD_MANAGER,
    policy,
    profile,
    host: { kubeconfig: stringFlag(line, "kubeconfig"), context: stringFlag(line, "context") },
    hashKeySecret,
    output,
  };
}

async function read(io: CliIo, path: string): Promise<string> {
  try {
    return await io.readFile(path);
  } catch (error) {
    throw new CliError(
      `cannot read ${path === "-" ? "<stdin>" : path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function usage(message: string): CliError {
  return usageError("explain-sync", message);
}
