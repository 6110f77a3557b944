// Isolation migration on the real test stack: TENANTS tenants each running DEPLOYMENTS
// Deployments (PODS Pods in all, each Deployment with a PodDisruptionBudget) in Shared mode, all
// switched to Dedicated at once (each tenant's own labelled kwok nodes), against a baseline in the
// same run: the same Deployments applied straight into as many host namespaces, then moved by hand
// the way an operator would (the pod template patched with a nodeSelector for labelled nodes of
// the same kind: a `kubectl rollout restart` with a node selector change).
// For each tenant (or host namespace), timed by the benchmark:
//   complete      mode change -> status.isolation.migration.phase Complete, read from the host API
//                 (baseline: patch -> every Deployment's rollout complete, read from the host API);
//   unavailable   Pod-unavailable seconds: sum over its Deployments of (desired - available
//                 replicas), integrated over time, sampled every 200 ms from the tenant API
//                 (baseline: from the host API) until the move is complete and every replica is
//                 available again;
// the ratios tenant / baseline, and CPU per process in each run.
// The disruption budget of each Deployment allows what its own rolling update allows:
// maxUnavailable 25% of its replicas rounded down, at least 1.
//
//   npm run build && npm run bench:migration          (TENANTS=10 PODS=50 DEPLOYMENTS=5 by default)
import { CoreV1Api, type CoreV1Event, type KubernetesObject } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient, Objects } from "@tenantplane/kube";
import { ANNOTATION_VIRTUAL_NAME, LABEL_MANAGED_BY, LABEL_TENANT, MANAGED_BY } from "@tenantplane/mapping";
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
  type TenantApiServer,
} from "../test/harness/index.js";
import { cpuBetween, cpuSnapshot, formatCpu, formatMachine, formatSettled, machineTicks, settle } from "./cpu-usage.js";
import { pct, pool } from "./stats.js";

const T = Number(process.env.TENANTS ?? 10);
const P = Number(process.env.PODS ?? 50);
const D = Number(process.env.DEPLOYMENTS ?? 5);
const ADDRESS_BASE = Number(process.env.ADDRESS_BASE ?? 105);
const TIMEOUT_MS = Number(process.env.TIMEOUT_SECONDS ?? 600) * 1000;
const command = `npm run build && ${T === 10 ? "" : `TENANTS=${T} `}${P === 50 ? "" : `PODS=${P} `}${D === 5 ? "" : `DEPLOYMENTS=${D} `}${ADDRESS_BASE === 105 ? "" : `ADDRESS_BASE=${ADDRESS_BASE} `}npm run bench:migration`;
if (T < 1 || T > 10 || ADDRESS_BASE < 2 || ADDRESS_BASE + T > 254)
  throw new Error("TENANTS must be 1-10, stand-ins on 127.0.0.ADDRESS_BASE.. (105 by default) within 127.0.0.2-254");
if (D < 1 || P < D || P % D !== 0) throw new Error("PODS must be a multiple of DEPLOYMENTS (PODS=50 DEPLOYMENTS=5)");
const R = P / D;
const BUDGET = Math.max(1, Math.floor(R / 4));
const NS = "app";
const PART_OF = "bench-migration";
const POOL_LABEL = "bench.tenantplane.io/pool";
const SAMPLE_MS = 200;

type Obj = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
interface DeploymentList {
  items: {
    metadata: { name: string; namespace: string; generation?: number };
    spec: { replicas?: number };
    status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
  }[];
}
interface Migration {
  from?: string;
  to?: string;
  phase?: string;
  moved?: number;
  left?: number;
  blocked?: unknown[];
  startedAt?: string;
  finishedAt?: string;
}

// Nodes: the shared ones hold both runs' Pods before the move (and the tenants' control planes),
// with room for a rollout's surge; then one pool of labelled nodes per tenant and per host
// namespace. The scheduler spreads Shared Pods over the labelled nodes too (nothing keeps them off
// until a tenant's nodes are tainted), so a pool keeps room for that as well.
const perPool = Math.ceil((P * 1.25) / 60);
const shared = Math.ceil((2 * T * P * 1.25 + 4 * T) / 90);
const tenants = Array.from({ length: T }, (_, i) => ({
  name: `mig-${i}`,
  address: `127.0.0.${ADDRESS_BASE + i}`,
  pool: `tenant-${i}`,
  nodes: Array.from({ length: perPool }, (_, n) => `kwok-node-${shared + i * perPool + n}`),
}));
const hostSides = Array.from({ length: T }, (_, i) => ({
  namespace: `mig-host-${i}`,
  pool: `host-${i}`,
  nodes: Array.from({ length: perPool }, (_, n) => `kwok-node-${shared + (T + i) * perPool + n}`),
}));

const toolsDir = await buildTools();
const host = await startHostCluster({ name: "bench-migration", toolsDir, nodes: shared + 2 * T * perPool });
const nats = await startNats({ toolsDir });
const hostObjects = new Objects(host.kubeConfig, "kubectl");
const hostClient = new JsonClient(host.kubeConfig);
const core = host.kubeConfig.makeApiClient(CoreV1Api);
await installCrds(host.kubeConfig, crdManifests());
await hostObjects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  env: { LOG_LEVEL: "warn", POD_NAMESPACE: "tenantplane-system" },
});
const standIns: TenantApiServer[] = [];

try {
  await Promise.all(
    (["watcher", "provisioner", "isolation", "recorder", "sync-worker"] as const).map((n) =>
      fleet.start(
        n,
        n === "sync-worker"
          ? {
              PARTITIONS: "32",
              LEASE_TTL_SECONDS: "3",
              HOST_QPS: "1000",
              HOST_BURST: "1000",
              TENANT_WRITE_QPS: "500",
              TENANT_WRITE_BURST: "500",
            }
          : {},
      ),
    ),
  );
  // The operator labels the nodes it sets aside: one pool per tenant, one per host namespace.
  for (const side of [...tenants, ...hostSides]) {
    for (const node of side.nodes) {
      await hostObjects.mergePatch(
        { apiVersion: "v1", kind: "Node", metadata: { name: node } },
        { metadata: { labels: { [POOL_LABEL]: side.pool } } },
      );
    }
  }
  // Room for every Pod and a rollout's surge (the built-in profile's quota is sized for a few).
  await hostObjects.apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "IsolationProfile",
    metadata: { name: "bench-migration" },
    spec: {
      resourceQuota: {
        hard: {
          pods: "1000",
          "requests.cpu": "1000",
          "requests.memory": "1000Gi",
          "limits.cpu": "1000",
          "limits.memory": "1000Gi",
        },
      },
    },
  } as KubernetesObject);
  await pool(
    tenants.map((t) => async () => {
      standIns.push(
        await provisionTenant(host.kubeConfig, t, { isolationProfileRef: { name: "bench-migration" } }, { toolsDir }),
      );
    }),
    3,
  );
  for (const t of tenants) await waitForSynced(host.kubeConfig, t.name, 300_000);
  const tenantClients = await Promise.all(tenants.map((t) => tenantJsonClient(host.kubeConfig, t.name)));
  await Promise.all([
    ...tenantClients.map(async (api) => {
      await api.request("POST", "/api/v1/namespaces", {
        body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
      });
      await waitForTenantServiceAccount(api, NS);
    }),
    ...hostSides.map(async ({ namespace }) => {
      await hostObjects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
      await waitFor(() => hostObjects.get("v1", "ServiceAccount", "default", namespace), {
        timeoutMs: 60_000,
        description: `ServiceAccount ${namespace}/default`,
      });
    }),
  ]);
  const applyApp = async (post: (path: string, body: Obj) => Promise<unknown>, namespace: string) => {
    for (let d = 0; d < D; d++) {
      const labels = { app: `web-${d}`, "app.kubernetes.io/part-of": PART_OF };
      await post(`/apis/apps/v1/namespaces/${namespace}/deployments`, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: `web-${d}`, namespace, labels },
        spec: {
          replicas: R,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: { terminationGracePeriodSeconds: 1, containers: [{ name: "web", image: "nginx:1.27" }] },
          },
        },
      });
      await post(`/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`, {
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name: `web-${d}`, namespace },
        spec: { maxUnavailable: BUDGET, selector: { matchLabels: labels } },
      });
    }
  };
  await Promise.all([
    ...tenantClients.map((api) => applyApp((path, body) => api.request("POST", path, { body }), NS)),
    ...hostSides.map(({ namespace }) =>
      applyApp((path, body) => hostClient.request("POST", path, { body }), namespace),
    ),
  ]);
  const hostDeployments = () =>
    hostClient.request<DeploymentList>("GET", "/apis/apps/v1/deployments", {
      query: { labelSelector: `app.kubernetes.io/part-of=${PART_OF}` },
    });
  const tenantDeployments = (i: number) =>
    tenantClients[i]!.request<DeploymentList>("GET", `/apis/apps/v1/namespaces/${NS}/deployments`);
  await waitFor(
    async () => {
      const lists = [await hostDeployments(), ...(await Promise.all(tenants.map((_, i) => tenantDeployments(i))))];
      const items = lists.flatMap((l) => l.items);
      return items.length === 2 * T * D && items.every((d) => unavailable(d) === 0) ? true : undefined;
    },
    { timeoutMs: TIMEOUT_MS, intervalMs: 1000, description: `${2 * T * P} Pods available before the moves` },
  );

  // Baseline: every host namespace's Deployments patched at once onto its labelled nodes.
  const quietHost = await settle({ timeoutMs: 60_000 });
  const hostCpu = cpuSnapshot();
  const hostMachine = machineTicks();
  const hostStart = performance.now();
  await Promise.all(
    hostSides.flatMap(({ namespace, pool: p }) =>
      Array.from({ length: D }, (_, d) =>
        hostObjects.mergePatch(
          { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: `web-${d}`, namespace } },
          { spec: { template: { spec: { nodeSelector: { [POOL_LABEL]: p } } } } },
        ),
      ),
    ),
  );
  const hostRun = await sampleUntilDone(
    hostStart,
    T,
    async () => {
      const list = await hostDeployments();
      return hostSides.map(({ namespace }) => list.items.filter((d) => d.metadata.namespace === namespace));
    },
    async (items) => items.map((ds) => ds.length === D && ds.every(rolledOut)),
    async () => `host Deployments: ${JSON.stringify((await hostDeployments()).items.map(brief))}`,
  );
  const hostCpuUsed = cpuBetween(hostCpu, cpuSnapshot());
  const hostMachineLine = formatMachine(hostMachine, machineTicks());

  // The tenants: every TenantCluster switched to Dedicated at once.
  const quietTenant = await settle({ timeoutMs: 60_000 });
  const tenantCpu = cpuSnapshot();
  const tenantMachine = machineTicks();
  const tenantStart = performance.now();
  await Promise.all(
    tenants.map((t) =>
      hostObjects.mergePatch(
        { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name: t.name } },
        { spec: { isolation: { mode: "Dedicated", dedicated: { nodeSelector: { [POOL_LABEL]: t.pool } } } } },
      ),
    ),
  );
  const migrations: (Migration | undefined)[] = tenants.map(() => undefined);
  const tenantRun = await sampleUntilDone(
    tenantStart,
    T,
    () => Promise.all(tenants.map(async (_, i) => (await tenantDeployments(i)).items)),
    async () => {
      const list = await hostClient.request<{ items: Obj[] }>("GET", "/apis/tenantplane.io/v1alpha1/tenantclusters");
      return tenants.map((t, i) => {
        const tc = list.items.find((o) => o.metadata?.name === t.name);
        const m = (tc?.status?.["isolation"] as { migration?: Migration } | undefined)?.migration;
        migrations[i] = m;
        return m?.to === "Dedicated" && m.phase === "Complete";
      });
    },
    () => stuck(migrations),
  );
  const tenantCpuUsed = cpuBetween(tenantCpu, cpuSnapshot());
  const tenantMachineLine = formatMachine(tenantMachine, machineTicks());

  // Read back from the host where the tenants' Pods run now.
  const placed = await Promise.all(
    tenants.map(async (t) => {
      const copies = await hostObjects.list<Obj>("v1", "Pod", {
        namespace: `tp-${t.name}`,
        labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${t.name}`,
      });
      const web = copies.filter((c) => c.metadata?.annotations?.[ANNOTATION_VIRTUAL_NAME]?.startsWith("web-"));
      return { on: web.filter((c) => t.nodes.includes(String(c.spec?.["nodeName"]))).length, of: web.length };
    }),
  );

  const s = (v: number) => `${v.toFixed(1)} s`;
  const col = (v: string, w = 12) => v.padStart(w);
  console.log(
    `\nisolation migration: ${T} tenants x ${D} Deployments of ${R} Pods (${P} Pods a tenant, PDB maxUnavailable ${BUDGET}) Shared -> Dedicated,`,
  );
  console.log(
    `against the same Deployments in ${T} host namespaces moved by a pod-template nodeSelector patch; ${shared} shared kwok nodes, ${perPool} labelled node(s) per tenant and per host namespace; one sync worker`,
  );
  console.log(
    `${"".padEnd(10)}${col("complete")}${col("unavail.")}${col("host done")}${col("host unav.")}${col("ratio done")}${col("ratio unav.")}  server migration (startedAt -> finishedAt), Pods on its nodes`,
  );
  tenants.forEach((t, i) => {
    const m = migrations[i];
    const server =
      m?.startedAt && m.finishedAt
        ? `${s((Date.parse(m.finishedAt) - Date.parse(m.startedAt)) / 1000)}, moved ${m.moved ?? "-"} left ${m.left ?? "-"}`
        : "-";
    console.log(
      `${t.name.padEnd(10)}${col(s(tenantRun.done[i]!))}${col(`${tenantRun.unavailable[i]!.toFixed(1)} Pod-s`)}${col(s(hostRun.done[i]!))}${col(`${hostRun.unavailable[i]!.toFixed(1)} Pod-s`)}${col(`${(tenantRun.done[i]! / hostRun.done[i]!).toFixed(2)}x`)}${col(ratio(tenantRun.unavailable[i]!, hostRun.unavailable[i]!))}  ${server}, ${placed[i]!.on}/${placed[i]!.of}`,
    );
  });
  const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
  console.log(
    `overall: every tenant Complete ${s(tenantRun.wall)} after the mode change (per tenant p50 ${s(pct(tenantRun.done, 50))}, max ${s(Math.max(...tenantRun.done))}); every host rollout complete ${s(hostRun.wall)} after the patch (p50 ${s(pct(hostRun.done, 50))}): ${(tenantRun.wall / hostRun.wall).toFixed(2)}x`,
  );
  console.log(
    `Pod-unavailable seconds: tenants ${sum(tenantRun.unavailable).toFixed(1)} (${(sum(tenantRun.unavailable) / T).toFixed(1)} a tenant), host ${sum(hostRun.unavailable).toFixed(1)} (${(sum(hostRun.unavailable) / T).toFixed(1)} a namespace): ${ratio(sum(tenantRun.unavailable), sum(hostRun.unavailable))}; fewest available replicas of a Deployment: tenants ${tenantRun.fewest}, host ${hostRun.fewest} (of ${R}); ${tenantRun.samples} and ${hostRun.samples} samples`,
  );
  console.log(`baseline run (${formatSettled(quietHost)} before): CPU ${formatCpu(hostCpuUsed)}; ${hostMachineLine}`);
  console.log(
    `tenant run (${formatSettled(quietTenant)} before): CPU ${formatCpu(tenantCpuUsed)}; ${tenantMachineLine}`,
  );
  console.log(`reproduce: ${command}`);
} finally {
  await fleet.stop();
  for (const s of standIns) await s.stop();
  await nats.stop();
  await host.stop();
}

function ratio(a: number, b: number): string {
  return b > 0 ? `${(a / b).toFixed(2)}x` : a > 0 ? "inf" : "-";
}

function unavailable(d: DeploymentList["items"][number]): number {
  return Math.max(0, (d.spec.replicas ?? 1) - (d.status?.availableReplicas ?? 0));
}

/** A Deployment's rollout complete, as `kubectl rollout status` tells it. */
function rolledOut(d: DeploymentList["items"][number]): boolean {
  const want = d.spec.replicas ?? 1;
  return (
    (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) &&
    d.status?.updatedReplicas === want &&
    d.status?.replicas === want &&
    d.status?.availableReplicas === want
  );
}

function brief(d: DeploymentList["items"][number]) {
  return `${d.metadata.namespace}/${d.metadata.name} want ${d.spec.replicas} updated ${d.status?.updatedReplicas ?? 0} total ${d.status?.replicas ?? 0} available ${d.status?.availableReplicas ?? 0}`;
}

/**
 * Samples every 200 ms until each of `n` units (tenant or host namespace) is done (`isDone`) with
 * every replica available: per unit, seconds from `start` to done and Pod-unavailable seconds
 * (the sum of desired - available over its Deployments, integrated over the samples' intervals).
 * On timeout, throws with what `describe` says is stuck.
 */
async function sampleUntilDone(
  start: number,
  n: number,
  deployments: () => Promise<DeploymentList["items"][]>,
  isDone: (items: DeploymentList["items"][]) => Promise<boolean[]>,
  describe: () => Promise<string>,
): Promise<{ done: number[]; unavailable: number[]; wall: number; fewest: number; samples: number }> {
  const done: (number | undefined)[] = Array.from({ length: n }, () => undefined);
  const settled: boolean[] = Array.from({ length: n }, () => false);
  const unavail: number[] = Array.from({ length: n }, () => 0);
  let last = start;
  let fewest = R;
  let samples = 0;
  for (;;) {
    const tick = performance.now();
    const items = await deployments();
    const now = performance.now();
    const finished = await isDone(items);
    samples++;
    items.forEach((ds, i) => {
      if (settled[i]) return;
      const missing = ds.reduce((a, d) => a + unavailable(d), 0);
      for (const d of ds) fewest = Math.min(fewest, d.status?.availableReplicas ?? 0);
      // The interval up to this sample counts at the shortfall seen now.
      unavail[i]! += (missing * (now - last)) / 1000;
      if (finished[i] && done[i] === undefined) done[i] = (now - start) / 1000;
      if (done[i] !== undefined && missing === 0) settled[i] = true;
    });
    last = now;
    if (settled.every(Boolean)) {
      const times = done as number[];
      return { done: times, unavailable: unavail, wall: Math.max(...times), fewest, samples };
    }
    if (now - start > TIMEOUT_MS) {
      const waiting = settled.map((ok, i) => (ok ? undefined : i)).filter((i) => i !== undefined);
      throw new Error(
        `not done ${TIMEOUT_MS / 1000} s after the change: units ${waiting.join(", ")} (done: ${done.map((d) => (d === undefined ? "-" : d.toFixed(1))).join(" ")})\n${await describe()}`,
      );
    }
    await new Promise((r) => setTimeout(r, Math.max(0, SAMPLE_MS - (performance.now() - tick))));
  }
}

/** What each unfinished tenant's migration shows: status.isolation, its Deployments, its last Decisions (Events). */
async function stuck(migrations: (Migration | undefined)[]): Promise<string> {
  const lines: string[] = [];
  for (const [i, t] of tenants.entries()) {
    const m = migrations[i];
    if (m?.to === "Dedicated" && m.phase === "Complete") continue;
    const tc = await hostObjects.get<Obj>("tenantplane.io/v1alpha1", "TenantCluster", t.name, undefined, {
      fresh: true,
    });
    lines.push(`${t.name} status.isolation: ${JSON.stringify(tc?.status?.["isolation"])}`);
    const tenant = await tenantJsonClient(host.kubeConfig, t.name);
    const ds = await tenant.request<DeploymentList>("GET", `/apis/apps/v1/namespaces/${NS}/deployments`);
    lines.push(`  tenant Deployments: ${ds.items.map(brief).join("; ")}`);
    const events = await core.listEventForAllNamespaces({
      fieldSelector: `involvedObject.kind=TenantCluster,involvedObject.name=${t.name}`,
    });
    for (const e of events.items.slice(-10) as CoreV1Event[]) lines.push(`  ${e.reason}: ${e.message}`);
  }
  return lines.join("\n");
}
