// Measures the sync worker on the real test stack, each figure against a baseline taken in
// the same run:
//   throughput  T tenants x M objects (ConfigMap/Secret/Pod/Service mix) already in the
//               tenant APIs, one worker started: time until every host copy exists, against a
//               raw client creating the same already-transformed objects on the host API with
//               the worker's concurrency. Both runs end when the benchmark's own host watch has
//               seen the last object, and the copies are checked equal to the raw objects;
//   latency     tenant create -> host object visible, p50/p99, with 1 and with 3 workers;
//   steady      host API writes and LISTs of the synced resources over several resync
//               intervals after convergence (apiserver_request_total), and the workers' own
//               request counters;
//   failover    SIGKILL of the worker syncing tenant 0 -> a change made meanwhile on the host;
//   memory      worker heap per tenant and per synced object, fitted over two sizes (RSS shown);
//   profile     the worker's top self-time functions in the sync window (V8's CPU profiler, started
//               and stopped inside the worker by bench/cpu-profiler.mjs), and the recorder's Event
//               writes and CPU beside the worker's (PROFILE_OUT=<file> keeps the .cpuprofile).
//
//   npm run build && npm run bench:sync            (TENANTS=10 OBJECTS=300 CONCURRENCY=8 by default;
//                                                   stand-ins on 127.0.0.ADDRESS_BASE+i, 180 by default;
//                                                   ROUTINE_EVENTS=each|none sets the recorder's policy)
import { spawn } from "node:child_process";
import { copyFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient, resourcePath, startListWatch, type ListWatch, type RawObject } from "@tenantplane/kube";
import { ANNOTATION_DECISION } from "@tenantplane/mapping";
import { parseTenantObject, podEnvironmentFrom, transform } from "@tenantplane/sync";
import {
  ServiceFleet,
  agentOf,
  installCrds,
  isWrite,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  readAudit,
  waitFor,
  waitForTenantServiceAccount,
  type RunningService,
  type TenantApiServer,
} from "../test/harness/index.js";
import { byAgent, formatAgents } from "./audit-summary.js";
import { formatSelfTimes, selfTimes } from "./cpu-profile.js";
import { ProfileWindows } from "./worker-profile.js";
import {
  cpuBetween,
  cpuOf,
  cpuSnapshot,
  formatCpu,
  formatSettled,
  restingBusy,
  settle as settleMachine,
  type CpuSnapshot,
} from "./cpu-usage.js";
import { ms, pct, pool } from "./stats.js";
import { procStatusMib } from "./proc-status.js";
import { createLogger } from "@tenantplane/runtime";

// Declared before the top-level run below: classes are not hoisted.
/**
 * A tenant client that retries what a starved machine throws (connection resets, timeouts,
 * 429/5xx); a create answered 409 after a retry had already landed.
 */
class RetryingClient extends JsonClient {
  override async request<T>(
    method: string,
    path: string,
    init: { query?: Record<string, string | number | boolean | undefined>; body?: unknown; contentType?: string } = {},
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await super.request<T>(method, path, init);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (attempt > 0 && method === "POST" && code === 409) return undefined as T;
        const transient = typeof code !== "number" || code === 429 || code >= 500;
        if (!transient || attempt >= 8) throw err;
        await new Promise((r) => setTimeout(r, 250 * 2 ** Math.min(attempt, 4)));
      }
    }
  }
}

const T = Number(process.env.TENANTS ?? 10);
const M = Number(process.env.OBJECTS ?? 300);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const PARTITIONS = 32;
const RESYNC_SECONDS = 10;
const HASH_KEY = "bench-content-hash-key-0123456789";
const ADDRESS_BASE = Number(process.env.ADDRESS_BASE ?? 180);
if (T < 1 || T > 20 || ADDRESS_BASE < 2 || ADDRESS_BASE + T > 254) {
  throw new Error("TENANTS must be 1-20, stand-ins on 127.0.0.ADDRESS_BASE.. within 127.0.0.2-254");
}
const LATENCY_SAMPLES = 200;

const ALL_KINDS = ["ConfigMap", "Secret", "Pod", "Service"];
/** The kinds in the mix, round-robin; `KINDS=ConfigMap,Pod` narrows it to see what one kind costs. */
const KINDS = (process.env.KINDS ?? ALL_KINDS.join(",")).split(",");
if (KINDS.some((k) => !ALL_KINDS.includes(k))) throw new Error(`KINDS must be among ${ALL_KINDS.join(",")}`);
const PLURAL: Record<string, string> = { ConfigMap: "configmaps", Secret: "secrets", Pod: "pods", Service: "services" };
const tenants = Array.from({ length: T }, (_, i) => ({ name: `bench-${i}`, address: `127.0.0.${ADDRESS_BASE + i}` }));
const command =
  `npm run build && TENANTS=${T} OBJECTS=${M}` +
  (process.env.CONCURRENCY ? ` CONCURRENCY=${CONCURRENCY}` : "") +
  (process.env.ADDRESS_BASE ? ` ADDRESS_BASE=${ADDRESS_BASE}` : "") +
  (process.env.KINDS ? ` KINDS=${KINDS.join(",")}` : "") +
  (process.env.ROUTINE_EVENTS ? ` ROUTINE_EVENTS=${process.env.ROUTINE_EVENTS}` : "") +
  " npm run bench:sync";

const toolsDir = await buildTools();
// The audit log tells each window's host requests apart by user agent.
const host = await startHostCluster({ name: "bench-sync", toolsDir, auditLog: true });
const nats = await startNats({ toolsDir });
const objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
const core = host.kubeConfig.makeApiClient(CoreV1Api);
const hostJson = new JsonClient(host.kubeConfig);
await installCrds(host.kubeConfig, crdManifests().map(withoutMetadataDescription));
await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  env: { LOG_LEVEL: "info", POD_NAMESPACE: "tenantplane-system" },
});
// ROUTINE_EVENTS=each runs the recorder as before its routine Events were aggregated, to compare.
const recorderEnv = process.env.ROUTINE_EVENTS ? { ROUTINE_EVENTS: process.env.ROUTINE_EVENTS } : {};
await Promise.all(
  (["watcher", "provisioner", "isolation", "recorder"] as const).map((n) =>
    fleet.start(n, n === "recorder" ? recorderEnv : {}),
  ),
);
const standIns: TenantApiServer[] = [];
const workers: RunningService[] = [];
const watches: ListWatch[] = [];
/** When each host object (`namespace/kind/name`) was first seen by the benchmark's own host watches. */
const seen = new Map<string, number>();
let rawCpuSeconds = 0;
// The chart's lease TTL unless told otherwise: at 3 s a worker loaded by the sync window lets
// its partition leases lapse, and the relists that follow are then measured as sync cost.
const LEASE_TTL_SECONDS = Number(process.env.LEASE_TTL_SECONDS ?? "6");
// Each worker can profile itself (bench/worker-profile.ts); only the throughput run's worker is asked to.
const profiles = new ProfileWindows();
const profileEnvs: { NODE_OPTIONS: string; CPU_PROFILE_PATH: string }[] = [];
const startWorker = async () => {
  const profileEnv = profiles.env(process.env.WORKER_NODE_OPTIONS);
  profileEnvs.push(profileEnv);
  const w = await fleet.start("sync-worker", {
    RESYNC_INTERVAL_SECONDS: String(RESYNC_SECONDS),
    SYNC_CONCURRENCY: String(CONCURRENCY),
    TENANT_CONCURRENCY: process.env.TENANT_CONCURRENCY ?? "4",
    LOG_LEVEL: "warn",
    PARTITIONS: String(PARTITIONS),
    LEASE_TTL_SECONDS: String(LEASE_TTL_SECONDS),
    CONTENT_HASH_KEY: HASH_KEY,
    HOST_QPS: "1000",
    HOST_BURST: "1000",
    TENANT_WRITE_QPS: "500",
    TENANT_WRITE_BURST: "500",
    ...profileEnv,
  });
  workers.push(w);
  return w;
};

try {
  // A profile roomy enough that quota never refuses a benchmark Pod.
  await apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "IsolationProfile",
    metadata: { name: "bench" },
    spec: {
      resourceQuota: {
        hard: {
          pods: "5000",
          "requests.cpu": "5000",
          "requests.memory": "5000Gi",
          "limits.cpu": "5000",
          "limits.memory": "5000Gi",
          "services.loadbalancers": "2",
        },
      },
    },
  });
  // A worker with no tenants yet: the memory every figure below is measured from.
  const idle = await startWorker();
  await new Promise((r) => setTimeout(r, 5_000));
  const idleRss = procStatusMib(idle.process.pid, "VmRSS");
  const idleHeap = await heapMib(idle);
  await idle.stop();
  workers.length = 0;
  // A few at a time: ten control planes starting at once can starve a loaded machine.
  for (let i = 0; i < tenants.length; i += 4) await Promise.all(tenants.slice(i, i + 4).map(provision));
  const clients = await Promise.all(tenants.map((t) => tenantClient(t.name)));
  for (const api of clients) {
    await api.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "bench" } },
    });
    await waitForTenantServiceAccount(api, "bench");
  }

  // Throughput: objects first, then one worker.
  const sources = tenants.map(() =>
    Array.from({ length: M }, (_, i) => tenantObject(KINDS[i % KINDS.length]!, `obj-${i}`)),
  );
  await pool(
    sources.flatMap((list, ti) =>
      list.map(
        (obj) => () => clients[ti]!.request("POST", resourcePath("v1", PLURAL[obj.kind]!, "bench"), { body: obj }),
      ),
    ),
    32,
  );
  const total = T * M;
  // One watch per kind over every namespace, for raw objects and copies alike: both runs are
  // timed by the same observer, and its cost to the API server is the same in both.
  for (const kind of KINDS) watches.push(hostWatch(kind));
  await Promise.all(watches.map((w) => w.synced));
  // Both windows start at the stack's resting level: without the wait the sync window was charged
  // for the host controllers' trailing work on the raw objects (EndpointSlices, scheduling, quota
  // counts: 883 EndpointSlice creates fell in it), the tenants' for their fresh objects in the raw one.
  const resting = await restingBusy();
  const restFrom = { cpu: cpuSnapshot(), at: Date.now() };
  const beforeRaw = await settleMachine({ maxBusyCores: resting + 0.2, timeoutMs: 120_000 });
  // Each process's CPU per second at rest, taken off both runs (a longer run would pay more of it).
  const restRate = new Map(
    cpuBetween(restFrom.cpu, cpuSnapshot()).map(([g, sec]) => [g, sec / ((Date.now() - restFrom.at) / 1000)]),
  );
  const beyondRest = (usage: Array<[string, number]>, seconds: number): Array<[string, number]> =>
    usage
      .map(([g, sec]): [string, number] => [g, Math.max(0, sec - (restRate.get(g) ?? 0) * seconds)])
      .sort((a, b) => b[1] - a[1]);
  const rawCpuFrom = cpuSnapshot();
  const rawFrom = Date.now();
  const raw = await rawBaseline(sources, clients);
  const rawWindow = window(rawFrom, rawCpuFrom);
  const rawSeconds = raw.seconds;
  const beforeSync = await settleMachine({ maxBusyCores: resting + 0.2, timeoutMs: 180_000 });
  // The raw run's whole cost, the controllers' work its objects caused after its window included.
  const rawRunSeconds = (Date.now() - rawFrom) / 1000;
  const rawRun = { usage: beyondRest(cpuBetween(rawCpuFrom, cpuSnapshot()), rawRunSeconds), seconds: rawRunSeconds };
  const bareRss = await bareNodeRss();
  const one = await startWorker();
  // Its own profile path: the idle worker above was started (and given one) first.
  const oneProfile = profileEnvs.at(-1)!;
  profiles.start(one.process.pid);
  const cpuBefore = await counter(one, "tenantplane_process_cpu_seconds_total", "");
  const syncCpuFrom = cpuSnapshot();
  const syncFrom = Date.now();
  const syncStart = performance.now();
  await waitFor(async () => (await ownersOf()).size === T || undefined, {
    timeoutMs: 60_000,
    intervalMs: 50,
    description: "the worker holds every tenant",
  });
  const ownedAfter = (performance.now() - syncStart) / 1000;
  const copyKeys = sources.flatMap((list, ti) =>
    list.map(
      (obj) => `tp-${tenants[ti]!.name}/${obj.kind}/${hostName(tenants[ti]!.name, obj.metadata["name"] as string)}`,
    ),
  );
  await waitFor(() => copyKeys.every((k) => seen.has(k)) || undefined, {
    timeoutMs: 30 * 60_000,
    intervalMs: 20,
    description: `${total} host copies`,
  });
  const syncWindow = window(syncFrom, syncCpuFrom);
  const profiled = profiles.stop(one.process.pid, oneProfile);
  const copyTimes = copyKeys.map((k) => seen.get(k)!);
  const syncSeconds = (Math.max(...copyTimes) - syncStart) / 1000;
  const firstCreate = (Math.min(...copyTimes) - syncStart) / 1000;
  const syncCpu = (await counter(one, "tenantplane_process_cpu_seconds_total", "")) - cpuBefore;
  const created = await counter(one, "tenantplane_sync_objects_total", 'outcome="create"');
  const mismatches = await compareCopies();
  const profile = selfTimes(await profiled);
  if (process.env.PROFILE_OUT) copyFileSync(oneProfile.CPU_PROFILE_PATH, process.env.PROFILE_OUT);
  // The recorder explains the window's Decisions a little after them: its Event writes are
  // counted until it has been idle for a while, so each run counts all of them.
  const recorderEvents = await recorderEventWrites(syncFrom);
  await settleMachine({ maxBusyCores: resting + 0.2, timeoutMs: 180_000 });
  const syncRunSeconds = (Date.now() - syncFrom) / 1000;
  const syncRun = {
    usage: beyondRest(cpuBetween(syncCpuFrom, cpuSnapshot()), syncRunSeconds),
    seconds: syncRunSeconds,
  };
  await settle();
  const rss1 = { objects: total, mib: procStatusMib(one.process.pid, "VmRSS"), heap: await heapMib(one) };

  // Latency with one worker, then with three.
  const lat1 = await latency(clients, "l1");
  await startWorker();
  await startWorker();
  await waitFor(async () => (await ownersOf()).size === T || undefined, {
    timeoutMs: 60_000,
    description: "tenants spread over 3 workers",
  });
  // Measured once the hand-overs are over (failover is timed on its own below): the partitions
  // balanced over the three, and every tenant's new owner listed and syncing.
  await balanced(3);
  await latency(clients, "warm", T);
  await quiet();
  await settle();
  const lat3 = await latency(clients, "l3");

  // Steady state over several resync intervals.
  await settle();
  const before = await apiserverCounts();
  const ownBefore = await workerCounts();
  const steadySeconds = RESYNC_SECONDS * 4;
  await new Promise((r) => setTimeout(r, steadySeconds * 1000));
  const after = await apiserverCounts();
  const ownAfter = await workerCounts();

  // Failover.
  const owner = (await ownersOf()).get(tenants[0]!.name)!;
  const victim = workers.find((w) => w.name === owner)!;
  await victim.kill();
  const killedAt = performance.now();
  await clients[0]!.request("POST", resourcePath("v1", "configmaps", "bench"), {
    body: tenantObject("ConfigMap", "after-kill"),
  });
  await waitFor(() => seen.has(`tp-${tenants[0]!.name}/ConfigMap/${hostName(tenants[0]!.name, "after-kill")}`), {
    timeoutMs: 60_000,
    intervalMs: 50,
    description: "change after SIGKILL on the host",
  });
  const failoverSeconds = (performance.now() - killedAt) / 1000;

  // Memory: a second size on one worker (the survivors stop; a fresh worker syncs everything).
  for (const w of workers.filter((w) => w.process.running())) await w.stop();
  const half = Math.ceil(M / 2);
  await pool(
    clients.flatMap((api) =>
      Array.from(
        { length: half },
        (_, i) => () =>
          api.request("POST", resourcePath("v1", "configmaps", "bench"), {
            body: tenantObject("ConfigMap", `grow-${i}`),
          }),
      ),
    ),
    32,
  );
  const grown = await startWorker();
  const grownTotal = total + T * half + 2 * LATENCY_SAMPLES + 1;
  await waitFor(
    async () => (await counter(grown, "tenantplane_sync_objects_total", 'outcome="create"')) >= T * half || undefined,
    {
      timeoutMs: 30 * 60_000,
      intervalMs: 500,
      description: "grown copies",
    },
  );
  await settle();
  const rss2 = { objects: grownTotal, mib: procStatusMib(grown.process.pid, "VmRSS"), heap: await heapMib(grown) };
  // V8's heap in use is the steadier signal: RSS keeps whatever the heap once grew to.
  const perObjectKiB = ((rss2.heap - rss1.heap) / (rss2.objects - rss1.objects)) * 1024;
  const perTenantMiB = (rss1.heap - idleHeap - (perObjectKiB / 1024) * rss1.objects) / T;

  const rawRate = total / rawSeconds;
  const syncRate = total / syncSeconds;
  console.log(`\nSync worker, ${T} tenants x ${M} objects (${KINDS.join("/")}), concurrency ${CONCURRENCY}`);
  console.log(
    `  baseline: raw client, first request -> last object seen   ${rawSeconds.toFixed(2)}s  ${rawRate.toFixed(0)} obj/s`,
  );
  console.log(
    `  sync: worker started -> last host copy seen               ${syncSeconds.toFixed(2)}s  ${syncRate.toFixed(0)} obj/s`,
  );
  console.log(
    `  ratio sync / raw rate                                      ${(syncRate / rawRate).toFixed(2)}x (target >= 0.75x)`,
  );
  console.log(
    `  each window began at the stack's resting level (${resting.toFixed(2)} cores busy + 0.2): raw ${formatSettled(beforeRaw)}, sync ${formatSettled(beforeSync)}`,
  );
  const rawWriteRate = total / raw.writeSeconds;
  const writeRate = total / (syncSeconds - firstCreate);
  console.log(
    `  first -> last object seen: raw ${rawWriteRate.toFixed(0)} obj/s, sync ${writeRate.toFixed(0)} obj/s = ${(writeRate / rawWriteRate).toFixed(2)}x` +
      ` (first copy after ${firstCreate.toFixed(2)}s, every tenant held after ${ownedAfter.toFixed(2)}s)`,
  );
  console.log(
    `  CPU: raw client ${rawCpuSeconds.toFixed(2)}s, sync worker ${syncCpu.toFixed(2)}s` +
      ` = ${(syncCpu / rawCpuSeconds).toFixed(2)}x per object (target <= 1.5x)`,
  );
  // On a saturated machine the wall-clock ratio is the ratio of the windows' CPU; this one is
  // the same objects per CPU-second of the stack (API servers, etcd, services, NATS, and the raw
  // client itself in its window), which a busy neighbour does not move.
  const rawStackCpu = rawWindow.cpuSeconds + rawCpuSeconds;
  console.log(
    `  CPU-normalised ratio (objects per CPU-second of the stack, sync / raw)   ${(rawStackCpu / syncWindow.cpuSeconds).toFixed(2)}x` +
      ` (raw window ${rawStackCpu.toFixed(1)}s with the client, sync window ${syncWindow.cpuSeconds.toFixed(1)}s)`,
  );
  // A window ends at the last object seen, while the host controllers still work on its objects
  // (a short window leaves more of that outside): each run again, until the stack is back at rest.
  const stackOf = (usage: Array<[string, number]>) =>
    usage.reduce((sum, [g, sec]) => (g === "other node" ? sum : sum + sec), 0);
  const rawRunStack = stackOf(rawRun.usage) + rawCpuSeconds;
  const syncRunStack = stackOf(syncRun.usage);
  const apiRatio = cpuOf(syncRun.usage, "kube-apiserver") / cpuOf(rawRun.usage, "kube-apiserver");
  console.log(
    `  each run until the stack is back at rest, CPU beyond each process's resting rate (raw ${rawRun.seconds.toFixed(0)}s, sync ${syncRun.seconds.toFixed(0)}s): host kube-apiserver ${cpuOf(rawRun.usage, "kube-apiserver").toFixed(1)}s against ${cpuOf(syncRun.usage, "kube-apiserver").toFixed(1)}s = ${apiRatio.toFixed(2)}x (target <= 1.1x); stack ${rawRunStack.toFixed(1)}s against ${syncRunStack.toFixed(1)}s, CPU-normalised ${(rawRunStack / syncRunStack).toFixed(2)}x`,
  );
  console.log(`    raw run CPU: ${formatCpu(rawRun.usage)}`);
  console.log(`    sync run CPU: ${formatCpu(syncRun.usage)}`);
  const workerCpu = cpuOf(syncWindow.usage, "sync-worker");
  const recorderCpu = cpuOf(syncWindow.usage, "recorder");
  const natsCpu = cpuOf(syncWindow.usage, "nats-server");
  console.log(
    `  recorder + NATS CPU in the sync window: ${recorderCpu.toFixed(2)}s + ${natsCpu.toFixed(2)}s =` +
      ` ${workerCpu > 0 ? (((recorderCpu + natsCpu) / workerCpu) * 100).toFixed(1) : "?"}% of the worker's ${workerCpu.toFixed(2)}s (target <= 10%)`,
  );
  console.log(
    `  recorder Event writes for the ${total} objects: ${recorderEvents.writes} (${recorderEvents.verbs}),` +
      ` the last ${recorderEvents.afterSeconds.toFixed(1)}s after the worker started`,
  );
  console.log(
    `  worker CPU profile of the sync window (${(profile.busyMs / 1000).toFixed(2)}s busy), top 10 by self time:`,
  );
  for (const line of formatSelfTimes(profile)) console.log(line);
  console.log(
    `  copies equal to the raw objects (content hash, labels, spec/data): ${total - mismatches.length}/${total}; worker creates counted ${created}`,
  );
  for (const m of mismatches.slice(0, 5)) console.log(`    differs: ${m}`);
  for (const [label, w] of [
    ["raw", rawWindow],
    ["sync", syncWindow],
  ] as const) {
    console.log(`  ${label} window ${w.seconds.toFixed(1)}s, host requests by user agent (writes: commonest verbs):`);
    console.log(`    ${w.requests}`);
    console.log(`    CPU: ${w.cpu}`);
  }
  console.log(`\nTenant create -> host object visible (${lat1.length} ConfigMaps each, 20/s over ${T} tenants)`);
  console.log(`  1 worker   p50 ${ms(pct(lat1, 50))}  p99 ${ms(pct(lat1, 99))}`);
  console.log(`  3 workers  p50 ${ms(pct(lat3, 50))}  p99 ${ms(pct(lat3, 99))}   (target p99 < 500 ms)`);
  console.log(
    `\nSteady state over ${steadySeconds}s (${steadySeconds / RESYNC_SECONDS} resync intervals), synced resources`,
  );
  for (const verb of ["POST", "PUT", "PATCH", "DELETE", "LIST"]) {
    console.log(`  apiserver_request_total ${verb.padEnd(6)} +${(after.get(verb) ?? 0) - (before.get(verb) ?? 0)}`);
  }
  for (const [verb, n] of ownAfter)
    console.log(`  workers' own host ${verb.padEnd(6)} +${n - (ownBefore.get(verb) ?? 0)}`);
  console.log(
    `\nFailover: SIGKILL -> change on the host ${failoverSeconds.toFixed(2)}s (lease TTL ${LEASE_TTL_SECONDS}s)`,
  );
  console.log(
    `\nWorker memory (bare node RSS ${bareRss.toFixed(1)} MiB; idle worker RSS ${idleRss.toFixed(1)} MiB, heap ${idleHeap.toFixed(1)} MiB)`,
  );
  console.log(`  ${rss1.objects} objects: RSS ${rss1.mib.toFixed(1)} MiB, heap ${rss1.heap.toFixed(1)} MiB`);
  console.log(`  ${rss2.objects} objects: RSS ${rss2.mib.toFixed(1)} MiB, heap ${rss2.heap.toFixed(1)} MiB`);
  console.log(
    `  heap per synced object ${perObjectKiB.toFixed(2)} KiB, per tenant ${perTenantMiB.toFixed(2)} MiB (heap after a full collection)`,
  );
  console.log(`\nreproduce: ${command}`);
} finally {
  for (const w of watches) w.stop();
  await fleet.stop();
  for (const s of standIns) await s.stop();
  await nats.stop();
  await host.stop();
  profiles.remove();
}

/** What the host API served and who used the CPU from `fromMs` until now. */
function window(
  fromMs: number,
  cpuFrom: CpuSnapshot,
): { seconds: number; requests: string; cpu: string; usage: Array<[string, number]>; cpuSeconds: number } {
  const toMs = Date.now();
  const agents = byAgent(readAudit(host.auditLogPath!, fromMs).filter((r) => r.receivedMs <= toMs));
  // Each agent's three commonest kinds of request say what its requests were for.
  const requests = formatAgents(agents, 3).join("\n    ");
  const usage = cpuBetween(cpuFrom, cpuSnapshot());
  // The stack's processes only: "other node" is this bench and whatever else runs on the machine.
  const cpuSeconds = usage.reduce((sum, [g, s]) => (g === "other node" ? sum : sum + s), 0);
  return { seconds: (toMs - fromMs) / 1000, requests, cpu: formatCpu(usage), usage, cpuSeconds };
}

/**
 * The recorder's Event writes since `fromMs` (audit log), read once none has come for 15 s
 * (longer than a routine series waits between writes): how many, by verb, and when the last was sent.
 */
async function recorderEventWrites(fromMs: number): Promise<{ writes: number; verbs: string; afterSeconds: number }> {
  const writes = () =>
    readAudit(host.auditLogPath!, fromMs).filter(
      (r) => agentOf(r) === "tenantplane-recorder" && r.resource === "events" && isWrite(r),
    );
  let last = -1;
  let list = writes();
  for (let waited = 0; waited < 180_000 && (list.length !== last || waited === 0); waited += 15_000) {
    last = list.length;
    await new Promise((r) => setTimeout(r, 15_000));
    list = writes();
  }
  const verbs = new Map<string, number>();
  for (const r of list) verbs.set(r.verb, (verbs.get(r.verb) ?? 0) + 1);
  const lastMs = Math.max(fromMs, ...list.map((r) => r.receivedMs));
  return {
    writes: list.length,
    verbs: [...verbs].map(([v, n]) => `${v} ${n}`).join(", ") || "none",
    afterSeconds: (lastMs - fromMs) / 1000,
  };
}

async function apply(obj: Record<string, unknown>): Promise<void> {
  await objects.patch(obj as KubernetesObject, undefined, undefined, "bench", true, PatchStrategy.ServerSideApply);
}

async function provision(t: { name: string; address: string }): Promise<void> {
  await apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: t.name },
    spec: { isolationProfileRef: { name: "bench" }, controlPlane: { expose: { loadBalancer: { enabled: true } } } },
  });
  // On a loaded machine the provisioner may take longer than the harness's own wait to create it.
  await waitFor(() => core.readNamespacedService({ namespace: `tp-${t.name}`, name: "k3s" }).catch(() => undefined), {
    timeoutMs: 300_000,
    intervalMs: 250,
    description: `Service tp-${t.name}/k3s`,
  });
  await setLoadBalancerIngress(host.kubeConfig, `tp-${t.name}`, "k3s", t.address);
  standIns.push(await startTenantStandIn(host.kubeConfig, t.name, t.address, { toolsDir, timeoutMs: 300_000 }));
  // A timeout quotes the conditions, so a run that fails says why the tenant was not Ready.
  let conditions = "";
  await waitFor(
    async () => {
      const tc = (await objects.read({
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "TenantCluster",
        metadata: { name: t.name },
      })) as {
        status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
      };
      conditions = (tc.status?.conditions ?? [])
        .map((c) => `${c.type}=${c.status} ${c.reason ?? ""}: ${c.message ?? ""}`)
        .join(" | ");
      return tc.status?.conditions?.some((c) => c.type === "ControlPlaneReady" && c.status === "True");
    },
    { timeoutMs: 300_000, intervalMs: 250, description: `${t.name} ControlPlaneReady` },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; conditions: ${conditions}`);
  });
}

async function tenantClient(tenant: string): Promise<JsonClient> {
  const secret = await core.readNamespacedSecret({ name: `${tenant}-kubeconfig`, namespace: `tp-${tenant}` });
  const key = Object.keys(secret.data ?? {})[0]!;
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(secret.data![key]!, "base64").toString("utf8"));
  return new RetryingClient(kc);
}

function tenantObject(
  kind: string,
  name: string,
): { apiVersion: string; kind: string; metadata: Record<string, unknown> } & Record<string, unknown> {
  const metadata = { name, namespace: "bench", labels: { app: "bench" } };
  switch (kind) {
    case "Secret":
      return { apiVersion: "v1", kind, metadata, type: "Opaque", stringData: { token: `value-${name}` } };
    case "Pod":
      return {
        apiVersion: "v1",
        kind,
        metadata,
        spec: { automountServiceAccountToken: false, containers: [{ name: "app", image: "registry.invalid/app:1" }] },
      };
    case "Service":
      return {
        apiVersion: "v1",
        kind,
        metadata,
        spec: { selector: { app: "bench" }, ports: [{ port: 80, targetPort: 8080 }] },
      };
    default:
      return { apiVersion: "v1", kind, metadata, data: { key: `value-${name}` } };
  }
}

/**
 * The raw client's run: the host copies the planner would write, created in fresh namespaces
 * (with the tenant namespace's Pod Security labels, quota and limit range, so admission does
 * the same work) with the same concurrency, in the same round-robin order over tenants.
 */
async function rawBaseline(
  sources: ReturnType<typeof tenantObject>[][],
  clients: JsonClient[],
): Promise<{ seconds: number; writeSeconds: number }> {
  const perTenant: (() => Promise<unknown>)[][] = [];
  const keys: string[] = [];
  for (const [ti, list] of sources.entries()) {
    const ns = `raw-${ti}`;
    const tenantNs = await core.readNamespace({ name: `tp-${tenants[ti]!.name}` });
    const labels = Object.fromEntries(
      Object.entries(tenantNs.metadata?.labels ?? {}).filter(([k]) => k.startsWith("pod-security.kubernetes.io/")),
    );
    await core.createNamespace({ body: { metadata: { name: ns, labels } } });
    const jobs: (() => Promise<unknown>)[] = [];
    perTenant.push(jobs);
    // The same admission work as a tenant namespace: its quota and limit range, copied.
    for (const [plural, name] of [
      ["resourcequotas", "tenantplane-quota"],
      ["limitranges", "tenantplane-limits"],
    ] as const) {
      const source = await hostJson.request<{ kind?: string; spec: unknown }>(
        "GET",
        resourcePath("v1", plural, `tp-${tenants[ti]!.name}`, name),
      );
      const kind = plural === "resourcequotas" ? "ResourceQuota" : "LimitRange";
      await hostJson.request("POST", resourcePath("v1", plural, ns), {
        body: { apiVersion: "v1", kind, metadata: { name }, spec: source.spec },
      });
    }
    // Exactly what the planner reads: the objects as the tenant API stores them (defaults filled in).
    const stored = new Map<string, RawObject>();
    for (const kind of KINDS) {
      const page = await clients[ti]!.request<{ items: RawObject[] }>(
        "GET",
        resourcePath("v1", PLURAL[kind]!, "bench"),
      );
      for (const item of page.items) stored.set(`${kind}/${item.metadata.name}`, { ...item, apiVersion: "v1", kind });
    }
    // Where the worker points a Pod's API env and DNS: the tenant's own Services on the host.
    const hostServices = await hostJson.request<{ items: RawObject[] }>(
      "GET",
      resourcePath("v1", "services", `tp-${tenants[ti]!.name}`),
    );
    const environment = podEnvironmentFrom(
      hostServices.items.map((s) => ({ ...s, kind: "Service" })),
      tenants[ti]!.name,
    );
    if (environment === "unknown") throw new Error(`tenant ${tenants[ti]!.name} has no API or DNS Service address yet`);
    for (const obj of list) {
      const read = stored.get(`${obj.kind}/${obj.metadata["name"] as string}`);
      if (read === undefined)
        throw new Error(`tenant ${tenants[ti]!.name} has no ${obj.kind} ${String(obj.metadata["name"])}`);
      const parsed = parseTenantObject(read);
      if (!parsed.ok) throw new Error(parsed.problem);
      const desired = transform(parsed.object, tenants[ti]!.name, { hashKey: HASH_KEY, podEnvironment: environment });
      desired.metadata.namespace = ns;
      keys.push(`${ns}/${desired.kind}/${desired.metadata.name}`);
      jobs.push(() => hostJson.request("POST", resourcePath("v1", PLURAL[desired.kind]!, ns), { body: desired }));
    }
  }
  // The worker serves tenants round-robin: so does the raw client.
  const jobs: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < Math.max(...perTenant.map((l) => l.length)); i++) {
    for (const list of perTenant) if (list[i] !== undefined) jobs.push(list[i]!);
  }
  const started = performance.now();
  const cpu = process.cpuUsage();
  await pool(jobs, CONCURRENCY);
  const used = process.cpuUsage(cpu);
  rawCpuSeconds = (used.user + used.system) / 1e6;
  await waitFor(() => keys.every((k) => seen.has(k)) || undefined, {
    timeoutMs: 60_000,
    intervalMs: 20,
    description: "raw objects seen",
  });
  const times = keys.map((k) => seen.get(k)!);
  return {
    seconds: (Math.max(...times) - started) / 1000,
    writeSeconds: (Math.max(...times) - Math.min(...times)) / 1000,
  };
}

/**
 * Compares every host copy with the raw client's object for the same source: same content
 * hash, labels, annotations and body; returns what differs (by name).
 */
async function compareCopies(): Promise<string[]> {
  const differs: string[] = [];
  const strip = (o: Record<string, unknown>) => {
    const {
      metadata,
      status: _status,
      ...rest
    } = o as Record<string, unknown> & {
      metadata: Record<string, unknown>;
      status?: unknown;
    };
    // Fields the host API server fills in differ per object (cluster IPs, node names, uids).
    const spec = rest["spec"] as Record<string, unknown> | undefined;
    const body = spec
      ? {
          ...rest,
          spec: Object.fromEntries(
            Object.entries(spec).filter(([k]) => !["clusterIP", "clusterIPs", "nodeName"].includes(k)),
          ),
        }
      : rest;
    // The Decision a copy records (id and time of its write) is the worker's bookkeeping, not content.
    const { [ANNOTATION_DECISION]: _decision, ...annotations } = (metadata["annotations"] ?? {}) as Record<
      string,
      string
    >;
    return JSON.stringify({ labels: metadata["labels"], annotations, body });
  };
  for (const [ti, t] of tenants.entries()) {
    for (const kind of KINDS) {
      const list = async (ns: string) =>
        new Map(
          (
            await hostJson.request<{ items: Record<string, unknown>[] }>("GET", resourcePath("v1", PLURAL[kind]!, ns), {
              query: { labelSelector: `tenantplane.io/kind=${kind}` },
            })
          ).items.map((o) => [(o["metadata"] as { name: string }).name, strip(o)]),
        );
      const [copies, raws] = await Promise.all([list(`tp-${t.name}`), list(`raw-${ti}`)]);
      for (const [name, rawText] of raws) {
        if (copies.get(name) !== rawText) differs.push(`${kind} tp-${t.name}/${name}`);
      }
    }
  }
  return differs;
}

function hostName(tenant: string, name: string): string {
  return `${name}-x-bench-x-${tenant}`;
}

/** Every host object of `kind` with a tenantplane kind label, in any namespace: raw objects and sync copies. */
function hostWatch(kind: string): ListWatch {
  return startListWatch({
    client: hostJson,
    path: resourcePath("v1", PLURAL[kind]!),
    apiVersion: "v1",
    kind,
    labelSelector: "tenantplane.io/kind",
    logger: createLogger("bench", "silent"),
    onEvent: (e) => {
      const key = `${e.object.metadata.namespace}/${kind}/${e.object.metadata.name}`;
      if (e.type === "add" && !seen.has(key)) seen.set(key, performance.now());
    },
  });
}

/** ConfigMaps, round-robin over tenants at about 20 per second: tenant create answered -> first seen on the host. */
async function latency(clients: JsonClient[], prefix: string, samples = LATENCY_SAMPLES): Promise<number[]> {
  const pending: { key: string; at: number }[] = [];
  for (let i = 0; i < samples; i++) {
    const ti = i % T;
    const name = `${prefix}-${i}`;
    await clients[ti]!.request("POST", resourcePath("v1", "configmaps", "bench"), {
      body: tenantObject("ConfigMap", name),
    });
    pending.push({
      key: `tp-${tenants[ti]!.name}/ConfigMap/${hostName(tenants[ti]!.name, name)}`,
      at: performance.now(),
    });
    await new Promise((r) => setTimeout(r, 50));
  }
  await waitFor(() => pending.every((p) => seen.has(p.key)) || undefined, {
    timeoutMs: 60_000,
    intervalMs: 100,
    description: `${prefix} copies seen`,
  });
  return pending.map((p) => Math.max(0, seen.get(p.key)! - p.at));
}

async function ownersOf(): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  for (const w of workers.filter((w) => w.process.running())) {
    for (const line of (await w.probe("/metrics")).body.split("\n")) {
      const m = /^tenantplane_sync_tenant_active\{.*tenant="([^"]+)".*\} 1/.exec(line);
      if (m) owners.set(m[1]!, w.name);
    }
  }
  return owners;
}

async function counter(w: RunningService, name: string, label: string): Promise<number> {
  const body = (await w.probe("/metrics")).body;
  return body
    .split("\n")
    .filter((l) => l.startsWith(name) && l.includes(label))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
}

async function workerCounts(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const w of workers.filter((w) => w.process.running())) {
    for (const line of (await w.probe("/metrics")).body.split("\n")) {
      const m = /^tenantplane_sync_host_requests_total\{.*verb="([a-z]+)".*\} ([0-9.]+)/.exec(line);
      if (m) out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
    }
  }
  return out;
}

/** apiserver_request_total for the synced resources (namespaced, no subresource), summed by verb. */
async function apiserverCounts(): Promise<Map<string, number>> {
  const text = (await metricsText()) ?? "";
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? "";
    const sub = /subresource="([^"]*)"/.exec(line)?.[1] ?? "";
    const verb = /verb="([^"]*)"/.exec(line)?.[1] ?? "";
    if (!Object.values(PLURAL).includes(resource) || sub !== "") continue;
    out.set(verb, (out.get(verb) ?? 0) + Number(line.split(" ").at(-1)));
  }
  return out;
}

/** The host API server's /metrics (Prometheus text, which the JSON client does not parse). */
async function metricsText(): Promise<string | undefined> {
  const { request } = await import("node:https");
  const opts: Record<string, unknown> = { method: "GET" };
  await host.kubeConfig.applyToHTTPSOptions(opts);
  return new Promise((resolve) => {
    const req = request(new URL("/metrics", host.server), opts, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve(text));
    });
    req.on("error", () => resolve(undefined));
    req.end();
  });
}

/** Waits until the running workers hold every partition with tenants, none more than its even share. */
async function balanced(n: number): Promise<void> {
  await waitFor(
    async () => {
      const held = [];
      const wanted = new Set<number>();
      for (const w of workers.filter((w) => w.process.running())) {
        held.push(await counter(w, "tenantplane_sync_partitions_held", ""));
        wanted.add(await counter(w, "tenantplane_sync_partitions_wanted", ""));
      }
      // The workers must agree on how many partitions have tenants.
      if (held.length !== n || wanted.size !== 1) return undefined;
      const all = [...wanted][0]!;
      const share = Math.ceil(all / n);
      return (all > 0 && held.reduce((a, b) => a + b, 0) === all && Math.max(...held) <= share) || undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500, description: `partitions balanced over ${n} workers` },
  );
}

/** Waits until no worker has queued keys, twice in a row: new owners have finished their first passes. */
async function quiet(): Promise<void> {
  let calm = 0;
  await waitFor(
    async () => {
      let depth = 0;
      for (const w of workers.filter((w) => w.process.running())) {
        depth += await counter(w, "tenantplane_sync_queue_depth", "");
      }
      calm = depth === 0 ? calm + 1 : 0;
      return calm >= 2 || undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500, description: "every worker's queues empty" },
  );
}

async function settle(): Promise<void> {
  await new Promise((r) => setTimeout(r, 3_000));
}

/**
 * V8 heap in use after a full collection (bench/cpu-profiler.mjs runs one on SIGWINCH), from the
 * worker's own process metrics: the least of three readings. Without the collection one reading
 * landed anywhere between two collections, and the heap per object came out negative.
 */
async function heapMib(w: RunningService): Promise<number> {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    process.kill(w.process.pid!, "SIGWINCH");
    await new Promise((r) => setTimeout(r, 1_000));
    const body = (await w.probe("/metrics")).body;
    const line = body.split("\n").find((l) => l.startsWith("tenantplane_nodejs_heap_size_used_bytes"));
    least = Math.min(least, Number(line?.split(" ").at(-1) ?? 0) / 1024 / 1024);
  }
  return least;
}

async function bareNodeRss(): Promise<number> {
  const bare = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 2000));
  const mib = procStatusMib(bare.pid!, "VmRSS");
  bare.kill();
  return mib;
}

async function buildTools(): Promise<string> {
  const script = fileURLToPath(new URL("../test/cluster/build.sh", import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.once("exit", (code) =>
      code === 0 ? resolve(out.trim().split("\n").at(-1)!) : reject(new Error(`build.sh exited ${code}`)),
    );
  });
}

/** The API server refuses anything but name/generateName under a CRD's `metadata` schema, descriptions included. */
function withoutMetadataDescription(crd: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(crd) as {
    spec?: { versions?: { schema?: { openAPIV3Schema?: { properties?: { metadata?: Record<string, unknown> } } } }[] };
  };
  for (const v of copy.spec?.versions ?? []) delete v.schema?.openAPIV3Schema?.properties?.metadata?.["description"];
  return copy as Record<string, unknown>;
}
