// Back-sync latency on the real test stack: T tenants x P Pods created in the tenant APIs,
// one sync worker copying them to the host (kwok runs them) and writing their status back.
// For every Pod, timed by the benchmark's own watches:
//   host      host copy first seen -> host copy Ready (the host's own create-to-Ready latency);
//   total     tenant create request -> tenant Pod Ready.
// And what back-sync adds, from the sync worker's own histogram
// (tenantplane_sync_backsync_latency_seconds{kind="Pod"}: host change seen by the worker -> the
// tenant write that shows it): the benchmark's watches see the host and the tenant through
// different connections, so subtracting their timestamps measures the watches, not back-sync.
//
//   npm run build && npm run bench:back-sync          (TENANTS=10 PODS=100 by default)
import { CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient, resourcePath, startListWatch, type ListWatch, type RawObject } from "@tenantplane/kube";
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
import { histogramQuantile, ms, pct, pool } from "./stats.js";
import { createLogger } from "@tenantplane/runtime";

const T = Number(process.env.TENANTS ?? 10);
const P = Number(process.env.PODS ?? 100);
const ADDRESS_BASE = Number(process.env.ADDRESS_BASE ?? 160);
const command = `npm run build && TENANTS=${T} PODS=${P}${ADDRESS_BASE === 160 ? "" : ` ADDRESS_BASE=${ADDRESS_BASE}`} npm run bench:back-sync`;
if (T < 1 || T > 10 || ADDRESS_BASE < 2 || ADDRESS_BASE + T > 254)
  throw new Error("TENANTS must be 1-10, stand-ins on 127.0.0.ADDRESS_BASE.. (160 by default) within 127.0.0.2-254");
const NS = "bench";
const tenants = Array.from({ length: T }, (_, i) => ({ name: `bsync-${i}`, address: `127.0.0.${ADDRESS_BASE + i}` }));
// kwok nodes register 110 pods each.
const nodes = Math.max(1, Math.ceil((T * P) / 100));

const toolsDir = await buildTools();
const host = await startHostCluster({ name: "bench-back-sync", toolsDir, nodes });
const nats = await startNats({ toolsDir });
const objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
await installCrds(host.kubeConfig, crdManifests());
await host.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  env: { LOG_LEVEL: "info", POD_NAMESPACE: "tenantplane-system" },
});
const standIns: TenantApiServer[] = [];
const watches: ListWatch[] = [];
const created = new Map<string, number>();
const hostSeen = new Map<string, number>();
const hostReady = new Map<string, number>();
const tenantReady = new Map<string, number>();

try {
  await Promise.all((["watcher", "provisioner", "isolation", "recorder"] as const).map((n) => fleet.start(n)));
  const worker = await fleet.start("sync-worker", {
    LOG_LEVEL: "warn",
    PARTITIONS: "32",
    LEASE_TTL_SECONDS: "3",
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
      spec: {
        resourceQuota: {
          hard: {
            pods: "5000",
            "requests.cpu": "5000",
            "requests.memory": "5000Gi",
            "limits.cpu": "5000",
            "limits.memory": "5000Gi",
          },
        },
      },
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
      client: new JsonClient(host.kubeConfig),
      path: "/api/v1/pods",
      apiVersion: "v1",
      kind: "Pod",
      labelSelector: "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/kind=Pod",
      logger: createLogger("bench", "silent"),
      onEvent: (e) => {
        const now = performance.now();
        const key = `${e.object.metadata.annotations?.["tenantplane.io/virtual-namespace"]}/${e.object.metadata.annotations?.["tenantplane.io/virtual-name"]}@${e.object.metadata.labels?.["tenantplane.io/tenant"]}`;
        if (!hostSeen.has(key)) hostSeen.set(key, now);
        if (ready(e.object) && !hostReady.has(key)) hostReady.set(key, now);
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

  const started = performance.now();
  const jobs = tenants.flatMap((t, i) =>
    Array.from({ length: P }, (_, n) => async () => {
      const name = `p-${n}`;
      created.set(`${NS}/${name}@${t.name}`, performance.now());
      await clients[i]!.request("POST", resourcePath("v1", "pods", NS), {
        body: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name, namespace: NS, labels: { app: "bench" } },
          spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
        },
      });
    }),
  );
  // Interleave tenants so they start together.
  const order = jobs.map((_, k) => jobs[(k % T) * P + Math.floor(k / T)]!);
  await pool(order, 32);
  await waitFor(() => tenantReady.size >= T * P || undefined, {
    timeoutMs: 20 * 60_000,
    intervalMs: 250,
    description: `${T * P} tenant pods Ready`,
  });
  const wallSeconds = (performance.now() - started) / 1000;

  const hostLat: number[] = [];
  const backLat: number[] = [];
  const totalLat: number[] = [];
  for (const [key, at] of tenantReady) {
    const seen = hostSeen.get(key);
    const hr = hostReady.get(key);
    const c = created.get(key);
    if (seen !== undefined && hr !== undefined) hostLat.push(hr - seen);
    if (hr !== undefined) backLat.push(at - hr);
    if (c !== undefined) totalLat.push(at - c);
  }
  const metrics = (await worker.probe("/metrics")).body;
  const backSyncQuantile = (q: number) =>
    histogramQuantile(metrics, "tenantplane_sync_backsync_latency_seconds", { kind: "Pod" }, q) * 1000;
  const row = (what: string, v: number[]) =>
    `${what.padEnd(44)} ${ms(pct(v, 50)).padStart(9)} ${ms(pct(v, 99)).padStart(9)} ${ms(Math.max(...v)).padStart(9)}   n=${v.length}`;
  console.log(`\nback-sync latency, ${T} tenants x ${P} pods (${T * P} pods on ${nodes} kwok nodes), one sync worker`);
  console.log(`${"".padEnd(44)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"max".padStart(9)}`);
  console.log(row("host: copy created -> copy Ready", hostLat));
  console.log(
    `${"back-sync (worker histogram): host change -> tenant write".padEnd(44)} ${ms(backSyncQuantile(0.5)).padStart(9)} ${ms(backSyncQuantile(0.99)).padStart(9)}         -   (every Pod status write, bucket-interpolated)`,
  );
  console.log(row("bench watches: host Ready -> tenant Ready", backLat));
  console.log(row("total: tenant create -> tenant Ready", totalLat));
  console.log(`all ${T * P} tenant pods Ready ${wallSeconds.toFixed(1)} s after the first create`);
  console.log(`reproduce: ${command}`);
} finally {
  for (const w of watches) w.stop();
  await fleet.stop();
  for (const s of standIns) await s.stop();
  await nats.stop();
  await host.stop();
}

function ready(pod: RawObject): boolean {
  const conditions = (pod["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
  return conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}
