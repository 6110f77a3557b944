import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  type CoreV1Event,
  type KubernetesObject,
  type V1Secret,
  type V1StatefulSet,
} from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import YAML from "yaml";
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

// What a platform engineer sees with kubectl over a tenant's life: an exposed control plane
// written once, Normal Events at each milestone, Events on the host objects themselves, and a
// status that stays truthful while the tenant is torn down. Tenant addresses: 127.0.0.60-69.
const TENANT = "lc-a";
const ADDRESS = "127.0.0.60";
const HOST_NS = `tp-${TENANT}`;
const run = promisify(execFile);
const failures = trackFailures();

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
let standIn: TenantApiServer | undefined;
const stopWatches: Array<() => void> = [];

type Tc = KubernetesObject & {
  status?: {
    phase?: string;
    hostNamespace?: string;
    endpoint?: string;
    externalEndpoint?: string;
    kubeconfigSecretRef?: { namespace: string; name: string; key: string };
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };
};

/** One watch event as it arrived, with the time it arrived. */
interface Seen<T> {
  type: string;
  object: T;
  at: number;
}

async function apply(obj: KubernetesObject): Promise<void> {
  await objects.patch(obj, undefined, undefined, "e2e", true, PatchStrategy.ServerSideApply);
}

async function read<T extends KubernetesObject>(
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
): Promise<T | undefined> {
  try {
    return (await objects.read({ apiVersion, kind, metadata: { name, namespace } })) as T;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

const readTc = () => read<Tc>("tenantplane.io/v1alpha1", "TenantCluster", TENANT);
const controlPlaneReady = (tc: Tc | undefined) => tc?.status?.conditions?.find((c) => c.type === "ControlPlaneReady");

/** Records every event of a watch on `path` from now on. */
async function record<T>(path: string, query: Record<string, string> = {}): Promise<Seen<T>[]> {
  const seen: Seen<T>[] = [];
  const request = await new Watch(host.kubeConfig).watch(
    path,
    query,
    (type, object: T) => seen.push({ type, object, at: Date.now() }),
    () => undefined,
  );
  stopWatches.push(() => request.abort());
  return seen;
}

async function eventsWhere(namespace: string | undefined, fieldSelector: string): Promise<CoreV1Event[]> {
  const list = namespace
    ? await core.listNamespacedEvent({ namespace, fieldSelector })
    : await core.listEventForAllNamespaces({ fieldSelector });
  return list.items;
}

async function waitForEvent(
  namespace: string | undefined,
  fieldSelector: string,
  match: (e: CoreV1Event) => boolean,
  description: string,
): Promise<CoreV1Event> {
  return waitFor(async () => (await eventsWhere(namespace, fieldSelector)).find(match), {
    timeoutMs: 60_000,
    intervalMs: 500,
    description,
  });
}

const tenantEvents = () => eventsWhere(undefined, `involvedObject.kind=TenantCluster,involvedObject.name=${TENANT}`);

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(toolPath("cluster"), ["kubectl", "--kubeconfig", host.kubeconfigPath, ...args]);
  return stdout;
}

async function tenantKubeConfig(): Promise<KubeConfig> {
  const secret = await read<V1Secret & KubernetesObject>("v1", "Secret", `${TENANT}-kubeconfig`, HOST_NS);
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(secret!.data!["kubeconfig"]!, "base64").toString("utf8"));
  return kc;
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "tenant-events" }), startNats()]);
  objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
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
    fleet.start("sync-worker", { KUBECONFIG_CHECK_SECONDS: "5", LEASE_TTL_SECONDS: "3", PARTITIONS: "8" }),
  ]);
  for (const file of ["isolationprofile.yaml", "syncpolicy.yaml"]) {
    await apply(
      YAML.parse(readFileSync(new URL(`../../examples/${file}`, import.meta.url), "utf8")) as KubernetesObject,
    );
  }
});

afterAll(async () => {
  const keepLogs = failures.failed();
  for (const stop of stopWatches) stop();
  await fleet?.stop({ keepLogs });
  await standIn?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("an exposed tenant from creation to Ready", () => {
  it("creates its control plane and kubeconfig once, for the load balancer's address, and says it is Ready", async () => {
    const statefulSets = await record<V1StatefulSet>(`/apis/apps/v1/namespaces/${HOST_NS}/statefulsets`);
    const secrets = await record<V1Secret>(`/api/v1/namespaces/${HOST_NS}/secrets`, {
      fieldSelector: `metadata.name=${TENANT}-kubeconfig`,
    });
    await apply({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: TENANT },
      spec: {
        isolationProfileRef: { name: "standard" },
        syncPolicyRef: { name: "workloads" },
        controlPlane: { expose: { loadBalancer: { enabled: true } } },
      },
    } as KubernetesObject);

    // Without an address there is neither a kubeconfig URL nor a complete serving certificate.
    const waiting = await waitFor(
      async () => {
        const c = controlPlaneReady(await readTc());
        return c?.reason === "WaitingForLoadBalancer" ? c : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: "WaitingForLoadBalancer" },
    );
    expect(waiting.message).toContain("the kubeconfig and the control plane are created for that address");
    expect(await read("apps/v1", "StatefulSet", "k3s", HOST_NS)).toBeUndefined();
    expect(await read("v1", "Secret", `${TENANT}-kubeconfig`, HOST_NS)).toBeUndefined();

    await setLoadBalancerIngress(host.kubeConfig, HOST_NS, "k3s", ADDRESS);
    standIn = await startTenantStandIn(host.kubeConfig, TENANT, ADDRESS);
    const ready = await waitFor(
      async () => {
        const tc = await readTc();
        return tc?.status?.phase === "Ready" ? tc : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, description: "phase Ready" },
    );
    expect(ready.status?.externalEndpoint).toBe(`https://${ADDRESS}:6443`);

    // The StatefulSet was never changed after its creation: one object, generation 1 in every
    // version the watch saw, one pod template, which names the address from the start.
    const stsVersions = statefulSets.filter((e) => e.type !== "DELETED").map((e) => e.object);
    expect(stsVersions.length).toBeGreaterThan(0);
    expect(new Set(stsVersions.map((s) => s.metadata?.uid)).size).toBe(1);
    expect(stsVersions.map((s) => s.metadata?.generation)).toEqual(stsVersions.map(() => 1));
    expect(new Set(stsVersions.map((s) => JSON.stringify(s.spec?.template))).size).toBe(1);
    expect(stsVersions[0]!.spec?.template.spec?.containers[0]?.args).toContain(`--tls-san=${ADDRESS}`);
    const live = await read<V1StatefulSet & KubernetesObject>("apps/v1", "StatefulSet", "k3s", HOST_NS);
    expect(live?.metadata?.generation).toBe(1);
    expect(live?.status?.currentRevision).toBe(live?.status?.updateRevision);

    // The kubeconfig was written once: one Secret, and every version the watch saw holds the
    // same kubeconfig for the external address (the one later version only drops the
    // annotation that carried its Create Decision until it was published).
    const secretVersions = secrets.filter((e) => e.type !== "DELETED").map((e) => e.object);
    expect(secretVersions.length).toBeGreaterThan(0);
    expect(new Set(secretVersions.map((s) => s.metadata?.uid)).size).toBe(1);
    expect(new Set(secretVersions.map((s) => s.data?.["kubeconfig"])).size).toBe(1);
    expect(Buffer.from(secretVersions[0]!.data!["kubeconfig"]!, "base64").toString("utf8")).toContain(
      `server: https://${ADDRESS}:6443`,
    );
    console.error(
      `[e2e] ${TENANT}: StatefulSet versions seen ${stsVersions.length} (generations ${stsVersions.map((s) => s.metadata?.generation).join(",")}), kubeconfig Secret versions seen ${secretVersions.length}`,
    );

    // Lifecycle milestones as Normal Events on the TenantCluster.
    const readyEvent = await waitForEvent(
      undefined,
      `involvedObject.kind=TenantCluster,involvedObject.name=${TENANT}`,
      (e) => e.reason === "Ready",
      "Ready Event",
    );
    expect(readyEvent.type).toBe("Normal");
    expect(readyEvent.involvedObject.uid).toBe(ready.metadata?.uid);
    expect(readyEvent.message).toContain(`its API answers at https://${ADDRESS}:6443`);
    expect(readyEvent.reportingComponent).toBe("tenantplane.io/provisioner");
    const isolated = (await tenantEvents()).find((e) => e.reason === "IsolationApplied");
    expect(isolated?.type).toBe("Normal");
    expect(isolated?.message).toContain("IsolationProfile standard applied");
    expect((await tenantEvents()).filter((e) => e.type === "Warning")).toEqual([]);
  });
});

describe("host objects say why they exist", () => {
  it("a ConfigMap synced from the tenant and the k3s StatefulSet carry Events of their own", async () => {
    const tenant = (await tenantKubeConfig()).makeApiClient(CoreV1Api);
    await tenant.createNamespace({ body: { metadata: { name: "shop" } } });
    await tenant.createNamespacedConfigMap({
      namespace: "shop",
      body: { metadata: { name: "web-config" }, data: { mode: "production" } },
    });
    const hostName = `web-config-x-shop-x-${TENANT}`;
    const copy = await waitFor(() => read("v1", "ConfigMap", hostName, HOST_NS), {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: "host copy of the ConfigMap",
    });

    const onCopy = await waitForEvent(
      HOST_NS,
      `involvedObject.kind=ConfigMap,involvedObject.name=${hostName}`,
      (e) => e.reason === "CreateConfigMap",
      "CreateConfigMap Event on the host ConfigMap",
    );
    expect(onCopy).toMatchObject({
      type: "Normal",
      reportingComponent: "tenantplane.io/sync-worker",
      involvedObject: { namespace: HOST_NS, uid: copy.metadata?.uid },
    });
    expect(onCopy.message).toMatch(/^created for tenant lc-a from tenant ConfigMap shop\/web-config: /);
    // The TenantCluster keeps its own Event of the same Decision.
    expect((await tenantEvents()).some((e) => e.reason === "CreateConfigMap" && e.message?.includes(hostName))).toBe(
      true,
    );

    const caughtUp = await waitForEvent(
      undefined,
      `involvedObject.kind=TenantCluster,involvedObject.name=${TENANT}`,
      (e) => e.reason === "SyncCaughtUp",
      "SyncCaughtUp Event",
    );
    expect(caughtUp).toMatchObject({ type: "Normal", reportingComponent: "tenantplane.io/sync-worker" });

    const described = await kubectl("describe", "configmap", hostName, "-n", HOST_NS);
    expect(described).toMatch(
      /Normal\s+CreateConfigMap\s+\S+\s+sync-worker\s+created for tenant lc-a from tenant ConfigMap shop\/web-config/,
    );

    const sts = await kubectl("describe", "statefulset", "k3s", "-n", HOST_NS);
    expect(sts).toMatch(/Normal\s+CreateStatefulSet\s+\S+\s+provisioner\s+created for tenant lc-a: k3s control plane/);
    const listed = await kubectl("get", "events", "-n", HOST_NS);
    expect(listed).toContain(`configmap/${hostName}`);
    expect(listed).toContain("statefulset/k3s");
  });
});

describe("deleting the tenant", () => {
  it("keeps its status truthful until the teardown ends, and tells both ends with Normal Events", async () => {
    const before = await readTc();
    const uid = before!.metadata!.uid!;
    const snapshots = await record<Tc>("/apis/tenantplane.io/v1alpha1/tenantclusters", {
      fieldSelector: `metadata.name=${TENANT}`,
    });
    const namespaces = await record<KubernetesObject>("/api/v1/namespaces", {
      fieldSelector: `metadata.name=${HOST_NS}`,
    });
    const started = Date.now();
    await objects.delete({ apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name: TENANT } });
    await waitFor(async () => (await readTc()) === undefined, {
      timeoutMs: 120_000,
      intervalMs: 500,
      description: "TenantCluster gone",
    });
    expect(await read("v1", "Namespace", HOST_NS)).toBeUndefined();
    const gone = snapshots.find((s) => s.type === "DELETED")!;
    const nsGone = namespaces.find((s) => s.type === "DELETED");
    expect(nsGone).toBeDefined();
    console.error(
      `[e2e] ${TENANT}: teardown took ${((gone.at - started) / 1000).toFixed(1)}s, namespace gone after ${((nsGone!.at - started) / 1000).toFixed(1)}s`,
    );

    // While the namespace lived the status named it, its endpoints and what the teardown waited for.
    const terminating = snapshots.filter(
      (s) => s.type !== "DELETED" && controlPlaneReady(s.object)?.reason === "Terminating",
    );
    expect(terminating.length).toBeGreaterThan(0);
    for (const { object } of terminating) {
      expect(object.status).toMatchObject({
        phase: "Terminating",
        hostNamespace: HOST_NS,
        endpoint: `https://k3s.${HOST_NS}.svc:6443`,
        externalEndpoint: `https://${ADDRESS}:6443`,
        kubeconfigSecretRef: { namespace: HOST_NS, name: `${TENANT}-kubeconfig`, key: "kubeconfig" },
      });
      expect(controlPlaneReady(object)?.message).toMatch(/^waiting for host namespace tp-lc-a to be deleted: /);
    }
    // No version of the TenantCluster lost them before the namespace was gone.
    for (const s of snapshots.filter((s) => s.type !== "DELETED" && s.at < nsGone!.at)) {
      expect(s.object.status?.hostNamespace).toBe(HOST_NS);
    }
    // The last version says the teardown finished and names no namespace or endpoint any more.
    const last = snapshots.filter((s) => s.type !== "DELETED").at(-1)!.object;
    expect(controlPlaneReady(last)).toMatchObject({ reason: "TeardownFinished" });
    expect(last.status?.phase).toBe("Terminating");
    expect(last.status?.hostNamespace).toBeUndefined();
    expect(last.status?.endpoint).toBeUndefined();
    expect(last.status?.externalEndpoint).toBeUndefined();

    // Both ends of the teardown, on the TenantCluster (by its uid), in the events namespace.
    const events = await waitFor(
      async () => {
        const all = await eventsWhere("default", `involvedObject.kind=TenantCluster,involvedObject.name=${TENANT}`);
        return all.some((e) => e.reason === "DeleteNamespace") ? all : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "DeleteNamespace Event" },
    );
    const startedEvent = events.find((e) => e.reason === "TeardownStarted");
    const finishedEvent = events.find((e) => e.reason === "TeardownFinished");
    expect(startedEvent).toMatchObject({ type: "Normal", involvedObject: { uid } });
    expect(startedEvent?.message).toContain(`deleting host namespace ${HOST_NS}`);
    expect(finishedEvent).toMatchObject({ type: "Normal", involvedObject: { uid } });
    expect(finishedEvent?.message).toMatch(
      /^teardown finished after \d+ s: host namespace tp-lc-a and everything in it are deleted/,
    );
    // Recorded before the finalizer was released, i.e. before the TenantCluster was gone.
    expect(new Date(finishedEvent!.metadata!.creationTimestamp!).getTime()).toBeLessThanOrEqual(gone.at);
    // A routine delete is not a Warning.
    expect(events.find((e) => e.reason === "DeleteNamespace")?.type).toBe("Normal");
    expect(events.filter((e) => e.type === "Warning").map((e) => `${e.reason}: ${e.message}`)).toEqual([]);
  });
});
