// Provisioning at scale, on the real test stack with the API server's audit log on:
//  1. burst: TENANTS TenantClusters applied at once, timed until every one of their host objects
//     exists, against a baseline measured in the same run: a plain-HTTP script creating the
//     same objects (copied from one tenant tenantplane provisioned: every kind it creates in a
//     tenant namespace, the tenant DNS server's ConfigMap and Deployment included) into as many
//     fresh namespaces, ten tenants at a time, while the same once-a-second observer that
//     checks the burst's objects polls the API server; once before the burst and once after the
//     tenants are deleted, each on a quiet machine, the ratio taken against their mean. Both
//     runs end at the API server's record of their last create (the audit log);
//  2. requests per tenant made by tenantplane's services (counted by user agent in the audit
//     log), and every component's requests per tenant for both runs;
//  3. waiting: the tenants then wait for control planes that never answer (kwok runs the pods,
//     nothing serves the tenant API); host API requests per second after the first minute;
//  4. peak resident memory (VmHWM) of the provisioner and the isolation service.
//
//   npm run build && npm run bench:scale            (TENANTS=20 npm run bench:scale for a quick run)
import { crdManifests } from "@tenantplane/api";
import { JsonClient } from "@tenantplane/kube";
import {
  ServiceFleet,
  agentOf,
  buildTools,
  installCrds,
  isWrite,
  readAudit,
  startHostCluster,
  startNats,
  waitFor,
  type AuditRequest,
} from "../test/harness/index.js";
import { byAgent, byRequest } from "./audit-summary.js";
import { cpuBetween, cpuSnapshot, formatCpu, formatMachine, formatSettled, machineTicks, settle } from "./cpu-usage.js";
import { pct, pool } from "./stats.js";
import { procStatusMib } from "./proc-status.js";

const TENANTS = Number(process.env.TENANTS ?? 100);
const RAW_CONCURRENCY = 10;
const WAIT_WINDOW_S = Number(process.env.WAIT_WINDOW_SECONDS ?? 60);
const command = `npm run build && ${TENANTS === 100 ? "" : `TENANTS=${TENANTS} `}npm run bench:scale`;
const BENCH_AGENT = "bench-observer/1";
const RAW_AGENT = "bench-raw/1";
const MANAGED = "app.kubernetes.io/managed-by=tenantplane";
// What the baseline's copies carry instead (see neutral()).
const COPY_MANAGED = "app.kubernetes.io/managed-by=bench-copy1";

// Every kind tenantplane creates in a tenant's host namespace, as the raw script addresses them.
const KINDS = [
  { kind: "ResourceQuota", apiVersion: "v1", plural: "resourcequotas" },
  { kind: "LimitRange", apiVersion: "v1", plural: "limitranges" },
  { kind: "NetworkPolicy", apiVersion: "networking.k8s.io/v1", plural: "networkpolicies" },
  { kind: "Secret", apiVersion: "v1", plural: "secrets" },
  { kind: "ConfigMap", apiVersion: "v1", plural: "configmaps" },
  { kind: "Service", apiVersion: "v1", plural: "services" },
  { kind: "StatefulSet", apiVersion: "apps/v1", plural: "statefulsets" },
  { kind: "Deployment", apiVersion: "apps/v1", plural: "deployments" },
] as const;

type Obj = { apiVersion?: string; kind?: string; metadata: Record<string, unknown> & { name: string } } & Record<
  string,
  unknown
>;

const toolsDir = await buildTools();
// Two pods a tenant (control plane, DNS server) and 110 pods a node, as a kubelet takes by default:
// with too few nodes the scheduler retries the rest and writes Events while the tenants wait.
const host = await startHostCluster({
  name: "bench-scale",
  toolsDir,
  auditLog: true,
  nodes: Math.ceil((2 * TENANTS + 20) / 110),
});
const nats = await startNats({ toolsDir });
const api = new JsonClient(host.kubeConfig, { userAgent: BENCH_AGENT });
const raw = new JsonClient(host.kubeConfig, { userAgent: RAW_AGENT });
await installCrds(host.kubeConfig, crdManifests());
await api.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "tenantplane-system" } } });
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  // SERVICE_NODE_OPTIONS (e.g. a --require of a script that starts the inspector's CPU profiler)
  // is every service's NODE_OPTIONS.
  env: { LOG_LEVEL: "info", POD_NAMESPACE: "tenantplane-system", NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS ?? "" },
});
const services = Object.fromEntries(
  await Promise.all(
    (["watcher", "provisioner", "isolation", "recorder"] as const).map(
      async (name) => [name, await fleet.start(name)] as const,
    ),
  ),
);

try {
  // ---- one tenant provisioned by tenantplane: the object set both runs must produce ----
  await applyTenant("calibration");
  const template = await waitFor(
    async () => {
      const objects = await hostObjects("tp-calibration");
      const sts = objects.find((o) => o.kind === "StatefulSet");
      return sts && ((sts.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0) >= 1 && objects;
    },
    { timeoutMs: 120_000, intervalMs: 500, description: "the calibration tenant's StatefulSet to be ready" },
  );
  const namespaceTemplate = await api.request<Obj>("GET", "/api/v1/namespaces/tp-calibration");
  const perTenant = template.length + 1;

  // ---- baseline: the same objects, created by a plain script, 10 tenants at a time ----
  const before = await baseline("raw-", namespaceTemplate, template);
  const burstSettled = await settle();

  // ---- burst: TENANTS TenantClusters at once ----
  const rssBefore = { provisioner: rss("provisioner"), isolation: rss("isolation") };
  const passesBefore = await passCounts();
  const burstStart = Date.now();
  const burstCpuFrom = cpuSnapshot();
  const burstMachineFrom = machineTicks();
  await Promise.all(Array.from({ length: TENANTS }, (_, i) => applyTenant(`scale-${i}`)));
  const doneAt = new Map<string, number>();
  await waitFor(
    async () => {
      const counts = await objectCounts();
      for (let i = 0; i < TENANTS; i++) {
        const ns = `tp-scale-${i}`;
        if (!doneAt.has(ns) && (counts.get(ns) ?? 0) >= perTenant) doneAt.set(ns, Date.now());
      }
      return doneAt.size === TENANTS;
    },
    { timeoutMs: 900_000, intervalMs: 1_000, description: `host objects of ${TENANTS} tenants` },
  );
  const allDone = Math.max(...doneAt.values());
  const passesInBurst = passesSince(passesBefore, await passCounts());
  const burstCpu = formatCpu(cpuBetween(burstCpuFrom, cpuSnapshot()));
  const burstMachine = formatMachine(burstMachineFrom, machineTicks());
  // Timed by the API server's record of the last create, like the baseline (see lastCreates).
  const created = lastCreates(readAudit(host.auditLogPath!, burstStart), "tp-scale-", "tenantplane-");
  const observedSeconds = (allDone - burstStart) / 1000;
  const tpSeconds = created.size === TENANTS ? (Math.max(...created.values()) - burstStart) / 1000 : observedSeconds;
  const perTenantSeconds = [...(created.size === TENANTS ? created : doneAt).values()].map(
    (t) => (t - burstStart) / 1000,
  );

  // ---- waiting: nothing changes any more; count from the end of the first minute ----
  const waitStart = Math.max(burstStart + 60_000, allDone);
  const waitEnd = waitStart + WAIT_WINDOW_S * 1000;
  await new Promise((r) => setTimeout(r, Math.max(0, waitEnd - Date.now()) + 3_000));
  // One read of the audit log for the burst, the Events that trail it and the waiting window.
  const sinceBurst = readAudit(host.auditLogPath!, burstStart);
  // Read while the tenants still exist (they are deleted before the second baseline).
  const rssWaiting = { provisioner: rss("provisioner"), isolation: rss("isolation") };
  const burstRequests = sinceBurst.filter((r) => r.receivedMs <= burstStart + tpSeconds * 1000);
  const waitRequests = sinceBurst.filter(
    (r) => r.receivedMs >= waitStart && r.receivedMs < waitEnd && agentOf(r) !== BENCH_AGENT.split("/")[0],
  );

  // ---- the baseline again, once the tenants are gone: the same work costs this machine from
  // one minute to the next up to half again as much CPU, so one baseline is not a yardstick ----
  await Promise.all(
    Array.from({ length: TENANTS }, (_, i) =>
      api.request("DELETE", `/apis/tenantplane.io/v1alpha1/tenantclusters/scale-${i}`),
    ),
  );
  await namespacesGone("tp-scale-", "the tenants' namespaces to be deleted");
  const after = await baseline("raw2-", namespaceTemplate, template);
  const baselineMean = (before.seconds + after.seconds) / 2;

  const peak = (name: "provisioner" | "isolation") => procStatusMib(services[name]!.process.pid, "VmHWM");
  const grown = (name: "provisioner" | "isolation") => ((rssWaiting[name] - rssBefore[name]) * 1024) / TENANTS;
  const tp = (r: AuditRequest) => agentOf(r).startsWith("tenantplane-");
  const tpBurst = burstRequests.filter(tp);
  // Events trail the burst (the recorder keeps few writes in flight): count them until waiting starts.
  const tpUntilWaiting = sinceBurst.filter((r) => r.receivedMs < waitStart && tp(r));
  const lastEvent = Math.max(
    burstStart,
    ...tpUntilWaiting.filter((r) => agentOf(r) === "tenantplane-recorder").map((r) => r.receivedMs),
  );

  console.log(`\n${TENANTS} TenantClusters applied at once (${perTenant} host objects each)`);
  console.log(
    `  baseline: plain script, ${RAW_CONCURRENCY} tenants at a time: before the burst ${fmt(before.seconds)} (p50 per tenant ${fmt(pct(before.times, 50))}; the script's clock ${fmt(before.scriptSeconds)}), after it ${fmt(after.seconds)} (p50 ${fmt(pct(after.times, 50))}; ${fmt(after.scriptSeconds)})`,
  );
  console.log(
    `  tenantplane: all host objects exist     ${fmt(tpSeconds)}   (p50 per tenant ${fmt(pct(perTenantSeconds, 50))}; the observer saw it at ${fmt(observedSeconds)})`,
  );
  console.log(
    `  ratio tenantplane / baseline             ${(tpSeconds / baselineMean).toFixed(2)}x against their mean (${(tpSeconds / before.seconds).toFixed(2)}x before, ${(tpSeconds / after.seconds).toFixed(2)}x after)`,
  );
  console.log(`  CPU, baseline before: ${before.cpu}`);
  console.log(`  CPU, tenantplane:     ${burstCpu}`);
  console.log(`  CPU, baseline after:  ${after.cpu}`);
  console.log(
    `  machine, baseline before: ${before.machine}; tenantplane: ${burstMachine}; baseline after: ${after.machine}`,
  );
  console.log(
    `  before each window, the machine was: baseline ${formatSettled(before.settled)}; tenantplane ${formatSettled(burstSettled)}; baseline after ${formatSettled(after.settled)}`,
  );
  console.log(`  tenants done by second: ${doneBySecond(perTenantSeconds)}`);
  console.log(
    `  passes per tenant until all objects exist (messages handled and local wakes, by outcome): ${[...passesInBurst]
      .map(([service, outcomes]) => `${service} ${formatOutcomes(outcomes)}`)
      .join("; ")}`,
  );
  console.log(`\nRequests per tenant during the burst (apply -> all objects exist)`);
  console.log(
    `  tenantplane's services: ${perTenantOf(tpBurst.length)} (${perTenantOf(tpBurst.filter(isWrite).length)} writes)`,
  );
  for (const [agent, row] of byAgent(burstRequests))
    console.log(`    ${agent.padEnd(40)} ${perTenantOf(row.all).padStart(7)}  (${perTenantOf(row.writes)} writes)`);
  console.log(
    `  tenantplane's services until waiting starts, trailing Events included: ${perTenantOf(tpUntilWaiting.length)} (${perTenantOf(tpUntilWaiting.filter(isWrite).length)} writes; last recorder request ${fmt((lastEvent - burstStart) / 1000)} after the apply)`,
  );
  console.log(`  tenantplane's services by request (per tenant; a dry run is not a write):`);
  for (const [what, n] of requestCounts(tpBurst).slice(0, 24))
    console.log(`    ${what.padEnd(58)} ${perTenantOf(n).padStart(7)}`);
  console.log(`  when tenantplane's requests were made (s after the apply: first, median, last; count):`);
  for (const line of timeline(tpBurst, burstStart)) console.log(`    ${line}`);
  console.log(
    `  baseline before the burst, every component: ${perTenantOf(before.requests.length)} (${perTenantOf(before.requests.filter(isWrite).length)} writes)`,
  );
  for (const [agent, row] of byAgent(before.requests))
    console.log(`    ${agent.padEnd(40)} ${perTenantOf(row.all).padStart(7)}  (${perTenantOf(row.writes)} writes)`);
  console.log(
    `\n${TENANTS} tenants waiting for their control planes, ${WAIT_WINDOW_S} s from ${((waitStart - burstStart) / 1000).toFixed(0)} s after the apply`,
  );
  const rate = (n: number) => (n / WAIT_WINDOW_S).toFixed(2);
  console.log(
    `  host API requests/s, every component: ${rate(waitRequests.length)} (${rate(waitRequests.filter(isWrite).length)} writes)`,
  );
  console.log(
    `  of which tenantplane's services:      ${rate(waitRequests.filter(tp).length)} (${rate(waitRequests.filter(tp).filter(isWrite).length)} writes)`,
  );
  for (const [agent, row] of byAgent(waitRequests))
    console.log(`    ${agent.padEnd(40)} ${rate(row.all).padStart(7)}/s  (${rate(row.writes)} writes/s)`);
  // Every component's, so what the API server still serves while tenants wait is named.
  console.log(`  by request, every component:`);
  for (const [what, n] of requestCounts(waitRequests).slice(0, 12))
    console.log(`    ${what.padEnd(58)} ${rate(n).padStart(7)}/s`);
  console.log(`\nPeak resident memory (VmHWM)`);
  console.log(`  provisioner ${peak("provisioner").toFixed(1)} MiB   isolation ${peak("isolation").toFixed(1)} MiB`);
  console.log(
    `  resident memory per tenant (growth from before the burst to the end of waiting / ${TENANTS}): provisioner ${grown("provisioner").toFixed(0)} KiB, isolation ${grown("isolation").toFixed(0)} KiB`,
  );
  console.log(`\nreproduce: ${command}`);
} finally {
  await fleet.stop();
  await nats.stop();
  await host.stop();
}

/**
 * The plain script's run on a quiet machine: TENANTS namespaces named `<prefix><i>` with copies
 * of the calibration tenant's objects, ten tenants at a time, timed, with the CPU each process
 * used and the requests the API server logged; the namespaces are deleted afterwards.
 */
async function baseline(prefix: string, namespaceTemplate: Obj, template: Obj[]) {
  // Every window starts on a quiet machine: the cluster's start-up work is not the baseline's.
  const settled = await settle();
  const start = Date.now();
  const cpuFrom = cpuSnapshot();
  const machineFrom = machineTicks();
  const times: number[] = [];
  // The observer's once-a-second LISTs load the API server in the burst; they run here too.
  const observing = observeBaseline();
  await pool(
    tenantIndexes().map((i) => async () => {
      const started = performance.now();
      await createLike(`${prefix}${i}`, namespaceTemplate, template);
      times.push((performance.now() - started) / 1000);
    }),
    RAW_CONCURRENCY,
  );
  const scriptSeconds = (Date.now() - start) / 1000;
  const cpu = formatCpu(cpuBetween(cpuFrom, cpuSnapshot()));
  const machine = formatMachine(machineFrom, machineTicks());
  await observing.stop();
  const requests = readAudit(host.auditLogPath!, start).filter((r) => r.receivedMs <= start + scriptSeconds * 1000);
  const created = lastCreates(requests, prefix, RAW_AGENT.split("/")[0]!);
  const seconds = created.size === TENANTS ? (Math.max(...created.values()) - start) / 1000 : scriptSeconds;
  // The namespaces go before the next window, so their pods and claims do not load it.
  await pool(
    tenantIndexes().map((i) => () => api.request("DELETE", `/api/v1/namespaces/${prefix}${i}`)),
    RAW_CONCURRENCY,
  );
  await namespacesGone(prefix, "the baseline's namespaces to be deleted");
  return { seconds, scriptSeconds, times, cpu, machine, requests, settled };
}

async function namespacesGone(prefix: string, description: string): Promise<void> {
  await waitFor(
    async () =>
      (await api.request<{ items: Obj[] }>("GET", "/api/v1/namespaces")).items.every(
        (n) => !n.metadata.name.startsWith(prefix),
      ),
    { timeoutMs: 900_000, intervalMs: 2_000, description },
  );
}

async function applyTenant(name: string): Promise<void> {
  await api.request("PATCH", `/apis/tenantplane.io/v1alpha1/tenantclusters/${name}`, {
    query: { fieldManager: "bench", force: true },
    contentType: "application/apply-patch+yaml",
    body: {
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name },
      // No load balancer: a tenant waiting for one gets no StatefulSet until its address is
      // known, and this bench times every host object. Under kwok the control-plane pod turns
      // Ready but never answers, so the tenants then wait on the authenticated probe.
      spec: { controlPlane: { storage: { size: "1Gi" } } },
    },
  });
}

async function hostObjects(namespace: string): Promise<Obj[]> {
  const out: Obj[] = [];
  for (const k of KINDS) {
    const list = await api.request<{ items: Obj[] }>(
      "GET",
      `${k.apiVersion.includes("/") ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`}/namespaces/${namespace}/${k.plural}`,
      { query: { labelSelector: MANAGED } },
    );
    out.push(...list.items.map((o) => ({ ...o, apiVersion: k.apiVersion, kind: k.kind })));
  }
  return out;
}

/**
 * The burst's observer (objectCounts once a second) run against the baseline's namespaces,
 * whose objects carry the renamed managed-by label: the same LISTs over as many objects.
 */
function observeBaseline(): { stop: () => Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await objectCounts(COPY_MANAGED);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

// Objects per namespace carrying `selector`, the namespace itself included: one cluster-wide LIST per kind.
async function objectCounts(selector = MANAGED): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const namespaces = await api.request<{ items: Obj[] }>("GET", "/api/v1/namespaces", {
    query: { labelSelector: selector },
  });
  for (const n of namespaces.items) counts.set(n.metadata.name, 1);
  for (const k of KINDS) {
    const list = await api.request<{ items: Obj[] }>(
      "GET",
      `${k.apiVersion.includes("/") ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`}/${k.plural}`,
      { query: { labelSelector: selector } },
    );
    for (const o of list.items) {
      const ns = String(o.metadata.namespace);
      if (counts.has(ns)) counts.set(ns, counts.get(ns)! + 1);
    }
  }
  return counts;
}

// Isolation objects first, the StatefulSet last, as tenantplane orders them.
async function createLike(namespace: string, ns: Obj, objects: Obj[]): Promise<void> {
  await raw.request("POST", "/api/v1/namespaces", {
    body: neutral({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: ns.metadata.labels } }),
  });
  for (const k of KINDS) {
    for (const o of objects.filter((x) => x.kind === k.kind)) {
      await raw.request(
        "POST",
        `${k.apiVersion.includes("/") ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`}/namespaces/${namespace}/${k.plural}`,
        { body: neutral(copyInto(o, namespace)) },
      );
    }
  }
}

/**
 * The copy with tenantplane's label and annotation keys renamed (same sizes, same selectors):
 * carrying them, the baseline's objects and their pods would look like the calibration
 * tenant's and wake tenantplane's services for every one of them, loading the API server and
 * the CPU during the baseline (about 10 s of service CPU in one run).
 */
function neutral(o: Obj): Obj {
  return JSON.parse(
    JSON.stringify(o)
      .replaceAll('"tenantplane.io/', '"copy.bench.test/')
      .replaceAll('"app.kubernetes.io/managed-by":"tenantplane"', '"app.kubernetes.io/managed-by":"bench-copy1"'),
  ) as Obj;
}

function copyInto(o: Obj, namespace: string): Obj {
  const { name, labels, annotations } = o.metadata as { name: string; labels?: unknown; annotations?: unknown };
  const copy: Obj = { ...o, metadata: { name, namespace, labels, annotations } };
  delete copy.status;
  if (o.kind === "Service") {
    const spec = { ...(o.spec as Record<string, unknown>) };
    delete spec.clusterIP;
    delete spec.clusterIPs;
    // Node ports are allocated cluster-wide: a copy asks for fresh ones.
    delete spec.healthCheckNodePort;
    if (Array.isArray(spec.ports)) {
      spec.ports = (spec.ports as Record<string, unknown>[]).map(({ nodePort: _nodePort, ...port }) => port);
    }
    copy.spec = spec;
  }
  return copy;
}

/**
 * When the last object of each namespace named `<prefix>...` was created, as the API server
 * recorded the response (the audit log's stage time): both runs are timed by it. The
 * once-a-second observer that checks every object exists sees the end of a run up to two
 * seconds late on a busy API server (its nine LISTs take a second more), and the script's own
 * clock has no such lag, so timing one run by each would charge tenantplane the observer's lag.
 * Only `agent`'s creates count: the controllers' own objects (each namespace's
 * kube-root-ca.crt ConfigMap) are not what either run is timed on. A create by server-side apply
 * (a patch answered 201) counts too.
 */
function lastCreates(requests: AuditRequest[], prefix: string, agent: string): Map<string, number> {
  const plurals = new Set<string>(KINDS.map((k) => k.plural));
  const last = new Map<string, number>();
  for (const r of requests) {
    if (r.code !== 201 || r.dryRun || !plurals.has(r.resource) || !r.namespace.startsWith(prefix)) continue;
    if (!agentOf(r).startsWith(agent)) continue;
    if (r.verb !== "create" && r.verb !== "patch") continue;
    last.set(r.namespace, Math.max(last.get(r.namespace) ?? 0, r.completedMs));
  }
  return last;
}

// Requests per service, verb and resource, most first.
function requestCounts(requests: AuditRequest[]): [string, number][] {
  return [...byRequest(requests)]
    .map(([what, times]) => [what, times.length] as [string, number])
    .sort((a, b) => b[1] - a[1]);
}

// When each kind of request was made, in seconds after `start`: the first, the median and the
// last, ordered by median. Shows which step of provisioning the burst waits for.
function timeline(requests: AuditRequest[], start: number): string[] {
  return [...byRequest(requests)]
    .map(([what, times]) => {
      const s = times.map((t) => (t - start) / 1000);
      return { what, first: Math.min(...s), p50: pct(s, 50), last: Math.max(...s), n: s.length };
    })
    .sort((a, b) => a.p50 - b.p50)
    .map(
      (r) =>
        `${r.what.padEnd(58)} ${r.first.toFixed(1).padStart(6)} ${r.p50.toFixed(1).padStart(6)} ${r.last.toFixed(1).padStart(6)}   (${r.n})`,
    );
}

type Outcomes = Map<string, number>;

// Reconcile passes so far, by service and outcome, from each service's tenantplane_messages_total.
async function passCounts(): Promise<Map<string, Outcomes>> {
  const counts = new Map<string, Outcomes>();
  for (const name of ["provisioner", "isolation"] as const) {
    const { body } = await services[name]!.probe("/metrics");
    const outcomes: Outcomes = new Map();
    for (const line of body.split("\n")) {
      const m = /^tenantplane_messages_total\{(.*)\} (\S+)$/.exec(line);
      const outcome = m && /outcome="([^"]+)"/.exec(m[1]!)?.[1];
      if (outcome) outcomes.set(outcome, Number(m[2]));
    }
    counts.set(name, outcomes);
  }
  return counts;
}

function passesSince(from: Map<string, Outcomes>, to: Map<string, Outcomes>): Map<string, Outcomes> {
  return new Map(
    [...to].map(([service, outcomes]) => [
      service,
      new Map([...outcomes].map(([outcome, n]) => [outcome, n - (from.get(service)?.get(outcome) ?? 0)])),
    ]),
  );
}

function formatOutcomes(outcomes: Outcomes): string {
  const total = [...outcomes.values()].reduce((a, b) => a + b, 0);
  const parts = [...outcomes]
    .filter(([, n]) => n > 0)
    .map(([outcome, n]) => `${outcome} ${perTenantOf(n)}`)
    .join(", ");
  return `${perTenantOf(total)} (${parts})`;
}

function perTenantOf(n: number): string {
  return (n / TENANTS).toFixed(1);
}

function tenantIndexes(): number[] {
  return Array.from({ length: TENANTS }, (_, i) => i);
}

function rss(name: "provisioner" | "isolation"): number {
  return procStatusMib(services[name]!.process.pid, "VmRSS");
}

// How many tenants had all their objects after 1 s, 2 s, ...: shows whether the burst is one
// slow pipeline stage (a late start, then a steady rate) or a long tail of a few tenants.
function doneBySecond(seconds: number[]): string {
  const last = Math.ceil(Math.max(...seconds));
  return Array.from({ length: last }, (_, i) => seconds.filter((s) => s <= i + 1).length).join(" ");
}

function fmt(seconds: number): string {
  return `${seconds.toFixed(1)}s`;
}
