// Workloads inside tenants against the same workloads on the host, on the real test stack:
// TENANTS tenants (built-in profile and SyncPolicy, each API stand-in with its own
// controller-manager) each apply a small three-tier app at once (3 Deployments of 2 Pods and
// 3 Services: test/suites/fixtures/workloads/three-tier.yaml), against the same manifests
// applied at once straight into as many host namespaces earlier in the same run. Both runs are
// timed by the benchmark's own watches on the Pods (the tenants' Pods in the tenant APIs, the
// baseline's in the host API), from the apply of a Deployment to the first time each of its
// Pods is seen Running:
//   whole      first apply -> every Pod Running, tenants / host (target <= 1.1x);
//   added      per workload (one Deployment of one tenant), apply -> its Pods Running in the
//              tenant, minus the same for the same Deployment in the matching host namespace
//              (targets: p50 <= 150 ms, p99 <= 500 ms);
//   stages     where each tenant Pod's time goes: the tenant's controllers (Deployment apply ->
//              Pod), sync (tenant Pod -> host copy; split where the worker planned the copy,
//              from the Decision record the copy carries), the host (copy -> copy Running) and
//              back-sync (copy Running -> tenant Pod Running), and CPU per component in each run;
//   profile    the sync worker's busiest functions in the tenant run, by self and by inclusive
//              time (a V8 CPU profile taken inside the worker: bench/worker-profile.ts).
//
//   npm run build && npm run bench:workloads          (TENANTS=10 by default)
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import type { KubernetesObject } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import {
  JsonClient,
  kubeConfigFromString,
  Objects,
  resourcePath,
  startListWatch,
  type ListWatch,
  type RawObject,
} from "@tenantplane/kube";
import { ANNOTATION_DECISION, ANNOTATION_VIRTUAL_NAME } from "@tenantplane/mapping";
import { createLogger } from "@tenantplane/runtime";
import YAML from "yaml";
import {
  ServiceFleet,
  buildTools,
  installCrds,
  provisionTenant,
  readAudit,
  startHostCluster,
  startNats,
  tenantKubeconfig,
  waitFor,
  waitForSynced,
  type RunningService,
  type TenantApiServer,
} from "../test/harness/index.js";
import { byAgent, formatAgents } from "./audit-summary.js";
import { formatSelfTimes, longestTasks, selfTimes, totalTimes } from "./cpu-profile.js";
import { cpuBetween, cpuSnapshot, formatCpu, formatSettled, restingBusy, settle } from "./cpu-usage.js";
import { ms, pct, pool } from "./stats.js";
import { ProfileWindows } from "./worker-profile.js";

const T = Number(process.env.TENANTS ?? 10);
const ADDRESS_BASE = Number(process.env.ADDRESS_BASE ?? 190);
// The worker runs with its defaults (the chart's); these settings, when given, are passed to it
// (and named in the command).
const workerSettings = Object.fromEntries(
  ["SYNC_CONCURRENCY", "TENANT_CONCURRENCY", "LEASE_TTL_SECONDS"].flatMap((k) =>
    process.env[k] ? [[k, process.env[k]]] : [],
  ),
) as Record<string, string>;
const command = `npm run build && ${T === 10 ? "" : `TENANTS=${T} `}${ADDRESS_BASE === 190 ? "" : `ADDRESS_BASE=${ADDRESS_BASE} `}${Object.entries(
  workerSettings,
)
  .map(([k, v]) => `${k}=${v} `)
  .join("")}npm run bench:workloads`;
if (T < 1 || T > 10 || ADDRESS_BASE < 2 || ADDRESS_BASE + T > 254)
  throw new Error("TENANTS must be 1-10, stand-ins on 127.0.0.ADDRESS_BASE.. (190 by default) within 127.0.0.2-254");
const NS = "shop";
const PART_OF = "three-tier";
const COMPONENT = "app.kubernetes.io/component";
const RUN_TIMEOUT_MS = 3 * 60_000;

type Obj = KubernetesObject & Record<string, unknown>;
/** One side of the comparison: where its apps go and how its Pods are seen. */
type Side = "host" | "tenant";

const app: Obj[] = YAML.parseAllDocuments(
  readFileSync(new URL("../test/suites/fixtures/workloads/three-tier.yaml", import.meta.url), "utf8"),
)
  .map((doc) => doc.toJSON() as Obj | null)
  .filter((obj): obj is Obj => obj !== null);
const deployments = app.filter((o) => o.kind === "Deployment");
const replicasOf = (name: string) =>
  (deployments.find((d) => d.metadata?.name === name)!["spec"] as { replicas: number }).replicas;
const podsPerApp = deployments.reduce((sum, d) => sum + replicasOf(d.metadata!.name!), 0);

const tenants = Array.from({ length: T }, (_, i) => ({ name: `wl-${i}`, address: `127.0.0.${ADDRESS_BASE + i}` }));
const hostNamespaces = Array.from({ length: T }, (_, i) => `wl-host-${i}`);
// Per side, app i and Deployment d: when its apply was sent, and when each of its Pods was first seen Running.
const applied = new Map<string, number>();
const running = new Map<string, Map<string, number>>();
const key = (side: Side, i: number, deployment: string) => `${side}/${i}/${deployment}`;
// Per tenant Pod (`<tenant index>/<pod name>`): when it was first seen, its host copy first seen, and that copy first Running.
const stages = {
  created: new Map<string, number>(),
  // When the worker decided to create the copy: the Decision record the copy carries (its clock).
  planned: new Map<string, number>(),
  copied: new Map<string, number>(),
  copyRunning: new Map<string, number>(),
};
type Stage = keyof typeof stages | "apply" | "running";
/** The Deployment of each tenant Pod, by `<tenant index>/<pod name>`. */
const podDeployments = new Map<string, string>();

const toolsDir = await buildTools();
// Each tenant's control plane and DNS Pods, and both runs' Pods, at 110 Pods a kwok node.
const host = await startHostCluster({
  name: "bench-workloads",
  toolsDir,
  nodes: Math.ceil((T * (2 + 2 * podsPerApp)) / 100),
  auditLog: true,
});
const nats = await startNats({ toolsDir });
const hostObjects = new Objects(host.kubeConfig, "kubectl");
await installCrds(host.kubeConfig, crdManifests());
await hostObjects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  env: { LOG_LEVEL: "warn", POD_NAMESPACE: "tenantplane-system" },
});
const standIns: TenantApiServer[] = [];
const watches: ListWatch[] = [];
const profiles = new ProfileWindows();
const workerProfile = profiles.env();
const logger = createLogger("bench-workloads", (process.env.BENCH_LOG_LEVEL ?? "silent") as "silent");

try {
  const [, , , , worker] = await Promise.all(
    (["watcher", "provisioner", "isolation", "recorder", "sync-worker"] as const).map((n) =>
      fleet.start(n, n === "sync-worker" ? { PARTITIONS: "32", ...workerSettings, ...workerProfile } : {}),
    ),
  );
  await pool(
    tenants.map((t) => async () => {
      standIns.push(await provisionTenant(host.kubeConfig, t, {}, { toolsDir, auditLog: true }));
    }),
    3,
  );
  for (const t of tenants) await waitForSynced(host.kubeConfig, t.name, 300_000);
  const tenantObjects = await Promise.all(
    tenants.map(
      async (t) => new Objects(kubeConfigFromString(await tenantKubeconfig(host.kubeConfig, t.name)), "kubectl"),
    ),
  );
  const tenantClients = await Promise.all(
    tenants.map(async (t) => new JsonClient(kubeConfigFromString(await tenantKubeconfig(host.kubeConfig, t.name)))),
  );
  await Promise.all([
    ...tenantObjects.map((api) => createNamespace(api, NS)),
    ...hostNamespaces.map((ns) => createNamespace(hostObjects, ns)),
  ]);

  const hostClient = new JsonClient(host.kubeConfig);
  watches.push(
    ...hostNamespaces.map((ns, i) =>
      watchPods(hostClient, resourcePath("v1", "pods", ns), (pod, now) => seenRunning("host", i, pod, now)),
    ),
    // Each tenant Pod's host copy, by the tenant Pod it copies.
    ...tenants.map((t, i) =>
      watchPods(hostClient, resourcePath("v1", "pods", `tp-${t.name}`), (pod, now) => {
        const source = pod.metadata.annotations?.[ANNOTATION_VIRTUAL_NAME];
        if (source === undefined) return;
        first(stages.copied, `${i}/${source}`, now);
        const record = pod.metadata.annotations?.[ANNOTATION_DECISION];
        const planned = record === undefined ? NaN : Date.parse((JSON.parse(record) as { time: string }).time);
        if (Number.isFinite(planned)) first(stages.planned, `${i}/${source}`, planned - performance.timeOrigin);
        if (isRunning(pod)) first(stages.copyRunning, `${i}/${source}`, now);
      }),
    ),
    ...tenantClients.map((client, i) =>
      watchPods(client, resourcePath("v1", "pods", NS), (pod, now) => {
        first(stages.created, `${i}/${pod.metadata.name}`, now);
        const deployment = pod.metadata.labels?.[COMPONENT];
        if (deployment !== undefined) podDeployments.set(`${i}/${pod.metadata.name}`, deployment);
        seenRunning("tenant", i, pod, now);
      }),
    ),
  );
  await Promise.all(watches.map((w) => w.synced));

  // Each run starts at the stack's resting level, so neither pays for work that is not its own:
  // the tenant run began while the host controllers still wrote the host run's EndpointSlices,
  // ReplicaSet and Deployment status.
  const resting = await restingBusy();
  const beforeHost = await settle({ maxBusyCores: resting + 0.2, timeoutMs: 120_000 });
  const hostCpu = cpuSnapshot();
  const hostFrom = Date.now();
  const hostWall = await runApps(
    "host",
    hostNamespaces.map((ns) => ({ api: hostObjects, namespace: ns })),
  );
  const hostCpuEnd = cpuSnapshot();
  // Started before the tenant run's wait for rest: starting V8's profiler records every function
  // the worker has compiled, a pause of a few hundred ms that would otherwise fall on the first
  // tenant Pods. The profiler's sampling stays on in the run (a few per cent of the worker's CPU).
  profiles.start(worker!.process.pid);
  const beforeTenant = await settle({ maxBusyCores: resting + 0.2, timeoutMs: 180_000 });
  const tenantCpu = cpuSnapshot();
  const metricsBefore = await workerMetrics(worker!);
  const tenantFrom = Date.now();
  const tenantWall = await runApps(
    "tenant",
    tenantObjects.map((api) => ({ api, namespace: NS })),
  );
  const endCpu = cpuSnapshot();
  const tenantTo = Date.now();
  const profile = await profiles.stop(worker!.process.pid, workerProfile);
  const metricsAfter = await workerMetrics(worker!);
  const meanOf = (name: string, stage?: string) => {
    const at = (suffix: string, m: Map<string, number>) => m.get(`${name}${suffix}${stage ? `:${stage}` : ""}`) ?? 0;
    const n = at("_count", metricsAfter) - at("_count", metricsBefore);
    const sum = at("_sum", metricsAfter) - at("_sum", metricsBefore);
    return `mean ${n > 0 ? ms((sum / n) * 1000) : "-"} over ${n}`;
  };

  const perWorkload = (side: Side) =>
    tenants.flatMap((_, i) =>
      deployments.map((d) => {
        const name = d.metadata!.name!;
        return readyAt(side, i, name) - applied.get(key(side, i, name))!;
      }),
    );
  const hostTimes = perWorkload("host");
  const tenantTimes = perWorkload("tenant");
  const added = tenantTimes.map((t, k) => t - hostTimes[k]!);
  const ratio = tenantWall / hostWall;
  const row = (what: string, v: number[]) =>
    `${what.padEnd(48)} ${ms(pct(v, 50)).padStart(9)} ${ms(pct(v, 99)).padStart(9)} ${ms(Math.max(...v)).padStart(9)}   n=${v.length}`;
  console.log(
    `\nworkloads: ${T} tenants x ${deployments.length} Deployments (${podsPerApp} Pods) and ${app.length - deployments.length} Services, against ${T} host namespaces; one sync worker`,
  );
  console.log(
    `every Pod Running: host ${(hostWall / 1000).toFixed(2)} s, tenants ${(tenantWall / 1000).toFixed(2)} s: ${ratio.toFixed(2)}x (target <= 1.1x)`,
  );
  console.log(
    `${"per workload (Deployment)".padEnd(48)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"max".padStart(9)}`,
  );
  console.log(row("host: apply -> its Pods Running", hostTimes));
  console.log(row("tenant: apply -> its Pods Running in the tenant", tenantTimes));
  console.log(row("added by tenantplane (tenant - host)", added));
  console.log(`added p50 ${ms(pct(added, 50))} (target <= 150 ms), p99 ${ms(pct(added, 99))} (target <= 500 ms)`);
  console.log(`\nwhere a tenant Pod's time goes (each of the ${T * podsPerApp} tenant Pods)`);
  console.log(row("tenant controllers: Deployment apply -> Pod", stageTimes("apply", "created")));
  console.log(row("sync: tenant Pod -> host copy", stageTimes("created", "copied")));
  console.log(row("  tenant Pod -> the worker plans its copy", stageTimes("created", "planned")));
  console.log(row("  planned -> host copy seen", stageTimes("planned", "copied")));
  console.log(row("host: copy -> copy Running", stageTimes("copied", "copyRunning")));
  console.log(row("back-sync: copy Running -> tenant Pod Running", stageTimes("copyRunning", "running")));
  // How long the host API server took to create each Pod: the ReplicaSet controller's in the
  // host run, the sync worker's copies in the tenant run (admission, quota, storage).
  // Creates of Pods, not of their bindings (the host scheduler's, the same resource).
  const audit = readAudit(host.auditLogPath!, hostFrom).filter(
    (r) => r.verb === "create" && r.resource === "pods" && !r.uri.includes("/binding"),
  );
  const createMs = (namespacePrefix: string) =>
    audit.filter((r) => r.namespace.startsWith(namespacePrefix)).map((r) => r.completedMs - r.receivedMs);
  console.log(row("host API Pod create, host run (ReplicaSet controller)", createMs("wl-host-")));
  console.log(row("host API Pod create, tenant run (sync worker)", createMs("tp-wl-")));
  // A create answered 409 repeats one whose answer the worker gave up on (its deadline passed).
  const answers = new Map<number, number>();
  for (const r of audit.filter((r) => r.namespace.startsWith("tp-wl-")))
    answers.set(r.code, (answers.get(r.code) ?? 0) + 1);
  console.log(
    `  the worker's host Pod creates by answer: ${[...answers].map(([code, n]) => `${code} x${n}`).join(", ")}`,
  );
  console.log(`tenant API requests in the tenant run, all ${T} tenants, by client (${podsPerApp * T} Pods):`);
  const tenantRequests = standIns.flatMap((s) =>
    readAudit(s.auditLogPath!, tenantFrom).filter((r) => r.receivedMs <= tenantTo),
  );
  for (const line of formatAgents(byAgent(tenantRequests), 6)) console.log(`  ${line}`);
  console.log(
    `sync worker, every key of the tenant run: queued -> taken ${meanOf("tenantplane_sync_queue_wait_seconds")}; queued -> host write ${meanOf("tenantplane_sync_latency_seconds")}`,
  );
  const writeStages = ["plan", "tenant_budget", "host_budget", "request"];
  console.log(
    `  event loop delay in the run: p99 ${ms(1000 * (metricsAfter.get("tenantplane_sync_event_loop_delay_seconds:0.99") ?? NaN))}, max ${ms(1000 * (metricsAfter.get("tenantplane_sync_event_loop_delay_seconds:1") ?? NaN))}; its writes: ${writeStages.map((st) => `${st} ${meanOf("tenantplane_sync_write_stage_seconds", st)}`).join("; ")}`,
  );
  console.log(
    `each run began at the stack's resting level (${resting.toFixed(2)} cores busy + 0.2): host ${formatSettled(beforeHost)}, tenant ${formatSettled(beforeTenant)}`,
  );
  console.log(`CPU during the host run: ${formatCpu(cpuBetween(hostCpu, hostCpuEnd))}`);
  console.log(`CPU during the tenant run: ${formatCpu(cpuBetween(tenantCpu, endCpu))}`);
  const self = selfTimes(profile, 12);
  console.log(`\nsync worker CPU profile of the tenant run (${(self.busyMs / 1000).toFixed(2)}s busy), by self time:`);
  for (const line of formatSelfTimes(self)) console.log(line);
  console.log("  longest stretches without an idle sample (what held the event loop):");
  for (const task of longestTasks(profile, 3)) {
    console.log(`    ${task.ms.toFixed(0)} ms, busiest:`);
    for (const line of formatSelfTimes({ busyMs: task.ms, rows: task.rows }, "      ")) console.log(line);
  }
  console.log("  by inclusive time:");
  for (const line of formatSelfTimes(totalTimes(profile, 25))) console.log(line);
  console.log(`reproduce: ${command}`);
} finally {
  for (const w of watches) w.stop();
  // AUDIT_OUT=<dir> keeps the audit logs for a closer look: host.log, and wl-<i>.log per stand-in in the order they started.
  if (process.env.AUDIT_OUT) {
    mkdirSync(process.env.AUDIT_OUT, { recursive: true });
    if (host.auditLogPath) copyFileSync(host.auditLogPath, `${process.env.AUDIT_OUT}/host.log`);
    standIns.forEach((s, i) => s.auditLogPath && copyFileSync(s.auditLogPath, `${process.env.AUDIT_OUT}/wl-${i}.log`));
  }
  await fleet.stop();
  for (const s of standIns) await s.stop();
  await nats.stop();
  await host.stop();
  profiles.remove();
}

/** The worker's metrics (histogram sums and counts) by name, and `name:<label>` for those with a stage or quantile label. */
async function workerMetrics(w: RunningService): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await w.probe("/metrics")).body.split("\n")) {
    const m = /^(tenantplane_sync_[a-z_]+)(?:\{([^}]*)\})? ([0-9.e+-]+)$/.exec(line);
    const stage = /(?:stage|quantile)="([a-z_0-9.]+)"/.exec(m?.[2] ?? "")?.[1];
    if (m) out.set(stage === undefined ? m[1]! : `${m[1]}:${stage}`, Number(m[3]));
  }
  return out;
}

/** Creates a namespace and waits for its default ServiceAccount, which the Pods of a Deployment need. */
async function createNamespace(api: Objects, name: string): Promise<void> {
  await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  await waitFor(() => api.get("v1", "ServiceAccount", "default", name), {
    timeoutMs: 60_000,
    description: `ServiceAccount ${name}/default`,
  });
}

/** Calls `onPod` with each change of a Pod of the app (deletions aside) and when the watch saw it. */
function watchPods(client: JsonClient, path: string, onPod: (pod: RawObject, now: number) => void): ListWatch {
  return startListWatch({
    client,
    path,
    apiVersion: "v1",
    kind: "Pod",
    labelSelector: `app.kubernetes.io/part-of=${PART_OF}`,
    logger,
    onEvent: (e) => {
      if (e.type !== "delete") onPod(e.object, performance.now());
    },
  });
}

// A declaration, not a const: the watches call it during the top-level awaits above.
function isRunning(pod: RawObject): boolean {
  return (pod["status"] as { phase?: string } | undefined)?.phase === "Running";
}

function first(times: Map<string, number>, name: string, now: number): void {
  if (!times.has(name)) times.set(name, now);
}

/** Records the first time a Pod of app `i`'s Deployments is seen Running. */
function seenRunning(side: Side, i: number, pod: RawObject, now: number): void {
  const deployment = pod.metadata.labels?.[COMPONENT];
  if (deployment === undefined || !isRunning(pod)) return;
  const pods = running.get(key(side, i, deployment)) ?? new Map<string, number>();
  first(pods, pod.metadata.name, now);
  running.set(key(side, i, deployment), pods);
}

/**
 * Milliseconds between two moments of each tenant Pod: `apply` (of its Deployment), `created`
 * (first seen in the tenant), `copied` (its host copy first seen), `copyRunning`, `running` (in the tenant).
 */
function stageTimes(from: Stage, to: Stage): number[] {
  const at = (stage: Stage, tenant: number, pod: string, deployment: string): number | undefined => {
    if (stage === "apply") return applied.get(key("tenant", tenant, deployment));
    if (stage === "running") return running.get(key("tenant", tenant, deployment))?.get(pod);
    return stages[stage].get(`${tenant}/${pod}`);
  };
  const out: number[] = [];
  for (const [id, deployment] of podDeployments) {
    const [tenant, pod] = [Number(id.slice(0, id.indexOf("/"))), id.slice(id.indexOf("/") + 1)];
    const start = at(from, tenant, pod, deployment);
    const end = at(to, tenant, pod, deployment);
    if (start !== undefined && end !== undefined) out.push(end - start);
  }
  return out;
}

/**
 * Applies the app into every target at once, each target's objects in manifest order as
 * `kubectl apply -f` sends them, and waits until every Deployment has its replicas Running.
 * Returns the milliseconds from the first apply to the last Pod Running.
 */
async function runApps(side: Side, targets: { api: Objects; namespace: string }[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    targets.map(async ({ api, namespace }, i) => {
      for (const obj of app) {
        if (obj.kind === "Deployment") applied.set(key(side, i, obj.metadata!.name!), performance.now());
        await api.apply({ ...obj, metadata: { ...obj.metadata, namespace } });
      }
    }),
  );
  const done = () =>
    targets.every((_, i) =>
      deployments.every(
        (d) => (running.get(key(side, i, d.metadata!.name!))?.size ?? 0) >= replicasOf(d.metadata!.name!),
      ),
    );
  await waitFor(() => done() || undefined, {
    timeoutMs: RUN_TIMEOUT_MS,
    intervalMs: 50,
    description: `every ${side} Pod Running`,
  }).catch(async (err: unknown) => {
    // Say what the API holds against what the watches saw, so a stuck run names its Pods.
    const lines = await Promise.all(
      targets.map(async ({ api, namespace }, i) => {
        const pods = await api.list<Obj>("v1", "Pod", { namespace });
        const phases = pods.map((p) => `${p.metadata?.name}=${(p["status"] as { phase?: string })?.phase}`);
        const seen = deployments.map(
          (d) => `${d.metadata!.name}:${running.get(key(side, i, d.metadata!.name!))?.size ?? 0}`,
        );
        return `${namespace}: API ${phases.join(" ")}; watched Running ${seen.join(" ")}`;
      }),
    );
    throw new Error(`${String(err)}\n${lines.join("\n")}`);
  });
  const last = Math.max(...targets.flatMap((_, i) => deployments.map((d) => readyAt(side, i, d.metadata!.name!))));
  return last - started;
}

/** When the Deployment first had as many Pods Running as it asks for (a replaced Pod's successor does not count). */
function readyAt(side: Side, i: number, deployment: string): number {
  const times = [...(running.get(key(side, i, deployment))?.values() ?? [])].sort((a, b) => a - b);
  return times[replicasOf(deployment) - 1] ?? NaN;
}
