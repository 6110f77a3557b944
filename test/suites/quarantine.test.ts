import { CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crashRecordSchema, partitionOf } from "@tenantplane/partition";
import { crdManifests } from "@tenantplane/api";
import { resourcePath, type JsonClient } from "@tenantplane/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  provisionTenant,
  startHostCluster,
  startNats,
  syncedState,
  tenantJsonClient,
  trackFailures,
  waitFor,
  waitForSynced,
  waitForTenantServiceAccount,
  type HostCluster,
  type NatsServer,
  type RunningService,
  type TenantApiServer,
} from "../harness/index.js";

// A tenant that kills every sync worker that syncs it is quarantined after three crashes, the
// tenant sharing its partition keeps syncing, and an operator releases it.
//
// No tenant object crashes a worker deterministically today (the bulkheads exist to remove the
// ways one could), so the workers run with the test-only TENANTPLANE_FAULT_CRASH_ON_OBJECT_NAME:
// a worker SIGKILLs itself when it takes up a tenant object of that name, the death the kernel's
// OOM killer gives (no handler runs, nothing is released). Stand-ins on 127.0.0.101-104.

const P = 4;
const CRASH_OBJECT = "tenantplane-fault-crash-worker";
const CRASH_BUCKET = "quarantine-suite-crashes";
const crashy = { name: "crashy", address: "127.0.0.101" };
// The bystander shares crashy's partition, so the same worker holds both at every turn.
const steadyName = Array.from({ length: 50 }, (_, i) => `steady-${i}`).find(
  (n) => partitionOf(n, P) === partitionOf(crashy.name, P),
)!;
const steady = { name: steadyName, address: "127.0.0.102" };

const failures = trackFailures();
let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
let nc: NatsConnection;
let crashes: KV;
const workers: RunningService[] = [];
const tenantApis: TenantApiServer[] = [];
const clients = new Map<string, JsonClient>();

type Obj = KubernetesObject & Record<string, unknown>;

async function tenantApi(tenant: string): Promise<JsonClient> {
  let client = clients.get(tenant);
  if (client === undefined) clients.set(tenant, (client = await tenantJsonClient(host.kubeConfig, tenant)));
  return client;
}

async function tenantConfigMap(tenant: string, name: string): Promise<void> {
  await (
    await tenantApi(tenant)
  ).request("POST", resourcePath("v1", "configmaps", "web"), {
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { namespace: "web", name }, data: { a: "1" } },
  });
}

async function hostConfigMap(tenant: string, name: string): Promise<Obj | undefined> {
  try {
    return (await objects.read({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `${name}-x-web-x-${tenant}`, namespace: `tp-${tenant}` },
    })) as Obj;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

async function events(tenant: string) {
  const list = await core.listEventForAllNamespaces({
    fieldSelector: `involvedObject.kind=TenantCluster,involvedObject.name=${tenant}`,
  });
  return list.items;
}

async function crashRecord(tenant: string) {
  const entry = await crashes.get(`c.${tenant}`);
  return entry?.operation === "PUT" ? crashRecordSchema.parse(entry.json()) : undefined;
}

async function startWorker(): Promise<RunningService> {
  const w = await fleet.start("sync-worker", {
    RESYNC_INTERVAL_SECONDS: "8",
    KUBECONFIG_CHECK_SECONDS: "5",
    PARTITIONS: String(P),
    LEASE_TTL_SECONDS: "2",
    LEASE_BUCKET: "quarantine-suite-leases",
    CRASH_BUCKET,
    QUARANTINE_CRASHES: "3",
    QUARANTINE_WINDOW_SECONDS: "600",
    TENANTPLANE_FAULT_CRASH_ON_OBJECT_NAME: CRASH_OBJECT,
  });
  workers.push(w);
  return w;
}

const alive = () => workers.filter((w) => w.process.running());

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "quarantine", nodes: 2 }), startNats()]);
  objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", POD_NAMESPACE: "tenantplane-system" },
  });
  await Promise.all([fleet.start("watcher"), fleet.start("provisioner"), fleet.start("isolation")]);
  // Four workers: three die on the crashing tenant, the fourth quarantines it.
  for (let i = 0; i < 4; i++) await startWorker();
  for (const t of [crashy, steady]) tenantApis.push(await provisionTenant(host.kubeConfig, t));
  for (const t of [crashy, steady]) {
    await waitForSynced(host.kubeConfig, t.name);
    const api = await tenantApi(t.name);
    await api.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "web" } },
    });
    await waitForTenantServiceAccount(api, "web");
  }
  nc = await connect({ servers: nats.url });
  crashes = await new Kvm(nc).open(CRASH_BUCKET);
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  for (const api of tenantApis) await api.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("a tenant that crashes every worker that syncs it", () => {
  it("is quarantined after three crashes, with the condition and Events saying so and how to release it", async () => {
    expect(partitionOf(steady.name, P)).toBe(partitionOf(crashy.name, P));
    // The bystander's own set-up (its namespace) is done: once idle, its busy marker goes.
    await waitFor(async () => ((await crashes.get(`b.${steady.name}`))?.operation === "PUT" ? undefined : true), {
      timeoutMs: 15_000,
      intervalMs: 100,
      description: "the bystander idle (no busy marker)",
    });
    await tenantConfigMap(crashy.name, CRASH_OBJECT);
    const condition = await waitFor(
      async () => {
        const c = (await syncedState(host.kubeConfig, crashy.name)).condition;
        return c?.reason === "Quarantined" ? c : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, description: "crashy Synced=False Quarantined" },
    );
    expect(condition.status).toBe("False");
    expect(condition.message).toMatch(/^quarantined since \S+: 3 sync workers died while busy with it \(/);
    expect(condition.message).toContain(
      'release it with: kubectl annotate tenantcluster crashy tenantplane.io/release-quarantine="$(date -u +%FT%TZ)" --overwrite',
    );
    // Exactly the three workers that took the tenant up died; the fourth holds the quarantine.
    expect(workers.length - alive().length).toBe(3);

    const warnings = await waitFor(
      async () => {
        const list = (await events(crashy.name)).filter((e) => e.type === "Warning");
        return list.some((e) => e.reason === "TenantQuarantined") ? list : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500, description: "TenantQuarantined Warning" },
    );
    const quarantined = warnings.find((e) => e.reason === "TenantQuarantined")!;
    expect(quarantined.message).toMatch(/crash 3 of 3 within 10m; the tenant is quarantined until released with:/);
    const crashed = warnings.filter((e) => e.reason === "SyncWorkerCrashed").map((e) => e.message ?? "");
    expect(crashed.map((m) => /crash (\d) of 3/.exec(m)?.[1]).sort()).toEqual(["1", "2"]);

    // Read back from the ledger: three crashes, each naming a dead worker, and the quarantine.
    const record = await crashRecord(crashy.name);
    expect(record?.quarantined?.crashes).toHaveLength(3);
    const dead = new Set(record!.quarantined!.crashes.map((c) => c.worker));
    expect(dead.size).toBe(3);
  });

  it("is synced by no worker while quarantined, while the tenant on its partition keeps syncing and is never blamed", async () => {
    const survivors = alive();
    await tenantConfigMap(crashy.name, "while-quarantined");
    await tenantConfigMap(steady.name, "next-door");
    await waitFor(() => hostConfigMap(steady.name, "next-door"), {
      timeoutMs: 15_000,
      intervalMs: 250,
      description: "the bystander's change on the host",
    });
    expect((await syncedState(host.kubeConfig, steady.name)).condition?.status).toBe("True");
    // A resync interval and more: the quarantined tenant is not taken up, so nothing crashes.
    await new Promise((r) => setTimeout(r, 10_000));
    expect(await hostConfigMap(crashy.name, "while-quarantined")).toBeUndefined();
    expect(alive()).toEqual(survivors);
    expect((await syncedState(host.kubeConfig, crashy.name)).condition?.reason).toBe("Quarantined");
    // The bystander was idle whenever a worker died: not one crash against it.
    expect((await crashRecord(steady.name))?.crashes ?? []).toEqual([]);
    expect((await events(steady.name)).filter((e) => e.reason === "SyncWorkerCrashed")).toEqual([]);
  });

  it("syncs again once an operator removes the cause and sets the release annotation", async () => {
    await (await tenantApi(crashy.name)).request("DELETE", resourcePath("v1", "configmaps", "web", CRASH_OBJECT));
    await objects.patch(
      {
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "TenantCluster",
        metadata: { name: crashy.name, annotations: { "tenantplane.io/release-quarantine": "2026-12-01T22:30:00Z" } },
      } as KubernetesObject,
      undefined,
      undefined,
      "e2e",
      undefined,
      PatchStrategy.MergePatch,
    );
    await waitFor(() => hostConfigMap(crashy.name, "while-quarantined"), {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: "the change made while quarantined reaches the host after the release",
    });
    await waitForSynced(host.kubeConfig, crashy.name, 30_000);
    const released = await waitFor(
      async () => (await events(crashy.name)).find((e) => e.reason === "QuarantineReleased"),
      { timeoutMs: 10_000, intervalMs: 250, description: "QuarantineReleased Event" },
    );
    expect(released.type).toBe("Normal");
    expect(released.message).toContain('tenantplane.io/release-quarantine="2026-12-01T22:30:00Z"');
    const record = await crashRecord(crashy.name);
    expect(record?.quarantined).toBeUndefined();
    expect(record?.released?.token).toBe("2026-12-01T22:30:00Z");
  });
});

describe("a tenant Pod that names a host node itself", () => {
  it("is never copied, is failed saying why, and gives the tenant no view of that host node", async () => {
    const api = await tenantApi(steady.name);
    await api.request("POST", resourcePath("v1", "pods", "web"), {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { namespace: "web", name: "chooser" },
        spec: { nodeName: "kwok-node-1", containers: [{ name: "app", image: "nginx" }] },
      },
    });
    const pod = await waitFor(
      async () => {
        const p = await api.request<Obj & { status?: { phase?: string; reason?: string; message?: string } }>(
          "GET",
          resourcePath("v1", "pods", "web", "chooser"),
        );
        return p.status?.phase === "Failed" ? p : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "the tenant-bound Pod marked Failed" },
    );
    expect(pod.status?.reason).toBe("NodeNameSetInTenant");
    expect(pod.status?.message).toMatch(
      /^spec\.nodeName was set in the tenant: the host scheduler places every host Pod/,
    );
    const copies = await core.listNamespacedPod({ namespace: `tp-${steady.name}` });
    expect(copies.items.map((p) => p.metadata?.name)).not.toContain(`chooser-x-web-x-${steady.name}`);
    const nodes = await api.request<{ items: Obj[] }>("GET", "/api/v1/nodes");
    expect(nodes.items.map((n) => n.metadata?.name)).not.toContain("kwok-node-1");
  });
});
