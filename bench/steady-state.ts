// The cost of a steady state, on the real test stack with the API server's audit log on:
// TENANTS Ready tenants (each with a stand-in tenant API server), nothing changing, the watcher
// resyncing every RESYNC seconds. Counts the host API requests tenantplane's services make per
// resync (by user agent in the audit log): writes, LISTs and the rest, per service.
//
//   npm run build && npm run bench:steady            (RESYNCS=5 for a longer window)
import { crdManifests } from "@tenantplane/api";
import { JsonClient } from "@tenantplane/kube";
import {
  ServiceFleet,
  agentOf,
  buildTools,
  installCrds,
  isWrite,
  readAudit,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  waitFor,
  type AuditRequest,
  type TenantApiServer,
} from "../test/harness/index.js";

const TENANTS = Number(process.env.TENANTS ?? 8);
const RESYNC_S = Number(process.env.RESYNC_SECONDS ?? 30);
const RESYNCS = Number(process.env.RESYNCS ?? 3);
const command = "npm run build && npm run bench:steady";
// Tenant API stand-ins listen on 127.0.0.20 and up.
const FIRST_ADDRESS = Number(process.env.ADDRESS_BASE ?? 20);

const toolsDir = await buildTools();
const host = await startHostCluster({ name: "bench-steady", toolsDir, auditLog: true });
const nats = await startNats({ toolsDir });
const api = new JsonClient(host.kubeConfig, { userAgent: "bench-observer/1" });
await installCrds(host.kubeConfig, crdManifests());
await api.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "tenantplane-system" } } });
const fleet = new ServiceFleet({
  kubeconfigPath: host.kubeconfigPath,
  natsUrl: nats.url,
  env: { LOG_LEVEL: "info", POD_NAMESPACE: "tenantplane-system" },
});
await fleet.start("watcher", { RESYNC_INTERVAL_SECONDS: String(RESYNC_S) });
await Promise.all((["provisioner", "isolation", "recorder"] as const).map((name) => fleet.start(name)));
const standIns: TenantApiServer[] = [];

try {
  const names = Array.from({ length: TENANTS }, (_, i) => `steady-${i}`);
  for (const [i, name] of names.entries()) {
    await api.request("PATCH", `/apis/tenantplane.io/v1alpha1/tenantclusters/${name}`, {
      query: { fieldManager: "bench", force: true },
      contentType: "application/apply-patch+yaml",
      body: {
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "TenantCluster",
        metadata: { name },
        spec: { controlPlane: { storage: { size: "1Gi" }, expose: { loadBalancer: { enabled: true } } } },
      },
    });
    const address = `127.0.0.${FIRST_ADDRESS + i}`;
    await setLoadBalancerIngress(host.kubeConfig, `tp-${name}`, "k3s", address);
    standIns.push(await startTenantStandIn(host.kubeConfig, name, address, { toolsDir }));
  }
  await waitFor(
    async () => {
      const list = await api.request<{ items: Array<{ status?: { phase?: string } }> }>(
        "GET",
        "/apis/tenantplane.io/v1alpha1/tenantclusters",
      );
      return list.items.filter((t) => t.status?.phase === "Ready").length === TENANTS;
    },
    { timeoutMs: 300_000, intervalMs: 1_000, description: `${TENANTS} tenants Ready` },
  );
  // One full resync to settle whatever the way to Ready left behind, then the window.
  await new Promise((r) => setTimeout(r, RESYNC_S * 1000 + 5_000));
  const start = Date.now();
  await new Promise((r) => setTimeout(r, RESYNCS * RESYNC_S * 1000));
  const end = Date.now();
  await new Promise((r) => setTimeout(r, 2_000));
  const requests = readAudit(host.auditLogPath!, start).filter(
    (r) => r.receivedMs < end && agentOf(r).startsWith("tenantplane-"),
  );

  const per = (n: number) => (n / RESYNCS).toFixed(1);
  const isList = (r: AuditRequest) => r.verb === "list";
  // The watcher's leader Lease is renewed on its own clock (every few seconds, whatever the
  // tenants do): counted apart, so the figures per resync are the tenants' cost alone.
  const isLease = (r: AuditRequest) => r.resource === "leases";
  const tenantWork = requests.filter((r) => !isLease(r));
  const leases = requests.filter(isLease);
  console.log(`\nSteady state: ${TENANTS} Ready tenants, resync every ${RESYNC_S} s, ${RESYNCS} resyncs measured`);
  console.log(
    `  tenantplane per resync, the leader Lease apart: ${per(tenantWork.filter(isWrite).length)} writes, ${per(tenantWork.filter(isList).length)} LISTs, ${per(tenantWork.length)} requests in all`,
  );
  console.log(
    `  per tenant per resync:  ${(tenantWork.filter(isWrite).length / RESYNCS / TENANTS).toFixed(2)} writes, ${(tenantWork.filter(isList).length / RESYNCS / TENANTS).toFixed(2)} LISTs`,
  );
  console.log(
    `  leader Lease: ${leases.length} requests in ${RESYNCS * RESYNC_S} s (${(leases.length / (RESYNCS * RESYNC_S)).toFixed(2)}/s, not per tenant)`,
  );
  console.log(`  every request by tenantplane's services:`);
  const rows = new Map<string, AuditRequest[]>();
  for (const r of requests)
    rows.set(`${agentOf(r)} ${r.verb} ${r.resource}`, [
      ...(rows.get(`${agentOf(r)} ${r.verb} ${r.resource}`) ?? []),
      r,
    ]);
  for (const [key, list] of [...rows.entries()].sort((a, b) => b[1].length - a[1].length))
    console.log(`    ${key.padEnd(60)} ${per(list.length).padStart(7)} per resync`);
  console.log(`\nreproduce: ${command}`);
} finally {
  await fleet.stop();
  for (const s of standIns) await s.stop();
  await nats.stop();
  await host.stop();
}
