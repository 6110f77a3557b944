import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1ResourceQuota } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  startHostCluster,
  startNats,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
} from "../harness/index.js";

// A host whose kube-controller-manager does not run the resourcequota controller: the tenant's
// quota is never counted, so the API server enforces none of it. tenantplane must not start a
// control plane there, must say why where an operator looks, and must go on by itself once the
// controller runs.

const failures = trackFailures();
let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let core: CoreV1Api;
let apps: AppsV1Api;
let custom: CustomObjectsApi;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

const TENANT = "uncounted";
const NAMESPACE = `tp-${TENANT}`;

beforeAll(async () => {
  [host, nats] = await Promise.all([
    startHostCluster({ name: "quota-not-counted", controllers: ["*", "-resourcequota"] }),
    startNats(),
  ]);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  apps = host.kubeConfig.makeApiClient(AppsV1Api);
  custom = host.kubeConfig.makeApiClient(CustomObjectsApi);
  await installCrds(host.kubeConfig, crdManifests());
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "10", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  await Promise.all([fleet.start("watcher"), fleet.start("provisioner"), fleet.start("isolation")]);
}, 300_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

async function conditionOf(type: string): Promise<Condition | undefined> {
  const tc = (await custom.getClusterCustomObject({
    group: "tenantplane.io",
    version: "v1alpha1",
    plural: "tenantclusters",
    name: TENANT,
  })) as { status?: { conditions?: Condition[] } };
  return tc.status?.conditions?.find((c) => c.type === type);
}

const readQuota = () =>
  core
    .readNamespacedResourceQuota({ name: "tenantplane-quota", namespace: NAMESPACE })
    .catch(() => undefined as V1ResourceQuota | undefined);

describe("a host whose quota controller does not run", () => {
  it("gets no control plane, says so on the TenantCluster, and goes on once the quota is counted", async () => {
    await custom.createClusterCustomObject({
      group: "tenantplane.io",
      version: "v1alpha1",
      plural: "tenantclusters",
      body: { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name: TENANT }, spec: {} },
    });

    // Silent for the first 15 s (a loaded controller takes a few), then said.
    const isolation = await waitFor(
      async () => {
        const c = await conditionOf("IsolationApplied");
        return c?.status === "False" && c.reason === "QuotaNotCounted" ? c : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, description: "IsolationApplied=False QuotaNotCounted" },
    );
    expect(isolation.message).toContain(`ResourceQuota tenantplane-quota in ${NAMESPACE}`);
    expect(isolation.message).toContain("resourcequota");
    const warning = await waitFor(
      async () =>
        (
          await core.listEventForAllNamespaces({
            fieldSelector: `involvedObject.kind=TenantCluster,involvedObject.name=${TENANT}`,
          })
        ).items.find((e) => e.type === "Warning" && e.reason === "QuotaNotCounted"),
      { timeoutMs: 30_000, intervalMs: 500, description: "a QuotaNotCounted Warning on the TenantCluster" },
    );
    expect(warning.message).toContain("resourcequota");
    // The provisioner's condition names what it waits for.
    const controlPlane = await waitFor(
      async () => {
        const c = await conditionOf("ControlPlaneReady");
        return c?.reason === "WaitingForIsolation" && c.message.includes("QuotaNotCounted") ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "ControlPlaneReady waiting for isolation" },
    );
    expect(controlPlane.status).toBe("False");
    // The quota is there, uncounted, and nothing runs beside it.
    const quota = await readQuota();
    expect(Object.keys(quota?.spec?.hard ?? {})).toContain("pods");
    expect(quota?.status?.hard).toBeUndefined();
    expect((await apps.listNamespacedStatefulSet({ namespace: NAMESPACE })).items).toEqual([]);
    expect((await core.listNamespacedPod({ namespace: NAMESPACE })).items).toEqual([]);

    // The operator starts the controller: its count wakes the isolation pass, and the control
    // plane follows without anyone touching the tenant.
    host.startControllerManager(["resourcequota"]);
    await waitFor(async () => (await conditionOf("IsolationApplied"))?.status === "True" || undefined, {
      timeoutMs: 90_000,
      intervalMs: 500,
      description: "IsolationApplied=True once the quota is counted",
    });
    expect(Object.keys((await readQuota())?.status?.hard ?? {})).toContain("pods");
    await waitFor(
      async () =>
        (await apps.readNamespacedStatefulSet({ name: "k3s", namespace: NAMESPACE }).catch(() => undefined)) ??
        undefined,
      { timeoutMs: 60_000, intervalMs: 500, description: "the control plane's StatefulSet" },
    );
    // Its pods are admitted under the counted quota, so the count includes them.
    await waitFor(
      async () => {
        const pods = (await core.listNamespacedPod({ namespace: NAMESPACE })).items;
        const used = (await readQuota())?.status?.used?.["pods"];
        return pods.length > 0 && used === String(pods.length) ? true : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, description: "the quota counting the control plane's pods" },
    );
  });
});
