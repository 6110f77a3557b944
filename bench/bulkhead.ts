// One tenant cannot hurt another (issue 27, bulkheads), measured on the real test stack with one
// sync worker at the chart's settings:
//   baseline   two small tenants keep creating ConfigMaps (20/s between them): tenant create ->
//              host copy seen, p50/p99;
//   big        the same, while a third tenant fills its API with BIG_MIB MiB of ~1 MB ConfigMaps
//              and the worker lists, judges and passes over them (several full passes);
//   control   the bench's own small ConfigMap creates on the host, 4 a second, timed (hostProbe):
//              how fast the host API server answers anyone in each phase, apart from the worker;
//              beside it where the worker's host writes spent their time (all tenants' writes:
//              planning, its budgets, the host's answer), from its write-stage histograms;
//   and throughout: the worker's resident memory (peak, VmHWM) against the chart's memory limit,
//   its event-loop delay (tenantplane_sync_event_loop_delay_seconds, scraped each second) beside
//   the scheduler's account of its main thread (on a core, or waiting for one), and whether it
//   ever exited (restarts must be 0); the big phase's p99 also split into while-filling and after;
//   profile    a V8 CPU profile of the worker over the big phase (bench/worker-profile.ts): its
//              busiest functions and the longest stretches it held the event loop, with what
//              ran in them (PROFILE_OUT=<file> keeps the .cpuprofile for DevTools).
//
//   npm run build && npm run bench:bulkhead          (BIG_MIB=1024 SAMPLES=200 by default;
//                                                      stand-ins on 127.0.0.201-203)
//   WORKER_NICE=-10 / BIG_NICE=10   the worker, or the big tenant's etcd, API server and
//              controller-manager, at that nice value (and scheduling group): a cluster's CPU
//              request for the worker, a CPU limit on the big tenant's k3s Pod
//   WRITE_BYTES=<bytes>   the worker's per-tenant byte budget for host writes (its default otherwise)
//   WRITE_QPS=<rate>   the worker's per-tenant request budget for host writes (TENANT_WRITE_QPS; burst twice it)
//   BIG_SYNCED=0   the control run: the big tenant's SyncPolicy leaves ConfigMaps out, so the worker
//              never reads them; what is left of the small tenants' tail is the fill itself (the big
//              tenant's API server, etcd and client on the same cores), not the worker
//   CPU_GROUPS=1   each tenant's stand-in and the worker in a CPU group as a kubelet would run
//              their Pods (bench/cpu-groups.ts): the weight of its CPU request and the quota of its
//              limit, the tenants' from their host k3s Pods as the API server admitted them, the
//              worker's from the chart (WORKER_CPU=500m: the worker's request instead)
//   npm run build && BIG=dns npm run bench:bulkhead  the big tenant makes DNS_SERVICES headless
//              Services (1000) and DNS_PODS Pods (10000) named by hostname and subdomain, spread
//              over the Services, instead: its tenant DNS records and service links are computed
//              over Services x Pods on every change (host kwok nodes for the Pods)
import { fork } from "node:child_process";
import { copyFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { crdManifests, SYNC_KINDS } from "@tenantplane/api";
import { JsonClient, resourcePath, startListWatch, type ListWatch } from "@tenantplane/kube";
import { byAgent, formatAgents } from "./audit-summary.js";
import type { FillJob } from "./bulkhead-fill.js";
import { PodCpuGroups, milliOf } from "./cpu-groups.js";
import YAML from "yaml";
import {
  ServiceFleet,
  buildTools,
  installCrds,
  provisionTenant,
  readAudit,
  startHostCluster,
  startNats,
  syncedState,
  tenantJsonClient,
  waitFor,
  waitForSynced,
  waitForTenantServiceAccount,
  type RunningService,
  type TenantApiServer,
} from "../test/harness/index.js";
import { ms, pct } from "./stats.js";
import { cpuBetween, cpuOfPids, cpuSnapshot, formatCpu, type CpuSnapshot } from "./cpu-usage.js";
import { mainThreadSched, pidsWithArgument, procStatusMib, reniceProcess, type ThreadSched } from "./proc-status.js";
import { createLogger } from "@tenantplane/runtime";
import { formatSelfTimes, longestTasks, selfTimes, totalTimes } from "./cpu-profile.js";
import { ProfileWindows } from "./worker-profile.js";
import { formatHistogram, histogramsBetween, readHistograms, type Histogram } from "./histograms.js";

const BIG_KIND = process.env.BIG ?? "configmaps";
const BIG_MIB = Number(process.env.BIG_MIB ?? 1024);
const DNS_SERVICES = Number(process.env.DNS_SERVICES ?? 1000);
const DNS_PODS = Number(process.env.DNS_PODS ?? 10_000);
const SAMPLES = Number(process.env.SAMPLES ?? 200);
/** Each big ConfigMap's data: just under the API server's 1 MiB limit for a ConfigMap's data. */
const OBJECT_BYTES = 1_000_000;
const RESYNC_SECONDS = 20;
/** The bench's own host writes, apart from the worker's (hostProbe). */
const PROBE_NAMESPACE = "bench-probe";
const PROBE_EVERY_MS = 250;
const BIG = { name: "bulk-big", address: "127.0.0.201" };
/** The big tenant's IsolationProfile in the DNS case (applyDnsProfile). */
const DNS_PROFILE = "bulkhead-dns";
const SMALL = [
  { name: "bulk-a", address: "127.0.0.202" },
  { name: "bulk-b", address: "127.0.0.203" },
];
if (!(BIG_MIB > 0 && BIG_MIB <= 1536) || !(SAMPLES >= 20)) throw new Error("BIG_MIB must be 1-1536, SAMPLES >= 20");
if (BIG_KIND !== "configmaps" && BIG_KIND !== "dns") throw new Error("BIG must be configmaps (the default) or dns");
if (!(DNS_SERVICES >= 1 && DNS_PODS >= DNS_SERVICES && DNS_PODS <= 20_000))
  throw new Error("DNS_SERVICES must be at least 1 and DNS_PODS between DNS_SERVICES and 20000");
const DNS = BIG_KIND === "dns";
// The worker's nice value: on a shared machine every process has the same weight, where a
// cluster gives the worker's container its CPU request's share (cgroup cpu.weight).
const WORKER_NICE = niceOf("WORKER_NICE");
// The big tenant's control plane (its stand-in's etcd, API server and controller-manager): in a
// cluster its k3s Pod is held to its CPU limit, here it competes with everything else as equal.
const BIG_NICE = niceOf("BIG_NICE");
const CPU_GROUPS = process.env.CPU_GROUPS === "1";
// The worker's CPU request in its group (e.g. 500m) instead of the chart's: what the tail is with a
// request that fits the worker's load under a big tenant.
const WORKER_CPU = process.env.WORKER_CPU;
if (WORKER_CPU !== undefined && (!CPU_GROUPS || !(milliOf(WORKER_CPU) > 0)))
  throw new Error("WORKER_CPU (a CPU quantity such as 500m) needs CPU_GROUPS=1");
const BIG_SYNCED = process.env.BIG_SYNCED !== "0";
// The worker's per-tenant byte budget for host writes (TENANT_WRITE_BYTES_PER_SECOND), if not its default.
const WRITE_BYTES = process.env.WRITE_BYTES;
if (WRITE_BYTES !== undefined && !(Number(WRITE_BYTES) > 0))
  throw new Error("WRITE_BYTES must be a number of bytes above 0");
// The worker's per-tenant request budget for host writes (TENANT_WRITE_QPS), if not its default.
const WRITE_QPS = process.env.WRITE_QPS;
if (WRITE_QPS !== undefined && !(Number(WRITE_QPS) > 0)) throw new Error("WRITE_QPS must be a rate above 0");
if (!BIG_SYNCED && DNS) throw new Error("BIG_SYNCED=0 is for the ConfigMap case");
/** The control run's SyncPolicy for the big tenant: every kind the worker syncs but ConfigMaps. */
const UNSYNCED_POLICY = "bulkhead-no-configmaps";
const command =
  "npm run build && " +
  (DNS ? `BIG=dns DNS_SERVICES=${DNS_SERVICES} DNS_PODS=${DNS_PODS}` : `BIG_MIB=${BIG_MIB}`) +
  (process.env.SAMPLES ? ` SAMPLES=${SAMPLES}` : "") +
  (WORKER_NICE !== undefined ? ` WORKER_NICE=${WORKER_NICE}` : "") +
  (BIG_NICE !== undefined ? ` BIG_NICE=${BIG_NICE}` : "") +
  (CPU_GROUPS ? " CPU_GROUPS=1" : "") +
  (WORKER_CPU !== undefined ? ` WORKER_CPU=${WORKER_CPU}` : "") +
  (BIG_SYNCED ? "" : " BIG_SYNCED=0") +
  (WRITE_BYTES !== undefined ? ` WRITE_BYTES=${WRITE_BYTES}` : "") +
  (WRITE_QPS !== undefined ? ` WRITE_QPS=${WRITE_QPS}` : "") +
  " npm run bench:bulkhead";

const chart = YAML.parse(readFileSync(new URL("../charts/tenantplane/values.yaml", import.meta.url), "utf8")) as {
  services: Record<string, { resources: { requests: { cpu: string }; limits: { memory: string; cpu?: string } } }>;
};
const chartLimit = chart.services["sync-worker"]!.resources.limits.memory;
const chartLimitMiB = Number(/^(\d+)Mi$/.exec(chartLimit)?.[1] ?? Number.NaN);

const toolsDir = await buildTools();
// kwok nodes take 110 Pods each: room for the DNS case's Pods.
const host = await startHostCluster({
  name: "bench-bulkhead",
  toolsDir,
  ...(DNS ? { nodes: Math.ceil(DNS_PODS / 100) } : {}),
});
const nats = await startNats({ toolsDir });
const core = host.kubeConfig.makeApiClient(CoreV1Api);
const hostJson = new JsonClient(host.kubeConfig);
await installCrds(host.kubeConfig, crdManifests());
await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  env: { LOG_LEVEL: "warn", POD_NAMESPACE: "tenantplane-system" },
});
const standIns: TenantApiServer[] = [];
const watches: ListWatch[] = [];
const profiles = new ProfileWindows();
// The heap cap the chart derives from the memory limit (3/4 of it). TRACE_GC=1 adds the worker's
// garbage-collector pauses over the big phase to the figures (--trace-gc, which NODE_OPTIONS
// refuses, set from a preloaded module).
const workerProfile = profiles.env(
  `--max-old-space-size=${Math.floor((chartLimitMiB * 3) / 4)}` +
    (process.env.TRACE_GC === "1" ? ` --import ${traceGcPreload()}` : ""),
);
/** When each small tenant's host copy (`<namespace>/<name>`) was first seen. */
const seen = new Map<string, number>();
/** When each small tenant's sample was created, and its latency: to split the fill by what the worker did. */
const timeline: { at: number; ms: number }[] = [];
/** When the bench last saw a new host copy of the big tenant's (the end of what fits its limits). */
let lastBigCopyAt: number | undefined;
let bigCopiesSeen = 0;
let cpuGroups: PodCpuGroups | undefined;

try {
  await Promise.all((["watcher", "provisioner", "isolation", "recorder"] as const).map((n) => fleet.start(n)));
  // The chart's sync-worker env, bar what a test stack needs (short resync: several passes over the big tenant).
  const worker = await fleet.start("sync-worker", {
    RESYNC_INTERVAL_SECONDS: String(RESYNC_SECONDS),
    PARTITIONS: "16",
    LEASE_TTL_SECONDS: "6",
    ...(WRITE_BYTES !== undefined ? { TENANT_WRITE_BYTES_PER_SECOND: WRITE_BYTES } : {}),
    ...(WRITE_QPS !== undefined
      ? { TENANT_WRITE_QPS: WRITE_QPS, TENANT_WRITE_BURST: String(Math.max(1, Math.round(Number(WRITE_QPS) * 2))) }
      : {}),
    ...workerProfile,
  });
  const watchdog = watchWorker(worker);
  if (WORKER_NICE !== undefined) reniceProcess(worker.process.pid, WORKER_NICE);
  // The default profile's quota admits 50 Pods: the DNS case's big tenant gets room for all of its own.
  if (DNS) await applyDnsProfile();
  if (!BIG_SYNCED) await applyUnsyncedPolicy();
  for (const t of [BIG, ...SMALL]) {
    const spec =
      t !== BIG
        ? {}
        : DNS
          ? { isolationProfileRef: { name: DNS_PROFILE } }
          : BIG_SYNCED
            ? {}
            : { syncPolicyRef: { name: UNSYNCED_POLICY } };
    // The big tenant's API server keeps an audit log (Metadata level): who asked it for what in the big phase.
    standIns.push(await provisionTenant(host.kubeConfig, t, spec, { toolsDir, auditLog: t === BIG }));
  }
  let renicedBig = 0;
  if (BIG_NICE !== undefined) {
    const pids = pidsWithArgument(`tenant-${BIG.address}-`);
    for (const pid of pids) reniceProcess(pid, BIG_NICE);
    renicedBig = pids.length;
  }
  const clients = new Map<string, JsonClient>();
  for (const t of [BIG, ...SMALL]) {
    await waitForSynced(host.kubeConfig, t.name, 300_000);
    if (CPU_GROUPS) await placeTenant(t, worker);
    const client = await tenantJsonClient(host.kubeConfig, t.name);
    clients.set(t.name, client);
    await client.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "bench" } },
    });
    await waitForTenantServiceAccount(client, "bench");
  }
  for (const t of SMALL) watches.push(hostWatch(`tp-${t.name}`));
  if (!DNS) watches.push(bigCopiesWatch(`tp-${BIG.name}`));
  await Promise.all(watches.map((w) => w.synced));

  // Baseline: the small tenants alone.
  const loopBase = scrapeLoop(worker);
  const stagesBefore = await writeStages(worker);
  await core.createNamespace({ body: { metadata: { name: PROBE_NAMESPACE } } });
  const probeBase = hostProbe("base");
  const base = await latency(clients, "base", SAMPLES);
  const baseLoop = loopBase.stop();
  const stagesBase = await writeStages(worker);
  const baseProbe = await probeBase.stop();

  // The big tenant fills its API while the small tenants keep syncing.
  const loopBig = scrapeLoop(worker);
  const probeBig = hostProbe("big");
  const workerLog = join(fleet.logsDir, `${worker.name}.log`);
  const gcFrom = statSync(workerLog).size;
  profiles.start(worker.process.pid);
  const count = Math.ceil((BIG_MIB * 1024 * 1024) / OBJECT_BYTES);
  const fillFrom = performance.now();
  const fillFromMs = Date.now();
  const fillCpu = cpuSnapshot();
  let fillCpuEnd: CpuSnapshot | undefined;
  let filled = false;
  const fill = startFill(
    DNS
      ? { kind: "dns", kubeconfigPath: host.kubeconfigPath, tenant: BIG.name, services: DNS_SERVICES, pods: DNS_PODS }
      : { kind: "configmaps", kubeconfigPath: host.kubeconfigPath, tenant: BIG.name, count, objectBytes: OBJECT_BYTES },
  ).then(() => {
    fillCpuEnd = cpuSnapshot();
    filled = true;
  });
  const during: number[] = [];
  // The same samples by phase: while the big tenant writes into its own API (its API server and
  // etcd on the same cores), and afterwards, when only the worker's full passes go over it.
  const whileFilling: number[] = [];
  const afterFill: number[] = [];
  let round = 0;
  // Samples until the fill is done and two full passes have gone over it.
  while (!filled) whileFilling.push(...(await latency(clients, `big${round++}`, 40)));
  const fillSeconds = (performance.now() - fillFrom) / 1000;
  await fill;
  for (let end = performance.now() + RESYNC_SECONDS * 2 * 1000; performance.now() < end; )
    afterFill.push(...(await latency(clients, `big${round++}`, 40)));
  during.push(...whileFilling, ...afterFill);
  const bigLoop = loopBig.stop();
  const stagesBig = await writeStages(worker);
  const bigProbe = await probeBig.stop();
  const profile = await profiles.stop(worker.process.pid, workerProfile);
  if (process.env.PROFILE_OUT) copyFileSync(workerProfile.CPU_PROFILE_PATH, process.env.PROFILE_OUT);
  const state = await syncedState(host.kubeConfig, BIG.name);
  const copies = DNS
    ? await core.listNamespacedPod({ namespace: `tp-${BIG.name}`, labelSelector: "tenantplane.io/kind=Pod" })
    : await core.listNamespacedConfigMap({
        namespace: `tp-${BIG.name}`,
        labelSelector: "tenantplane.io/kind=ConfigMap",
      });
  const records = DNS
    ? await core
        .readNamespacedConfigMap({ namespace: `tp-${BIG.name}`, name: "tenant-dns-records" })
        .catch(() => undefined)
    : undefined;
  const peak = procStatusMib(worker.process.pid, "VmHWM");
  const gc = gcPauses(readFileSync(workerLog).subarray(gcFrom).toString("utf8"));
  const restarts = watchdog.stop();
  const bigRequests = byAgent(readAudit(standIns[0]!.auditLogPath!, fillFromMs));

  const baseP99 = pct(base, 99);
  const bigP99 = pct(during, 99);
  console.log(
    DNS
      ? `\nBulkhead: one tenant with ${DNS_SERVICES} headless Services x ${DNS_PODS} Pods (hostname and subdomain) beside 2 small tenants, one sync worker`
      : `\nBulkhead: one tenant with ${count} ConfigMaps of ${(OBJECT_BYTES / 1e6).toFixed(1)} MB (${BIG_MIB} MiB) beside 2 small tenants, one sync worker`,
  );
  if (WORKER_NICE !== undefined || BIG_NICE !== undefined) {
    console.log(
      `  nice values (with their scheduling groups): the worker ${WORKER_NICE ?? 0}, the big tenant's etcd, API server ` +
        `and controller-manager ${BIG_NICE ?? 0} (${renicedBig} processes), every other process 0`,
    );
  }
  if (cpuGroups) {
    console.log("  CPU groups as the kernel holds them (cpu.shares: 1024 a core of request; quota: the limit):");
    for (const pod of cpuGroups.placed()) {
      const g = cpuGroups.read(pod);
      console.log(
        `    ${pod}: shares ${g.shares}, quota ${g.quotaMilli === undefined ? "none" : `${g.quotaMilli}m`}, ` +
          `throttled in ${g.throttledPeriods} periods for ${(g.throttledMs / 1000).toFixed(1)}s`,
      );
    }
  }
  console.log(`  big tenant filled in ${fillSeconds.toFixed(1)}s; resync every ${RESYNC_SECONDS}s`);
  if (fillCpuEnd) {
    const bigSeconds = cpuOfPids(fillCpu, fillCpuEnd, pidsWithArgument(`tenant-${BIG.address}-`));
    console.log(
      `  CPU while filling: ${formatCpu(cpuBetween(fillCpu, fillCpuEnd))}; the big tenant's stand-in ${bigSeconds.toFixed(2)}s of it` +
        ` ("other node" is the bench and the big tenant's client)`,
    );
  }
  console.log(
    `  small tenants, create -> host copy: baseline p50 ${ms(pct(base, 50))} p99 ${ms(baseP99)} (${base.length} samples);` +
      ` with the big tenant p50 ${ms(pct(during, 50))} p99 ${ms(bigP99)} (${during.length} samples)`,
  );
  console.log(`  p99 ratio with / without the big tenant ${(bigP99 / baseP99).toFixed(2)}x (target <= 2x)`);
  const phase = (xs: number[]) =>
    xs.length > 0
      ? `p50 ${ms(pct(xs, 50))} p99 ${ms(pct(xs, 99))} (${(pct(xs, 99) / baseP99).toFixed(2)}x, ${xs.length} samples)`
      : "no samples";
  console.log(
    `    while the big tenant fills its API ${phase(whileFilling)}; afterwards, over its full passes ${phase(afterFill)}`,
  );
  if (!DNS && lastBigCopyAt !== undefined) {
    // While the worker copies the big tenant's objects that fit (each read, translated, hashed and
    // written whole), and once it only holds back the rest (judged by their metadata, one Skip each).
    const filling = timeline.filter((t) => t.at >= fillFrom && t.at < fillFrom + fillSeconds * 1000);
    const copying = filling.filter((t) => t.at <= lastBigCopyAt!).map((t) => t.ms);
    const holding = filling.filter((t) => t.at > lastBigCopyAt!).map((t) => t.ms);
    console.log(
      `    of the fill: while its ${bigCopiesSeen} copies are made (the first ${((lastBigCopyAt - fillFrom) / 1000).toFixed(1)}s) ` +
        `${phase(copying)}; while the rest is held back ${phase(holding)}`,
    );
  }
  console.log(
    `  worker RSS peak (VmHWM) ${peak.toFixed(0)} MiB against the chart's limit ${chartLimit}` +
      ` (${((peak / chartLimitMiB) * 100).toFixed(0)}%)`,
  );
  console.log(
    `  event-loop delay beyond the 10 ms sampling, per 1 s scrape: baseline p99 max ${ms(baseLoop.p99 * 1000)}, longest ${ms(baseLoop.max * 1000)};` +
      ` with the big tenant p99 max ${ms(bigLoop.p99 * 1000)}, longest ${ms(bigLoop.max * 1000)} (target <= 50 ms)`,
  );
  // The loop's delay counts time the worker's thread waited for a core as if the worker held it.
  const sched = (r: LoopReport) =>
    `on a core ${(r.sched.runMs / 1000).toFixed(1)}s, runnable but waiting for one ${(r.sched.waitMs / 1000).toFixed(1)}s`;
  console.log(
    `  worker main thread (scheduler's account): baseline ${sched(baseLoop)}; with the big tenant ${sched(bigLoop)}`,
  );
  console.log(
    `    the big phase's seconds with the longest delay: ` +
      bigLoop.worst
        .map((s) => `${ms(s.maxMs)} held, in that second ${ms(s.runMs)} on a core and ${ms(s.waitMs)} waiting for one`)
        .join("; "),
  );
  console.log(
    `  big tenant: ${copies.items.length} ${DNS ? "Pods" : "ConfigMaps"} copied to the host, Synced=${state.condition?.status} ${state.condition?.reason}: ${state.condition?.message}`,
  );
  if (DNS) {
    const zone = records?.data?.["zone"] ?? "";
    console.log(
      `  its DNS records (tenant-dns-records): ${zone.split("\n").filter((l) => / IN (A|SRV|CNAME) /.test(l)).length} records, ${(Buffer.byteLength(zone) / 1024).toFixed(0)} KiB`,
    );
  }
  // The control beside the worker: the host API server's own pace for a small write, not through the worker.
  console.log(
    `  the host API server's answer to a small ConfigMap create from the bench (not the worker), every ${PROBE_EVERY_MS} ms: ` +
      `baseline p50 ${ms(pct(baseProbe, 50))} p99 ${ms(pct(baseProbe, 99))} (${baseProbe.length}); ` +
      `big phase p50 ${ms(pct(bigProbe, 50))} p99 ${ms(pct(bigProbe, 99))} (${bigProbe.length})`,
  );
  // Every tenant's writes together (the big tenant's too): the host API server's answer against
  // the worker's own waits says whether the tail is the shared host or the worker.
  console.log("  the worker's host writes, every tenant's, by stage: baseline | big phase");
  const baseStages = histogramsBetween(stagesBefore, stagesBase);
  const bigStages = histogramsBetween(stagesBase, stagesBig);
  for (const stage of [...bigStages.keys()].sort()) {
    console.log(`    ${stage}: ${formatHistogram(baseStages.get(stage))} | ${formatHistogram(bigStages.get(stage))}`);
  }
  console.log(`  worker restarts ${restarts} (must be 0)`);
  console.log("  the big tenant's API server in the big phase, requests by client (its audit log):");
  for (const line of formatAgents(bigRequests, 6)) console.log(`    ${line}`);
  if (gc.scavenges + gc.majors > 0) {
    console.log(
      `  garbage collector (--trace-gc) over the big phase: ${gc.majors} major (Mark-Compact), longest ${ms(gc.majorMax)}, ` +
        `${(gc.majorTotal / 1000).toFixed(2)}s in all; ${gc.scavenges} minor, longest ${ms(gc.scavengeMax)}, ${(gc.scavengeTotal / 1000).toFixed(2)}s in all`,
    );
  }
  const self = selfTimes(profile, 12);
  console.log(`\nsync worker CPU profile of the big phase (${(self.busyMs / 1000).toFixed(2)}s busy), by self time:`);
  for (const line of formatSelfTimes(self)) console.log(line);
  console.log("  longest busy stretches (the event loop held), by inclusive time within each:");
  for (const task of longestTasks(profile, 5, true)) {
    console.log(`    ${task.ms.toFixed(0)} ms:`);
    for (const line of formatSelfTimes({ busyMs: task.ms, rows: task.rows }, "      ")) console.log(line);
  }
  console.log("  by inclusive time:");
  for (const line of formatSelfTimes(totalTimes(profile, 20))) console.log(line);
  console.log(`\nreproduce: ${command}`);
} finally {
  for (const w of watches) w.stop();
  await fleet.stop();
  for (const s of standIns) await s.stop();
  await nats.stop();
  await host.stop();
  profiles.remove();
  cpuGroups?.remove();
}

/** A SyncPolicy with every kind the worker syncs but ConfigMaps (BIG_SYNCED=0). */
async function applyUnsyncedPolicy(): Promise<void> {
  await applyTenantplaneObject("SyncPolicy", UNSYNCED_POLICY, {
    toHost: SYNC_KINDS.filter((k) => k !== "ConfigMap").map((kind) => ({ kind })),
  });
}

/** The built-in profile with a host quota that holds DNS_PODS Pods of 1m CPU and 1Mi (and nothing else changed). */
async function applyDnsProfile(): Promise<void> {
  await applyTenantplaneObject("IsolationProfile", DNS_PROFILE, {
    resourceQuota: {
      hard: {
        pods: String(DNS_PODS + 50),
        "requests.cpu": "64",
        "requests.memory": "64Gi",
        "limits.cpu": "64",
        "limits.memory": "64Gi",
      },
    },
  });
}

/** Server-side applies a cluster-scoped tenantplane.io object with `spec`, as the bench's field manager. */
async function applyTenantplaneObject(kind: string, name: string, spec: object): Promise<void> {
  await KubernetesObjectApi.makeApiClient(host.kubeConfig).patch(
    { apiVersion: "tenantplane.io/v1alpha1", kind, metadata: { name }, spec } as KubernetesObject,
    undefined,
    undefined,
    "bench",
    true,
    PatchStrategy.ServerSideApply,
  );
}

/** Runs the big tenant's client (bench/bulkhead-fill.ts) as its own process until it has filled the tenant. */
function startFill(job: FillJob): Promise<void> {
  const child = fork(new URL("./bulkhead-fill.ts", import.meta.url), [JSON.stringify(job)]);
  return new Promise((resolve, reject) => {
    let done = false;
    child.on("message", (m) => (done = m === "filled"));
    child.on("exit", (code) =>
      done && code === 0 ? resolve() : reject(new Error(`the fill process exited with ${code} before it was done`)),
    );
  });
}

/**
 * Places the tenant's stand-in (its etcd, API server and controller-manager) in a CPU group with
 * the requests and limits of its host k3s Pod as the API server stored it (LimitRange defaults
 * included), and the worker, once, with the chart's.
 */
async function placeTenant(tenant: { name: string; address: string }, worker: RunningService): Promise<void> {
  if (!cpuGroups) {
    const opened = PodCpuGroups.open(`tenantplane-bench-${process.pid}`);
    if (typeof opened === "string") throw new Error(`CPU_GROUPS=1: ${opened}`);
    cpuGroups = opened;
    const own = chart.services["sync-worker"]!.resources;
    const limit = own.limits.cpu;
    cpuGroups.place("sync-worker", [worker.process.pid], {
      requestMilli: milliOf(WORKER_CPU ?? own.requests.cpu),
      ...(limit ? { limitMilli: milliOf(limit) } : {}),
    });
  }
  const pod = await core.readNamespacedPod({ namespace: `tp-${tenant.name}`, name: "k3s-0" });
  const k3s = pod.spec?.containers.find((c) => c.name === "k3s");
  const request = k3s?.resources?.requests?.["cpu"];
  if (!request) throw new Error(`tp-${tenant.name}/k3s-0 has no CPU request`);
  const limit = k3s?.resources?.limits?.["cpu"];
  const pids = pidsWithArgument(`tenant-${tenant.address}-`);
  cpuGroups.place(`tenant-${tenant.name}`, pids, {
    requestMilli: milliOf(String(request)),
    ...(limit ? { limitMilli: milliOf(String(limit)) } : {}),
  });
}

/** Small ConfigMaps, alternating between the small tenants at 20/s: create answered -> copy first seen on the host. */
async function latency(clients: Map<string, JsonClient>, prefix: string, samples: number): Promise<number[]> {
  const pending: { key: string; at: number }[] = [];
  for (let i = 0; i < samples; i++) {
    const tenant = SMALL[i % SMALL.length]!.name;
    const name = `${prefix}-${i}`;
    await clients.get(tenant)!.request("POST", resourcePath("v1", "configmaps", "bench"), {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "bench" }, data: { n: String(i) } },
    });
    pending.push({ key: `tp-${tenant}/${name}-x-bench-x-${tenant}`, at: performance.now() });
    await new Promise((r) => setTimeout(r, 50));
  }
  await waitFor(() => pending.every((p) => seen.has(p.key)) || undefined, {
    timeoutMs: 120_000,
    intervalMs: 50,
    description: `${prefix} copies seen`,
  });
  const out = pending.map((p) => Math.max(0, seen.get(p.key)! - p.at));
  pending.forEach((p, i) => timeline.push({ at: p.at, ms: out[i]! }));
  return out;
}

/** When the big tenant's copies appear (each new one). */
function bigCopiesWatch(namespace: string): ListWatch {
  return hostWatch(namespace, () => {
    lastBigCopyAt = performance.now();
    bigCopiesSeen++;
  });
}

/** A watch of the host copies of ConfigMaps in `namespace`, as metadata only (not their megabytes). */
function hostWatch(
  namespace: string,
  onAdd: (name: string) => void = (name) => {
    const key = `${namespace}/${name}`;
    if (!seen.has(key)) seen.set(key, performance.now());
  },
): ListWatch {
  return startListWatch({
    client: hostJson,
    path: resourcePath("v1", "configmaps", namespace),
    apiVersion: "v1",
    kind: "ConfigMap",
    labelSelector: "tenantplane.io/kind",
    metadataOnly: true,
    logger: createLogger("bench", "silent"),
    onEvent: (e) => {
      if (e.type === "add") onAdd(e.object.metadata.name);
    },
  });
}

/** A module that turns on V8's --trace-gc in the process that preloads it. */
function traceGcPreload(): string {
  const path = join(tmpdir(), "tenantplane-bench-trace-gc.mjs");
  writeFileSync(path, 'import { setFlagsFromString } from "node:v8";\nsetFlagsFromString("--trace-gc");\n');
  return path;
}

/** Pauses from V8's --trace-gc lines ("…ms: Mark-Compact 301.2 (320.0) -> 200.1 (310.0) MB, 55.3 / 0.0 ms …"). */
function gcPauses(log: string): {
  majors: number;
  majorMax: number;
  majorTotal: number;
  scavenges: number;
  scavengeMax: number;
  scavengeTotal: number;
} {
  const gc = { majors: 0, majorMax: 0, majorTotal: 0, scavenges: 0, scavengeMax: 0, scavengeTotal: 0 };
  const line =
    /ms: (Scavenge|Mark-Compact(?: \(reduce\))?|Mark-Sweep)\b[^\n]*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/g;
  for (const m of log.matchAll(line)) {
    const pause = Number(m[2]);
    if (m[1] === "Scavenge") {
      gc.scavenges++;
      gc.scavengeMax = Math.max(gc.scavengeMax, pause);
      gc.scavengeTotal += pause;
    } else {
      gc.majors++;
      gc.majorMax = Math.max(gc.majorMax, pause);
      gc.majorTotal += pause;
    }
  }
  return gc;
}

/** Scrapes the worker's event-loop delay each second; stop() gives the largest p99 and the longest delay seen. */
/** One 1 s scrape: the longest event-loop delay in it, and what the scheduler did with the main thread. */
interface LoopSecond {
  maxMs: number;
  runMs: number;
  waitMs: number;
}

interface LoopReport {
  p99: number;
  max: number;
  /** The main thread over the whole phase. */
  sched: ThreadSched;
  /** The seconds with the longest delay, longest first. */
  worst: LoopSecond[];
}

/**
 * Creates a small ConfigMap in the host (PROBE_NAMESPACE) every PROBE_EVERY_MS and times the
 * API server's answer, until stopped: how fast the host answers anyone, apart from the worker.
 */
function hostProbe(prefix: string): { stop(): Promise<number[]> } {
  const samples: number[] = [];
  let stopped = false;
  const run = (async () => {
    for (let i = 0; !stopped; i++) {
      const from = performance.now();
      await core.createNamespacedConfigMap({
        namespace: PROBE_NAMESPACE,
        body: { metadata: { name: `${prefix}-${i}` }, data: { n: String(i) } },
      });
      samples.push(performance.now() - from);
      await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await run;
      return samples;
    },
  };
}

/** The worker's write stages and queue wait (histograms by series) as they stand now. */
async function writeStages(w: RunningService): Promise<Map<string, Histogram>> {
  const body = (await w.probe("/metrics")).body;
  const stages = readHistograms(body, "tenantplane_sync_write_stage_seconds");
  const queue = readHistograms(body, "tenantplane_sync_queue_wait_seconds").get("");
  if (queue) stages.set('queue (a key waiting for a slot, stage="queue_wait")', queue);
  return stages;
}

function scrapeLoop(w: RunningService): { stop(): LoopReport } {
  let p99 = 0;
  let max = 0;
  const pid = w.process.pid;
  const first = mainThreadSched(pid);
  let last = first;
  const seconds: LoopSecond[] = [];
  const read = (body: string, q: string) =>
    // The registry adds its default labels (service) beside the quantile.
    Number(
      new RegExp(`tenantplane_sync_event_loop_delay_seconds\\{[^}]*quantile="${q}"[^}]*\\} (\\S+)`).exec(body)?.[1] ??
        0,
    );
  const timer = setInterval(() => {
    // Read as the scrape is sent: the second it covers is the one since the previous read.
    const now = mainThreadSched(pid);
    const second = { runMs: now.runMs - last.runMs, waitMs: now.waitMs - last.waitMs };
    last = now;
    void w
      .probe("/metrics")
      .then(({ body }) => {
        p99 = Math.max(p99, read(body, "0.99"));
        max = Math.max(max, read(body, "1"));
        seconds.push({ maxMs: read(body, "1") * 1000, ...second });
      })
      .catch(() => undefined);
  }, 1_000);
  return {
    stop: () => {
      clearInterval(timer);
      const end = mainThreadSched(pid);
      return {
        p99,
        max,
        sched: { runMs: end.runMs - first.runMs, waitMs: end.waitMs - first.waitMs },
        worst: [...seconds].sort((a, b) => b.maxMs - a.maxMs).slice(0, 3),
      };
    },
  };
}

/** Counts the worker's exits (an OOM kill or a crash) until stop(). */
function watchWorker(w: RunningService): { stop(): number } {
  let exits = 0;
  let up = true;
  const timer = setInterval(() => {
    const running = w.process.running();
    if (up && !running) exits++;
    up = running;
  }, 250);
  return {
    stop: () => {
      clearInterval(timer);
      if (up && !w.process.running()) exits++;
      return exits;
    },
  };
}

/** A nice value from the environment variable `name`, when set. */
function niceOf(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined) return undefined;
  const nice = Number(raw);
  if (!(Number.isInteger(nice) && nice >= -20 && nice <= 19))
    throw new Error(`${name} must be an integer from -20 to 19`);
  return nice;
}
