// Measures, on the real test stack, how long a TenantCluster takes from apply to phase
// Ready, against a baseline measured in the same run: a bare StatefulSet of the same shape
// (one replica, one volume claim) reaching a ready replica, which is the floor the host
// cluster itself sets. Also reports each service's idle memory against a bare Node.js process.
//
//   npm run build && npm run bench:ready            (RUNS=7 npm run bench:ready for more samples)
import { spawn } from "node:child_process";
import {
  AppsV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import {
  ServiceFleet,
  buildTools,
  installCrds,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  waitFor,
  type TenantApiServer,
} from "../test/harness/index.js";
import { procStatusMib } from "./proc-status.js";

const RUNS = Number(process.env.RUNS ?? 5);
const command = "npm run build && npm run bench:ready";

const toolsDir = await buildTools();
const host = await startHostCluster({ name: "bench", toolsDir });
const nats = await startNats({ toolsDir });
const objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
const core = host.kubeConfig.makeApiClient(CoreV1Api);
const apps = host.kubeConfig.makeApiClient(AppsV1Api);
await installCrds(host.kubeConfig, crdManifests());
await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  env: { LOG_LEVEL: "info", POD_NAMESPACE: "tenantplane-system" },
});
const services = await Promise.all(
  (["watcher", "provisioner", "isolation", "recorder"] as const).map((name) => fleet.start(name)),
);
const standIns: TenantApiServer[] = [];

try {
  const baseline: number[] = [];
  const tenant: number[] = [];
  const standIn: number[] = [];
  // Interleaved, so drift in machine load hits both series alike.
  for (let i = 0; i < RUNS; i++) {
    baseline.push(await bareStatefulSet(`bench-${i}`));
    const t = await tenantToReady(`bench-${i}`, `127.0.0.${40 + i}`);
    tenant.push(t.total);
    standIn.push(t.standIn);
  }
  await new Promise((r) => setTimeout(r, 10_000));
  const idle = await idleMemory(services.map((s) => ({ name: s.name, pid: s.process.pid })));

  const mb = median(baseline);
  const mt = median(tenant);
  const ms = median(standIn);
  console.log(`\nTenantCluster apply -> Ready (${RUNS} runs, median)`);
  console.log(`  baseline: bare StatefulSet ready       ${fmt(mb)}   runs ${baseline.map(fmt).join(" ")}`);
  console.log(`  tenantplane: apply -> phase Ready      ${fmt(mt)}   runs ${tenant.map(fmt).join(" ")}`);
  console.log(`    of which the stand-in API starting   ${fmt(ms)}`);
  console.log(`  ratio tenant / baseline                ${(mt / mb).toFixed(2)}x`);
  console.log(`  ratio (tenant - stand-in) / baseline   ${((mt - ms) / mb).toFixed(2)}x`);
  console.log(`\nIdle resident memory after ${RUNS} tenants (VmRSS)`);
  for (const row of idle.services) {
    console.log(
      `  ${row.name.padEnd(16)} ${row.mib.toFixed(1)} MiB   ${(row.mib / idle.baselineMib).toFixed(2)}x a bare node process (${idle.baselineMib.toFixed(1)} MiB)`,
    );
  }
  console.log(`\nreproduce: ${command}`);
} finally {
  await fleet.stop();
  for (const s of standIns) await s.stop();
  await nats.stop();
  await host.stop();
}

async function bareStatefulSet(name: string): Promise<number> {
  const ns = `base-${name}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  const started = performance.now();
  await apps.createNamespacedStatefulSet({
    namespace: ns,
    body: {
      metadata: { name: "app" },
      spec: {
        replicas: 1,
        serviceName: "app",
        podManagementPolicy: "Parallel",
        selector: { matchLabels: { app: "bench" } },
        template: {
          metadata: { labels: { app: "bench" } },
          spec: { containers: [{ name: "app", image: "rancher/k3s:v1.34.1-k3s1" }] },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data" },
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
          },
        ],
      },
    },
  });
  await waitFor(
    async () =>
      ((await apps.readNamespacedStatefulSet({ name: "app", namespace: ns })).status?.readyReplicas ?? 0) >= 1,
    { timeoutMs: 120_000, intervalMs: 100, description: `${ns} ready` },
  );
  return (performance.now() - started) / 1000;
}

async function tenantToReady(name: string, address: string): Promise<{ total: number; standIn: number }> {
  const started = performance.now();
  const tc = {
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name },
    spec: { controlPlane: { storage: { size: "1Gi" }, expose: { loadBalancer: { enabled: true } } } },
  } as KubernetesObject;
  await objects.patch(tc, undefined, undefined, "bench", true, PatchStrategy.ServerSideApply);
  // The harness plays the cloud load balancer and k3s as soon as their inputs exist.
  await setLoadBalancerIngress(host.kubeConfig, `tp-${name}`, "k3s", address);
  const standInStarted = performance.now();
  standIns.push(await startTenantStandIn(host.kubeConfig, name, address, { toolsDir }));
  const standIn = (performance.now() - standInStarted) / 1000;
  await waitFor(
    async () => {
      const t = (await objects.read({
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "TenantCluster",
        metadata: { name },
      })) as {
        status?: { phase?: string };
      };
      return t.status?.phase === "Ready";
    },
    { timeoutMs: 120_000, intervalMs: 100, description: `${name} Ready` },
  );
  return { total: (performance.now() - started) / 1000, standIn };
}

async function idleMemory(procs: { name: string; pid: number }[]) {
  const bare = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 2000));
  const baselineMib = procStatusMib(bare.pid!, "VmRSS");
  bare.kill();
  return { baselineMib, services: procs.map((p) => ({ name: p.name, mib: procStatusMib(p.pid, "VmRSS") })) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function fmt(seconds: number): string {
  return `${seconds.toFixed(2)}s`;
}
