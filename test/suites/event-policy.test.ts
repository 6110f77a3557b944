import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type CoreV1Event,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient, resourcePath } from "@tenantplane/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  toolPath,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type TenantApiServer,
} from "../harness/index.js";

// The recorder's default Event policy, end to end: a burst of tenant objects synced to the host
// becomes one counted series per reason on the TenantCluster, no Event on each copy (kubectl
// describe of the copy says why it exists), while a Skip and a Delete keep Events of their own.
// Tenant address: 127.0.0.226 (this suite's range is 127.0.0.226-230).
const TENANT = "ep-a";
const ADDRESS = "127.0.0.226";
const HOST_NS = `tp-${TENANT}`;
const BURST = 40;
const run = promisify(execFile);
const failures = trackFailures();

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
let standIn: TenantApiServer | undefined;
let tenant: JsonClient;

const copyName = (name: string) => `${name}-x-burst-x-${TENANT}`;

async function tenantEvents(): Promise<CoreV1Event[]> {
  return (
    await core.listEventForAllNamespaces({
      fieldSelector: `involvedObject.kind=TenantCluster,involvedObject.name=${TENANT}`,
    })
  ).items;
}

/** The host copies of the tenant's ConfigMaps, as the host API lists them. */
async function configMapCopies(): Promise<string[]> {
  const list = await core.listNamespacedConfigMap({
    namespace: HOST_NS,
    labelSelector: `tenantplane.io/tenant=${TENANT},tenantplane.io/kind=ConfigMap`,
  });
  return list.items.map((c) => c.metadata!.name!);
}

async function createInTenant(name: string): Promise<void> {
  await tenant.request("POST", resourcePath("v1", "configmaps", "burst"), {
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { key: name } },
  });
}

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(toolPath("cluster"), ["kubectl", "--kubeconfig", host.kubeconfigPath, ...args]);
  return stdout;
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "event-policy" }), startNats()]);
  objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", POD_NAMESPACE: "tenantplane-system" },
  });
  await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    // The default policy; a short interval so the series' count catches up within the test.
    fleet.start("recorder", { ROUTINE_EVENT_INTERVAL_SECONDS: "2" }),
    fleet.start("sync-worker", { LEASE_TTL_SECONDS: "3", PARTITIONS: "8" }),
  ]);
  await objects.patch(
    {
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: TENANT },
      spec: { controlPlane: { expose: { loadBalancer: { enabled: true } } } },
    } as KubernetesObject,
    undefined,
    undefined,
    "e2e",
    true,
    PatchStrategy.ServerSideApply,
  );
  await waitFor(() => core.readNamespacedService({ namespace: HOST_NS, name: "k3s" }).catch(() => undefined), {
    timeoutMs: 120_000,
    intervalMs: 250,
    description: `Service ${HOST_NS}/k3s`,
  });
  await setLoadBalancerIngress(host.kubeConfig, HOST_NS, "k3s", ADDRESS);
  standIn = await startTenantStandIn(host.kubeConfig, TENANT, ADDRESS);
  await waitFor(
    async () => {
      const tc = (await objects.read({
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "TenantCluster",
        metadata: { name: TENANT },
      })) as KubernetesObject & { status?: { phase?: string } };
      return tc.status?.phase === "Ready" || undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500, description: "phase Ready" },
  );
  const secret = await core.readNamespacedSecret({ name: `${TENANT}-kubeconfig`, namespace: HOST_NS });
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(secret.data!["kubeconfig"]!, "base64").toString("utf8"));
  tenant = new JsonClient(kc);
  await tenant.request("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "burst" } },
  });
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  await standIn?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("the recorder's default Event policy", () => {
  it("counts a burst of routine Creates in one series on the TenantCluster, with no Event per copy", async () => {
    await Promise.all(Array.from({ length: BURST }, (_, i) => createInTenant(`cm-${i}`)));
    const copies = await waitFor(
      async () => {
        const names = await configMapCopies();
        return names.filter((n) => n.startsWith("cm-")).length === BURST ? names : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, description: `${BURST} host copies` },
    );
    // Every copy of a tenant ConfigMap was one Create Decision of the sync worker (the tenant's
    // own ConfigMaps, such as kube-root-ca.crt where it is synced, count too).
    // The copies' Creates (the worker's own tenant-dns-records ConfigMap, the tenant's own object,
    // keeps an Event of its own).
    const syncCreates = async () =>
      (await tenantEvents()).filter(
        (e) =>
          e.reason === "CreateConfigMap" &&
          e.source?.component === "sync-worker" &&
          e.message?.includes(" from tenant ConfigMap "),
      );
    const found = await waitFor(
      async () => {
        const list = await syncCreates();
        return list.reduce((n, e) => n + (e.count ?? 0), 0) >= copies.length ? list : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, description: `CreateConfigMap Events counting ${copies.length}` },
    );
    // One Event for all of them, in the events namespace (the list is printed whole when not).
    expect(found.map((e) => `${e.metadata?.namespace} count=${e.count}: ${e.message}`)).toEqual([
      expect.stringMatching(
        new RegExp(`^default count=${copies.length}: latest of ${copies.length}: created ConfigMap ${HOST_NS}/`),
      ),
    ]);
    const series = found[0]!;
    const own = (await tenantEvents()).find((e) =>
      e.message?.startsWith(`created ConfigMap ${HOST_NS}/tenant-dns-records`),
    );
    expect(own?.count).toBe(1);
    expect(series.type).toBe("Normal");
    expect(series.series?.count).toBe(copies.length);
    expect(series.series?.lastObservedTime).toBeTruthy();
    expect(series.reportingComponent).toBe("tenantplane.io/sync-worker");

    // No Event on the copies (the provisioner's own ConfigMaps keep theirs).
    const onCopies = await core.listNamespacedEvent({
      namespace: HOST_NS,
      fieldSelector: "involvedObject.kind=ConfigMap",
    });
    expect(onCopies.items.filter((e) => e.involvedObject.name?.endsWith(copyName("")))).toEqual([]);
    // kubectl describe of a copy still says why it exists: whose object it copies, and the
    // Decision that wrote it.
    const described = await kubectl("describe", "configmap", copyName("cm-7"), "-n", HOST_NS);
    expect(described).toMatch(new RegExp(`tenantplane\\.io/tenant=${TENANT}`));
    expect(described).toMatch(/tenantplane\.io\/virtual-namespace: burst/);
    expect(described).toMatch(/tenantplane\.io\/virtual-name: cm-7/);
    expect(described).toMatch(/tenantplane\.io\/decision:[\s\S]*"action":"Create"/);
    // And kubectl describe of the TenantCluster shows the series with its count.
    const tc = await kubectl("describe", "tenantcluster", TENANT);
    expect(tc).toMatch(
      new RegExp(`Normal\\s+CreateConfigMap\\s+.*\\(x${copies.length} over .*\\)\\s+sync-worker\\s+latest of`),
    );
  });

  it("keeps a Skip's Event and Warning and a Delete's Warning apart from the series", async () => {
    const syncCreates = async () =>
      (await tenantEvents()).filter(
        (e) => e.reason === "CreateConfigMap" && e.message?.includes(" from tenant ConfigMap "),
      );
    const before = (await syncCreates())[0]!.count;
    // A host object tenantplane did not create holds the name the copy would take.
    await core.createNamespacedConfigMap({ namespace: HOST_NS, body: { metadata: { name: copyName("held") } } });
    await createInTenant("held");
    const skip = await waitFor(async () => (await tenantEvents()).find((e) => e.reason === "SkipConfigMap"), {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: "the SkipConfigMap Event",
    });
    expect(skip.count).toBe(1);
    expect(skip.message).toContain(copyName("held"));
    const warning = await waitFor(
      async () =>
        (await tenantEvents()).find(
          (e) => e.type === "Warning" && e.reason === "SyncSkipped" && e.message?.includes("burst/held"),
        ),
      { timeoutMs: 60_000, intervalMs: 500, description: "the SyncSkipped Warning naming burst/held" },
    );
    expect(warning.count).toBeGreaterThanOrEqual(1);

    await tenant.request("DELETE", resourcePath("v1", "configmaps", "burst", "cm-0"));
    const deleted = await waitFor(async () => (await tenantEvents()).find((e) => e.reason === "DeleteConfigMap"), {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: "the DeleteConfigMap Event",
    });
    expect(deleted).toMatchObject({ type: "Warning", count: 1 });
    expect(deleted.message).toContain(copyName("cm-0"));
    // Neither joined the Create series.
    const creates = await syncCreates();
    expect(creates).toHaveLength(1);
    expect(creates[0]!.count).toBe(before);
  });
});
