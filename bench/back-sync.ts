// Back-sync latency on the real test stack: T tenants x P Pods created in the tenant APIs,
// one sync worker copying them to the host (kwok runs them) and writing their status back,
// against a raw baseline in the same run: the same Pods, already transformed as the worker
// makes them, created straight on the host by a raw client at the same concurrency.
//
//   raw       the host copies the worker would write (each tenant Pod as the tenant API would
//             store it, from a dry-run create, through the worker's own `translate` with the
//             tenant's profile rules and Pod environment), stripped of what makes them copies
//             (tenantplane labels and annotations), created in plain host namespaces raw-<i>
//             (with the tenant namespace's Pod Security labels, quota and limit range, so
//             admission does the same work): create request -> Ready on the host, from a host watch;
//   tenant    the same Pods created in the tenant APIs: create request -> Ready in the tenant,
//             from a watch on each tenant API.
// For both: throughput (Pods Ready per second, first create -> last Ready), create -> Ready
// p50/p99, their ratios, and each process's CPU in both windows; the worker's peak RSS.
// The raw Pods are deleted (their namespaces gone) and the machine left to settle before
// the tenant run, so both start from the same host. Afterwards each host copy's spec is
// compared with its raw Pod's: the baseline must be the same Pods.
//
// For the tenant run, also for every Pod, timed by the benchmark's own watches:
//   host      host copy first seen -> host copy Ready (the host's own create-to-Ready latency);
// and what back-sync adds, from the sync worker's own histogram
// (tenantplane_sync_backsync_latency_seconds{kind="Pod"}: host change seen by the worker -> the
// tenant write that shows it): the benchmark's watches see the host and the tenant through
// different connections, so subtracting their timestamps measures the watches, not back-sync.
//
//   npm run build && npm run bench:back-sync          (TENANTS=10 PODS=100 CONCURRENCY=32 by default;
//                                                      TIMEOUT_MINUTES=25 for each run)
import { CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { IsolationProfileSpecSchema, crdManifests, defaultSyncPolicySpec } from "@tenantplane/api";
import { JsonClient, resourcePath, startListWatch, type ListWatch, type RawObject } from "@tenantplane/kube";
import { compileHostRules, parseTenantObject, podEnvironmentFrom, translate } from "@tenantplane/sync";
import {
  ServiceFleet,
  buildTools,
  installCrds,
  provisionTenant,
  startHostCluster,
  startNats,
  tenantJsonClient,
  waitFor,
  waitForSynced,
  waitForTenantServiceAccount,
  type RunningService,
  type TenantApiServer,
} from "../test/harness/index.js";
import {
  cpuBetween,
  cpuSnapshot,
  formatCpu,
  formatMachine,
  formatSettled,
  machineTicks,
  restingBusy,
  settle,
  type CpuSnapshot,
  type MachineTicks,
} from "./cpu-usage.js";
import { procStatusMib } from "./proc-status.js";
import { histogramQuantile, ms, pct, pool } from "./stats.js";
import { createLogger } from "@tenantplane/runtime";

const T = Number(process.env.TENANTS ?? 10);
const P = Number(process.env.PODS ?? 100);
const ADDRESS_BASE = Number(process.env.ADDRESS_BASE ?? 160);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const TIMEOUT_MINUTES = Number(process.env.TIMEOUT_MINUTES ?? 25);
const command =
  `npm run build && TENANTS=${T} PODS=${P}` +
  (ADDRESS_BASE === 160 ? "" : ` ADDRESS_BASE=${ADDRESS_BASE}`) +
  (process.env.CONCURRENCY ? ` CONCURRENCY=${CONCURRENCY}` : "") +
  (process.env.TIMEOUT_MINUTES ? ` TIMEOUT_MINUTES=${TIMEOUT_MINUTES}` : "") +
  " npm run bench:back-sync";
if (T < 1 || T > 10 || ADDRESS_BASE < 2 || ADDRESS_BASE + T > 254)
  throw new Error("TENANTS must be 1-10, stand-ins on 127.0.0.ADDRESS_BASE.. (160 by default) within 127.0.0.2-254");
const N = T * P;
const NS = "bench";
/** Marks the raw baseline's Pods on the host (and nothing else). */
const RAW_LABEL = "bench-run";
const tenants = Array.from({ length: T }, (_, i) => ({ name: `bsync-${i}`, address: `127.0.0.${ADDRESS_BASE + i}` }));
const rawNamespace = (i: number) => `raw-${i}`;
// Up to 10 kwok nodes (one per 100 Pods), each registered with room for its share of the
// Pods and their default requests (100m CPU, 128Mi from the profile's limit range) with a margin.
const nodes = Math.min(10, Math.max(1, Math.ceil(N / 100)));
const podsPerNode = Math.max(110, Math.ceil((N * 1.2) / nodes));
const nodeCapacity = {
  pods: String(podsPerNode),
  cpu: String(Math.max(32, Math.ceil(podsPerNode / 5))),
  memory: `${Math.max(256, Math.ceil(podsPerNode / 4))}Gi`,
};
const profileSpec = {
  resourceQuota: {
    hard: {
      pods: String(Math.max(5000, P * 2)),
      "requests.cpu": "5000",
      "requests.memory": "5000Gi",
      "limits.cpu": "5000",
      "limits.memory": "5000Gi",
    },
  },
};

const toolsDir = await buildTools();
const host = await startHostCluster({ name: "bench-back-sync", toolsDir, nodes });
const nats = await startNats({ toolsDir });
const objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
const hostJson = new JsonClient(host.kubeConfig);
await installCrds(host.kubeConfig, crdManifests());
await host.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
for (const node of host.nodeNames) {
  await hostJson.request("PATCH", `/api/v1/nodes/${node}/status`, {
    body: { status: { capacity: { ...nodeCapacity }, allocatable: { ...nodeCapacity } } },
    contentType: "application/merge-patch+json",
  });
}
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  env: { LOG_LEVEL: "info", POD_NAMESPACE: "tenantplane-system" },
});
const standIns: TenantApiServer[] = [];
const watches: ListWatch[] = [];
// Tenant run, by `<virtual namespace>/<name>@<tenant>`.
const created = new Map<string, number>();
const hostSeen = new Map<string, number>();
const hostReady = new Map<string, number>();
const tenantReady = new Map<string, number>();
// Raw run, by `<host namespace>/<name>`.
const rawCreated = new Map<string, number>();
const rawReady = new Map<string, number>();
// Each host Pod's spec as first seen (without the node it was bound to), by `<tenant>/<host name>`.
const copySpecs = new Map<string, string>();
const rawSpecs = new Map<string, string>();

try {
  await Promise.all((["watcher", "provisioner", "isolation", "recorder"] as const).map((n) => fleet.start(n)));
  const worker = await fleet.start("sync-worker", {
    LOG_LEVEL: "warn",
    PARTITIONS: "32",
    HOST_QPS: "1000",
    HOST_BURST: "1000",
    TENANT_WRITE_QPS: "500",
    TENANT_WRITE_BURST: "500",
  });
  await objects.patch(
    {
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "IsolationProfile",
      metadata: { name: "bench-back-sync" },
      spec: profileSpec,
    } as KubernetesObject,
    undefined,
    undefined,
    "bench",
    true,
    PatchStrategy.ServerSideApply,
  );
  for (const t of tenants) {
    standIns.push(
      await provisionTenant(host.kubeConfig, t, { isolationProfileRef: { name: "bench-back-sync" } }, { toolsDir }),
    );
  }
  for (const t of tenants) await waitForSynced(host.kubeConfig, t.name, 300_000);
  const clients = await Promise.all(tenants.map((t) => tenantJsonClient(host.kubeConfig, t.name)));
  for (const api of clients) {
    await api.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
    });
    await waitForTenantServiceAccount(api, NS);
  }

  watches.push(
    startListWatch({
      client: hostJson,
      path: "/api/v1/pods",
      apiVersion: "v1",
      kind: "Pod",
      labelSelector: "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/kind=Pod",
      logger: createLogger("bench", "silent"),
      onEvent: (e) => {
        const now = performance.now();
        const labels = e.object.metadata.labels ?? {};
        const key = `${e.object.metadata.annotations?.["tenantplane.io/virtual-namespace"]}/${e.object.metadata.annotations?.["tenantplane.io/virtual-name"]}@${labels["tenantplane.io/tenant"]}`;
        if (!hostSeen.has(key)) hostSeen.set(key, now);
        if (ready(e.object) && !hostReady.has(key)) hostReady.set(key, now);
        const specKey = `${labels["tenantplane.io/tenant"]}/${e.object.metadata.name}`;
        if (e.type !== "delete" && !copySpecs.has(specKey)) copySpecs.set(specKey, specText(e.object));
      },
    }),
    startListWatch({
      client: hostJson,
      path: "/api/v1/pods",
      apiVersion: "v1",
      kind: "Pod",
      labelSelector: RAW_LABEL,
      logger: createLogger("bench", "silent"),
      onEvent: (e) => {
        const key = `${e.object.metadata.namespace}/${e.object.metadata.name}`;
        if (ready(e.object) && !rawReady.has(key)) rawReady.set(key, performance.now());
        const tenant = tenants[Number(e.object.metadata.namespace?.slice("raw-".length))]?.name;
        const specKey = `${tenant}/${e.object.metadata.name}`;
        if (e.type !== "delete" && !rawSpecs.has(specKey)) rawSpecs.set(specKey, specText(e.object));
      },
    }),
  );
  tenants.forEach((t, i) => {
    watches.push(
      startListWatch({
        client: clients[i]!,
        path: resourcePath("v1", "pods", NS),
        apiVersion: "v1",
        kind: "Pod",
        logger: createLogger("bench", "silent"),
        onEvent: (e) => {
          const key = `${NS}/${e.object.metadata.name}@${t.name}`;
          if (ready(e.object) && !tenantReady.has(key)) tenantReady.set(key, performance.now());
        },
      }),
    );
  });
  await Promise.all(watches.map((w) => w.synced));

  // Raw baseline: the worker's host copies, made before the window.
  const rawBodies = await rawPods(clients);
  // Each window starts at the stack's resting level: the idle tenant control planes keep the
  // machine above settle's fixed 0.3 cores, so that wait always ran out its timeout.
  const resting = await restingBusy();
  const rawSettled = await settle({ maxBusyCores: resting + 0.2, timeoutMs: 90_000 });
  const rawJobs = rawBodies.map((perTenant, i) =>
    perTenant.map((body) => async () => {
      const key = `${rawNamespace(i)}/${body.metadata.name}`;
      rawCreated.set(key, performance.now());
      await retrying(() => hostJson.request("POST", resourcePath("v1", "pods", rawNamespace(i)), { body }));
    }),
  );
  const raw = await timed("raw", worker, async () => {
    await pool(interleaved(rawJobs), CONCURRENCY);
    await waitFor(() => rawReady.size >= N || undefined, {
      timeoutMs: TIMEOUT_MINUTES * 60_000,
      intervalMs: 50,
      description: `${N} raw pods Ready`,
    });
    return rawReady;
  });
  const workerHwmBefore = procStatusMib(worker.process.pid, "VmHWM");

  // The raw Pods go, so the tenant run starts from the same host.
  const deleteFrom = performance.now();
  for (let i = 0; i < T; i++)
    await hostJson.request("DELETE", resourcePath("v1", "namespaces", undefined, rawNamespace(i)));
  await waitFor(
    async () => {
      for (let i = 0; i < T; i++) {
        const gone = await hostJson
          .request("GET", resourcePath("v1", "namespaces", undefined, rawNamespace(i)))
          .then(() => false)
          .catch((err: unknown) => (err as { code?: unknown }).code === 404);
        if (!gone) return undefined;
      }
      return true;
    },
    { timeoutMs: 15 * 60_000, intervalMs: 1_000, description: "raw namespaces deleted" },
  );
  const deleteSeconds = (performance.now() - deleteFrom) / 1000;
  const tenantSettled = await settle({ maxBusyCores: resting + 0.2, timeoutMs: 90_000 });

  const tenantJobs = tenants.map((t, i) =>
    Array.from({ length: P }, (_, n) => async () => {
      const name = `p-${n}`;
      created.set(`${NS}/${name}@${t.name}`, performance.now());
      await retrying(() => clients[i]!.request("POST", resourcePath("v1", "pods", NS), { body: tenantPod(name) }));
    }),
  );
  const tenant = await timed("tenant", worker, async () => {
    await pool(interleaved(tenantJobs), CONCURRENCY);
    await waitFor(() => tenantReady.size >= N || undefined, {
      timeoutMs: TIMEOUT_MINUTES * 60_000,
      intervalMs: 50,
      description: `${N} tenant pods Ready`,
    });
    return tenantReady;
  });
  const workerHwm = procStatusMib(worker.process.pid, "VmHWM");
  const workerRss = procStatusMib(worker.process.pid, "VmRSS");

  // The baseline must be the same Pods: each copy's spec against its raw Pod's.
  let same = 0;
  const differing: string[] = [];
  for (const [key, copy] of copySpecs) {
    if (rawSpecs.get(key) === copy) same++;
    else differing.push(key);
  }

  const hostLat: number[] = [];
  const totalLat: number[] = [];
  for (const [key, at] of tenantReady) {
    const seen = hostSeen.get(key);
    const hr = hostReady.get(key);
    const c = created.get(key);
    if (seen !== undefined && hr !== undefined) hostLat.push(hr - seen);
    if (c !== undefined) totalLat.push(at - c);
  }
  const rawLat: number[] = [];
  for (const [key, at] of rawReady) {
    const c = rawCreated.get(key);
    if (c !== undefined) rawLat.push(at - c);
  }
  const metrics = (await worker.probe("/metrics")).body;
  const backSyncQuantile = (q: number) =>
    histogramQuantile(metrics, "tenantplane_sync_backsync_latency_seconds", { kind: "Pod" }, q) * 1000;
  const row = (what: string, v: number[]) =>
    `${what.padEnd(52)} ${ms(pct(v, 50)).padStart(9)} ${ms(pct(v, 99)).padStart(9)} ${ms(Math.max(...v)).padStart(9)}   n=${v.length}`;
  const rawRate = N / raw.seconds;
  const tenantRate = N / tenant.seconds;
  console.log(
    `\nback-sync, ${T} tenants x ${P} pods (${N} pods on ${nodes} kwok nodes of ${podsPerNode} pods), one sync worker, concurrency ${CONCURRENCY}`,
  );
  console.log(`${"".padEnd(52)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"max".padStart(9)}`);
  console.log(row("raw: host create -> Ready (host watch)", rawLat));
  console.log(row("tenant: tenant create -> tenant Ready", totalLat));
  console.log(row("  host: copy created -> copy Ready", hostLat));
  console.log(
    `${"  back-sync (worker histogram): host change -> tenant write".padEnd(52)} ${ms(backSyncQuantile(0.5)).padStart(9)} ${ms(backSyncQuantile(0.99)).padStart(9)}         -   (every Pod status write, bucket-interpolated)`,
  );
  console.log(
    `throughput, first create -> last Ready: raw ${raw.seconds.toFixed(1)} s = ${rawRate.toFixed(1)} Pods/s; tenant ${tenant.seconds.toFixed(1)} s = ${tenantRate.toFixed(1)} Pods/s`,
  );
  console.log(`ratio tenant / raw throughput   ${(tenantRate / rawRate).toFixed(2)}x (target >= 0.6x)`);
  console.log(`ratio tenant p99 / raw p99      ${(pct(totalLat, 99) / pct(rawLat, 99)).toFixed(2)}x (target <= 2x)`);
  console.log(
    `worker peak RSS (VmHWM) ${workerHwm.toFixed(0)} MiB (${workerHwmBefore.toFixed(0)} MiB before the tenant run; RSS now ${workerRss.toFixed(0)} MiB)`,
  );
  for (const w of [raw, tenant]) {
    console.log(`CPU in the ${w.label} window (${w.seconds.toFixed(1)} s; ${w.machine}):`);
    console.log(`  ${w.cpu}`);
    console.log(`  this bench process (client and watches) ${w.benchCpuSeconds.toFixed(2)}s, within "other node"`);
  }
  console.log(
    `before each window (resting level ${resting.toFixed(2)} cores + 0.2): raw ${formatSettled(rawSettled)}, tenant ${formatSettled(tenantSettled)} (raw Pods deleted in ${deleteSeconds.toFixed(1)} s)`,
  );
  console.log(`worker ${workerSummary(metrics)}`);
  console.log(
    `host copies with the raw Pod's spec: ${same}/${copySpecs.size}` +
      (differing.length > 0 ? ` (differs: ${differing.slice(0, 3).join(", ")})` : ""),
  );
  console.log(`reproduce: ${command}`);
} finally {
  for (const w of watches) w.stop();
  await fleet.stop();
  for (const s of standIns) await s.stop();
  await nats.stop();
  await host.stop();
}

function tenantPod(name: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS, labels: { app: "bench" } },
    spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
  };
}

/**
 * The host copies the worker would write for the tenant run's Pods, as plain host Pods in
 * raw-<i>: each Pod as its tenant API stores it (a dry-run create: defaults, the token
 * volume), translated as the worker plans it (the profile's rules, the tenant's Pod
 * environment, every kind synced), without tenantplane's labels and annotations. Makes the
 * namespaces, with the tenant namespace's Pod Security labels, quota and limit range.
 */
async function rawPods(clients: JsonClient[]): Promise<RawObject[][]> {
  const rules = compileHostRules(IsolationProfileSpecSchema.parse(profileSpec));
  const syncedKinds = defaultSyncPolicySpec.toHost.map((r) => r.kind);
  const out: RawObject[][] = [];
  for (const [i, t] of tenants.entries()) {
    const ns = rawNamespace(i);
    const tenantNs = await hostJson.request<RawObject>(
      "GET",
      resourcePath("v1", "namespaces", undefined, `tp-${t.name}`),
    );
    const labels = Object.fromEntries(
      Object.entries(tenantNs.metadata.labels ?? {}).filter(([k]) => k.startsWith("pod-security.kubernetes.io/")),
    );
    await hostJson.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels } },
    });
    for (const [plural, kind, name] of [
      ["resourcequotas", "ResourceQuota", "tenantplane-quota"],
      ["limitranges", "LimitRange", "tenantplane-limits"],
    ] as const) {
      const source = await hostJson.request<{ spec: unknown }>("GET", resourcePath("v1", plural, `tp-${t.name}`, name));
      await hostJson.request("POST", resourcePath("v1", plural, ns), {
        body: { apiVersion: "v1", kind, metadata: { name }, spec: source.spec },
      });
    }
    await waitForTenantServiceAccount(hostJson, ns);
    const services = await hostJson.request<{ items: RawObject[] }>(
      "GET",
      resourcePath("v1", "services", `tp-${t.name}`),
    );
    const podEnvironment = podEnvironmentFrom(
      services.items.map((s) => ({ ...s, kind: "Service" })),
      t.name,
    );
    if (podEnvironment === "unknown") throw new Error(`tenant ${t.name} has no API or DNS Service address yet`);
    const bodies: RawObject[] = Array.from({ length: P });
    await pool(
      Array.from({ length: P }, (_, n) => async () => {
        const stored = await retrying(() =>
          clients[i]!.request<RawObject>("POST", resourcePath("v1", "pods", NS), {
            query: { dryRun: "All" },
            body: tenantPod(`p-${n}`),
          }),
        );
        const parsed = parseTenantObject({ ...stored, apiVersion: "v1", kind: "Pod" });
        if (!parsed.ok) throw new Error(parsed.problem);
        const translation = translate(parsed.object, t.name, { rules, syncedKinds, podEnvironment });
        if (translation.refusals.length > 0) throw new Error(JSON.stringify(translation.refusals));
        const pod = translation.object as RawObject;
        bodies[n] = {
          ...pod,
          metadata: {
            name: pod.metadata.name,
            namespace: ns,
            labels: { ...withoutTenantplane(pod.metadata.labels), [RAW_LABEL]: "raw" },
            annotations: withoutTenantplane(pod.metadata.annotations),
          },
        };
      }),
      CONCURRENCY,
    );
    out.push(bodies);
  }
  return out;
}

function withoutTenantplane(map: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(map ?? {}).filter(([k]) => !k.includes("tenantplane.io") && k !== "app.kubernetes.io/managed-by"),
  );
}

/** One job list per tenant, interleaved so the tenants start together. */
function interleaved(perTenant: (() => Promise<unknown>)[][]): (() => Promise<unknown>)[] {
  const out: (() => Promise<unknown>)[] = [];
  for (let n = 0; n < Math.max(...perTenant.map((l) => l.length)); n++) {
    for (const list of perTenant) if (list[n] !== undefined) out.push(list[n]!);
  }
  return out;
}

interface Window {
  label: string;
  /** First create -> last Ready. */
  seconds: number;
  cpu: string;
  machine: string;
  benchCpuSeconds: number;
}

/**
 * Runs one phase, reporting progress every 30 s (Pods Ready, the worker's RSS and queued keys,
 * who used the CPU in the last interval: what a run that does not finish is doing); returns
 * its window. A phase that fails prints its window so far first.
 */
async function timed(label: string, worker: RunningService, run: () => Promise<Map<string, number>>): Promise<Window> {
  const cpuFrom = cpuSnapshot();
  const machineFrom = machineTicks();
  const benchFrom = process.cpuUsage();
  const started = performance.now();
  const windowSoFar = (): Omit<Window, "seconds"> => {
    const used = process.cpuUsage(benchFrom);
    return {
      label,
      cpu: formatCpu(cpuBetween(cpuFrom, cpuSnapshot())),
      machine: formatMachine(machineFrom, machineTicks()),
      benchCpuSeconds: (used.user + used.system) / 1e6,
    };
  };
  let last: { cpu: CpuSnapshot; machine: MachineTicks } = { cpu: cpuFrom, machine: machineFrom };
  const timer = setInterval(() => {
    void (async () => {
      const now = { cpu: cpuSnapshot(), machine: machineTicks() };
      const counts =
        label === "raw"
          ? `Ready ${rawReady.size}/${N}`
          : `created ${created.size}, host copies ${hostSeen.size}, host Ready ${hostReady.size}, tenant Ready ${tenantReady.size}/${N}`;
      const queued = await worker
        .probe("/metrics")
        .then((m) => String(metricSum(m.body, "tenantplane_sync_queue_depth")))
        .catch(() => "?");
      console.log(
        `[${label} +${((performance.now() - started) / 1000).toFixed(0)} s] ${counts}; worker RSS ${procStatusMib(worker.process.pid, "VmRSS").toFixed(0)} MiB, ${queued} keys queued;` +
          ` last 30 s: ${formatMachine(last.machine, now.machine)}, ${formatCpu(cpuBetween(last.cpu, now.cpu), 0.3)}`,
      );
      last = now;
    })();
  }, 30_000);
  try {
    const readyAt = await run();
    return { ...windowSoFar(), seconds: (Math.max(...readyAt.values()) - started) / 1000 };
  } catch (err) {
    const w = windowSoFar();
    console.log(`${label} run failed after ${((performance.now() - started) / 1000).toFixed(0)} s (${w.machine}):`);
    console.log(`  CPU: ${w.cpu}`);
    console.log(`  worker peak RSS (VmHWM) ${procStatusMib(worker.process.pid, "VmHWM").toFixed(0)} MiB`);
    const metrics = await worker.probe("/metrics").catch(() => undefined);
    if (metrics !== undefined) console.log(`  worker ${workerSummary(metrics.body)}`);
    throw err;
  } finally {
    clearInterval(timer);
  }
}

/** The sum of a metric's samples (every label set; a histogram's `_sum` or `_count` by its full name). */
function metricSum(metrics: string, name: string, label = ""): number {
  return metrics
    .split("\n")
    .filter((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(label))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
}

/** Where the worker's writes spent their time, by stage, and its back-sync writes. */
function workerSummary(metrics: string): string {
  const stages = ["plan", "tenant_budget", "host_budget", "request"]
    .map((stage) => {
      const seconds = metricSum(metrics, "tenantplane_sync_write_stage_seconds_sum", `stage="${stage}"`);
      const count = metricSum(metrics, "tenantplane_sync_write_stage_seconds_count", `stage="${stage}"`);
      return `${stage} ${seconds.toFixed(1)} s/${count}`;
    })
    .join(", ");
  return (
    `write stages (seconds summed / writes): ${stages}; back-sync writes ${metricSum(metrics, "tenantplane_sync_backsync_writes_total")},` +
    ` failures ${metricSum(metrics, "tenantplane_sync_backsync_failures_total")}; keys queued ${metricSum(metrics, "tenantplane_sync_queue_depth")}`
  );
}

/** Retries what a starved machine throws (resets, timeouts, 429/5xx); a create answered 409 after a retry had landed. */
async function retrying<R>(request: () => Promise<R>): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt > 0 && code === 409) return undefined as R;
      const transient = typeof code !== "number" || code === 429 || code >= 500;
      if (!transient || attempt >= 8) throw err;
      await new Promise((r) => setTimeout(r, 250 * 2 ** Math.min(attempt, 4)));
    }
  }
}

/** A host Pod's spec as text, without what the host decides per Pod (its node, the token volume's random suffix). */
function specText(pod: RawObject): string {
  const { nodeName: _node, ...spec } = (pod["spec"] ?? {}) as Record<string, unknown>;
  return JSON.stringify(spec).replace(/kube-api-access-[a-z0-9]{5}/g, "kube-api-access-*");
}

function ready(pod: RawObject): boolean {
  const conditions = (pod["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
  return conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}
