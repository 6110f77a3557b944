import { CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient, resourcePath, type RawObject } from "@tenantplane/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  provisionTenant,
  startHostCluster,
  startNats,
  tenantJsonClient,
  tenantKubeconfig,
  trackFailures,
  waitFor,
  waitForSynced,
  waitForTenantServiceAccount,
  type HostCluster,
  type NatsServer,
  type TenantApiServer,
} from "../harness/index.js";

// Every Pod reference reaches the host mapped to the tenant's own copy or not at all: a
// tenant Pod whose cinder volume names `<tenant>-kubeconfig` (the Secret in tp-<tenant>
// holding the tenant's admin kubeconfig) must not get a host copy that mounts it.
// Tenant API stand-ins of this suite live on 127.0.0.75-78.
const TENANT = { name: "podref-a", address: "127.0.0.75" };
const HOST_NS = `tp-${TENANT.name}`;
const NS = "shop";
const KUBECONFIG_SECRET = `${TENANT.name}-kubeconfig`;
const failures = trackFailures();

type Obj = RawObject & { spec?: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let tenantApi: TenantApiServer;
let tenant: JsonClient;
let hostApi: JsonClient;

async function get(client: JsonClient, path: string): Promise<Obj | undefined> {
  try {
    return await client.request<Obj>("GET", path);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "pod-references" }), startNats()]);
  const objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  await installCrds(host.kubeConfig, crdManifests());
  await host.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  hostApi = new JsonClient(host.kubeConfig);
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    fleet.start("recorder"),
    fleet.start("sync-worker", { PARTITIONS: "8", LEASE_TTL_SECONDS: "3", LEASE_BUCKET: "pod-references-e2e" }),
  ]);
  // The profile allows cinder volumes, so the volume's Secret reference alone decides.
  await objects.patch(
    {
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "IsolationProfile",
      metadata: { name: "podref-cinder" },
      spec: { workloads: { volumes: { allowedTypes: ["cinder"] } } },
    } as KubernetesObject,
    undefined,
    undefined,
    "e2e",
    true,
    PatchStrategy.ServerSideApply,
  );
  tenantApi = await provisionTenant(host.kubeConfig, TENANT, { isolationProfileRef: { name: "podref-cinder" } });
  await waitForSynced(host.kubeConfig, TENANT.name);
  tenant = await tenantJsonClient(host.kubeConfig, TENANT.name);
  await tenant.request("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
  });
  await waitForTenantServiceAccount(tenant, NS);
}, 600_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  await tenantApi?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("Pod references reach the host mapped or not at all", () => {
  it("a cinder volume naming <tenant>-kubeconfig mounts the tenant's own Secret copy, never the admin kubeconfig", async () => {
    const kubeconfigBefore = await tenantKubeconfig(host.kubeConfig, TENANT.name);
    // The tenant's own Secret of that name, in its own namespace.
    await tenant.request("POST", resourcePath("v1", "secrets", NS), {
      body: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: KUBECONFIG_SECRET, namespace: NS },
        stringData: { key: "tenant-owned" },
      },
    });
    await tenant.request("POST", resourcePath("v1", "pods", NS), {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "cinder", namespace: NS },
        spec: {
          containers: [{ name: "c", image: "busybox", volumeMounts: [{ name: "disk", mountPath: "/data" }] }],
          volumes: [{ name: "disk", cinder: { volumeID: "vol-1", secretRef: { name: KUBECONFIG_SECRET } } }],
        },
      },
    });

    const copyName = `${KUBECONFIG_SECRET}-x-${NS}-x-${TENANT.name}`;
    const hostPod = await waitFor(
      () => get(hostApi, resourcePath("v1", "pods", HOST_NS, `cinder-x-${NS}-x-${TENANT.name}`)),
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        description: "host copy of Pod shop/cinder",
      },
    );
    // What the host stored: the volume names the tenant's Secret copy.
    const volume = (hostPod.spec?.["volumes"] as Obj[]).find((v) => v["name"] === "disk") as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(volume["cinder"]).toEqual({ volumeID: "vol-1", secretRef: { name: copyName } });
    expect(JSON.stringify(hostPod.spec)).not.toContain(`"${KUBECONFIG_SECRET}"`);
    // That Secret is the tenant's copy, and the admin kubeconfig is left as the provisioner wrote it.
    const copy = await waitFor(() => get(hostApi, resourcePath("v1", "secrets", HOST_NS, copyName)), {
      timeoutMs: 30_000,
      description: `host Secret ${copyName}`,
    });
    expect(copy.metadata.labels?.["tenantplane.io/virtual-namespace"]).toBe(NS);
    expect(Buffer.from((copy["data"] as Record<string, string>)["key"]!, "base64").toString()).toBe("tenant-owned");
    expect(await tenantKubeconfig(host.kubeConfig, TENANT.name)).toBe(kubeconfigBefore);
  });
});
