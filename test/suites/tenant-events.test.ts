import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  type CoreV1Event,
  type KubernetesObject,
  type V1Pod,
  type V1Secret,
  type V1StatefulSet,
} from "@kubernetes/client-node";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient } from "@tenantplane/kube";
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
let refusingStandIn: TenantApiServer | undefined;
let nc: NatsConnection | undefined;
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

async function tenantKubeConfig(tenant = TENANT): Promise<KubeConfig> {
  const secret = await read<V1Secret & KubernetesObject>("v1", "Secret", `${tenant}-kubeconfig`, `tp-${tenant}`);
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
    // Events on each copy too (the default's describe path is test/suites/event-policy.test.ts's).
    fleet.start("recorder", { ROUTINE_EVENTS: "each" }),
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
  await nc?.close();
  await fleet?.stop({ keepLogs });
  await standIn?.stop({ keepLogs });
  await refusingStandIn?.stop({ keepLogs });
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

describe("a tenant Pod the host refuses or cannot place says why, on both sides", () => {
  // A second tenant, so the first one's Events stay free of Warnings.
  const REFUSED = "lc-b";
  const REFUSED_NS = `tp-${REFUSED}`;
  const REFUSED_ADDRESS = "127.0.0.61";
  const copyOf = (name: string) => `${name}-x-shop-x-${REFUSED}`;
  let tenantKc: KubeConfig;
  let tenantCore: CoreV1Api;
  let tenantKubeconfigPath: string;
  const fails: Array<{ tenantRef: { name: string }; error?: { code: number; reason: string; message: string } }> = [];

  const tenantPod = (name: string) => tenantCore.readNamespacedPod({ namespace: "shop", name });
  const tenantPodEvents = async (name: string) =>
    (await tenantCore.listNamespacedEvent({ namespace: "shop", fieldSelector: `involvedObject.name=${name}` })).items;
  const scheduled = (pod: V1Pod) => pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  const synced = async () =>
    (await read<Tc>("tenantplane.io/v1alpha1", "TenantCluster", REFUSED))?.status?.conditions?.find(
      (c) => c.type === "Synced",
    );
  // A change of the tenant Pod, which makes the sync worker look at it again.
  const touch = (name: string, value: string) =>
    new JsonClient(tenantKc).request("PATCH", `/api/v1/namespaces/shop/pods/${name}`, {
      body: { metadata: { labels: { touched: value } } },
      contentType: "application/merge-patch+json",
    });

  beforeAll(async () => {
    await apply({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: REFUSED },
      spec: {
        isolationProfileRef: { name: "standard" },
        syncPolicyRef: { name: "workloads" },
        controlPlane: { expose: { loadBalancer: { enabled: true } } },
      },
    } as KubernetesObject);
    await setLoadBalancerIngress(host.kubeConfig, REFUSED_NS, "k3s", REFUSED_ADDRESS);
    refusingStandIn = await startTenantStandIn(host.kubeConfig, REFUSED, REFUSED_ADDRESS);
    await waitFor(
      async () => (await read<Tc>("tenantplane.io/v1alpha1", "TenantCluster", REFUSED))?.status?.phase === "Ready",
      { timeoutMs: 120_000, intervalMs: 500, description: `${REFUSED} Ready` },
    );
    tenantKc = await tenantKubeConfig(REFUSED);
    tenantCore = tenantKc.makeApiClient(CoreV1Api);
    tenantKubeconfigPath = join(mkdtempSync(join(tmpdir(), "tenant-events-")), "kubeconfig");
    writeFileSync(tenantKubeconfigPath, tenantKc.exportConfig());
    // An operator's quota on the host namespace that no tenant Pod may use a widget under.
    await core.createNamespacedResourceQuota({
      namespace: REFUSED_NS,
      body: { metadata: { name: "no-widgets" }, spec: { hard: { "requests.example.com/widget": "0" } } },
    });
    await waitFor(
      async () =>
        (await core.readNamespacedResourceQuota({ namespace: REFUSED_NS, name: "no-widgets" })).status?.hard !==
        undefined,
      { timeoutMs: 30_000, intervalMs: 250, description: "quota no-widgets counted by the host" },
    );
    nc = await connect({ servers: nats.url });
    const sub = nc.subscribe(`tenantplane.decisions.${REFUSED}.Pod.Fail`);
    void (async () => {
      for await (const m of sub) fails.push(m.json());
    })();
    await tenantCore.createNamespace({ body: { metadata: { name: "shop" } } });
  });

  it("a Pod the host quota refuses: a Fail Decision, Warnings on the TenantCluster and on the tenant Pod, Synced naming it", async () => {
    await tenantCore.createNamespacedPod({
      namespace: "shop",
      body: {
        metadata: { name: "gadget" },
        spec: {
          containers: [
            {
              name: "app",
              image: "nginx:1.27",
              resources: { requests: { "example.com/widget": "1" }, limits: { "example.com/widget": "1" } },
            },
          ],
        },
      },
    });
    const fail = await waitFor(async () => fails.find((d) => d.tenantRef.name === "gadget"), {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: "Fail Decision for shop/gadget",
    });
    expect(fail).toMatchObject({
      action: "Fail",
      service: "sync-worker",
      kind: "Pod",
      tenantRef: { namespace: "shop", name: "gadget" },
      hostRef: { namespace: REFUSED_NS, name: copyOf("gadget") },
      error: { code: 403, reason: "Forbidden", attempted: "Create" },
    });
    expect(fail.error?.message).toContain("exceeded quota: no-widgets, requested: requests.example.com/widget=1");
    expect(await read("v1", "Pod", copyOf("gadget"), REFUSED_NS)).toBeUndefined();

    // The TenantCluster: a FailPod Warning from the recorder, and Synced naming the Pod.
    const onTc = await waitForEvent(
      undefined,
      `involvedObject.kind=TenantCluster,involvedObject.name=${REFUSED}`,
      (e) => e.reason === "FailPod",
      "FailPod Event on the TenantCluster",
    );
    expect(onTc.type).toBe("Warning");
    expect(onTc.message).toContain(
      `host refused to create Pod ${REFUSED_NS}/${copyOf("gadget")} from tenant Pod shop/gadget: Forbidden: `,
    );
    expect(onTc.message).toContain("exceeded quota: no-widgets");
    const condition = await waitFor(
      async () => {
        const c = await synced();
        return c?.reason === "ObjectErrors" && c.message.includes("Pod shop/gadget:") ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "Synced naming shop/gadget" },
    );
    expect(condition.status).toBe("False");
    expect(condition.message).toContain(
      `Pod shop/gadget: pods "${copyOf("gadget")}" is forbidden: exceeded quota: no-widgets`,
    );

    // Inside the tenant: a Warning on the Pod itself, by the sync worker, and PodScheduled=False.
    const pod = await tenantPod("gadget");
    const [event] = await waitFor(
      async () => {
        const list = (await tenantPodEvents("gadget")).filter((e) => e.reason === "SyncFailed");
        return list.length > 0 ? list : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "SyncFailed Event on the tenant Pod" },
    );
    expect(event).toMatchObject({
      type: "Warning",
      involvedObject: { kind: "Pod", namespace: "shop", name: "gadget", uid: pod.metadata?.uid },
      source: { component: "tenantplane-sync-worker" },
      reportingComponent: "tenantplane.io/tenantplane-sync-worker",
    });
    expect(event!.message).toBe(
      `the host refused to create this Pod's copy ${REFUSED_NS}/${copyOf("gadget")} (403 Forbidden): ${fail.error!.message}`,
    );
    const shown = await waitFor(
      async () => {
        const c = scheduled(await tenantPod("gadget"));
        return c?.reason === "SyncFailed" ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "PodScheduled=False SyncFailed on the tenant Pod" },
    );
    expect(shown).toMatchObject({ status: "False", message: event!.message });
    const described = (
      await run(toolPath("cluster"), [
        "kubectl",
        "--kubeconfig",
        tenantKubeconfigPath,
        "describe",
        "pod",
        "gadget",
        "-n",
        "shop",
      ])
    ).stdout;
    expect(described).toMatch(/PodScheduled\s+False/);
    expect(described).toMatch(
      /Warning\s+SyncFailed\s+\S+\s+tenantplane-sync-worker\s+the host refused to create this Pod's copy/,
    );
    expect(described).toContain("exceeded quota: no-widgets");

    // A retry with the same answer is not news: no second Decision, the Event count stays.
    await touch("gadget", "1");
    await new Promise((r) => setTimeout(r, 5_000));
    expect(fails.filter((d) => d.tenantRef.name === "gadget")).toHaveLength(1);
    expect((await tenantPodEvents("gadget")).filter((e) => e.reason === "SyncFailed").map((e) => e.count)).toEqual([1]);
    console.error(`[e2e] ${REFUSED}: Synced: ${condition.message}\n[e2e] tenant Event: ${event!.message}`);
  });

  it("once the quota allows it the copy is made, the refusal is taken back and Synced is True again", async () => {
    await core.deleteNamespacedResourceQuota({ namespace: REFUSED_NS, name: "no-widgets" });
    // A refused object is retried at its next change (or the next full pass).
    const copy = await waitFor(
      async () => {
        await touch("gadget", String(Date.now()));
        return read<V1Pod & KubernetesObject>("v1", "Pod", copyOf("gadget"), REFUSED_NS);
      },
      { timeoutMs: 60_000, intervalMs: 2_000, description: "host copy of shop/gadget" },
    );
    expect(copy.metadata?.name).toBe(copyOf("gadget"));
    const created = await waitForEvent(
      undefined,
      `involvedObject.kind=TenantCluster,involvedObject.name=${REFUSED}`,
      (e) => e.reason === "CreatePod" && (e.message ?? "").includes("shop/gadget"),
      "CreatePod Event for shop/gadget",
    );
    expect(created.message).toContain("(the host had refused it: Forbidden)");
    await waitFor(
      async () => {
        const c = scheduled(await tenantPod("gadget"));
        return c !== undefined && c.reason !== "SyncFailed" ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "the tenant Pod's PodScheduled from its host copy" },
    );
    const condition = await waitFor(
      async () => {
        const c = await synced();
        return c?.status === "True" ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "Synced=True" },
    );
    expect(condition.message).not.toContain("gadget");
  });

  it("a Pod no host node can take shows the host scheduler's reason and message in the tenant", async () => {
    // The standard profile puts tenant Pods on nodes labelled for tenants; this host has none.
    await tenantCore.createNamespacedPod({
      namespace: "shop",
      body: { metadata: { name: "web" }, spec: { containers: [{ name: "web", image: "nginx:1.27" }] } },
    });
    const onHost = await waitFor(
      async () => {
        const p = await read<V1Pod & KubernetesObject>("v1", "Pod", copyOf("web"), REFUSED_NS);
        const c = p && scheduled(p);
        return c?.status === "False" ? c : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: "host copy of shop/web unschedulable" },
    );
    expect(onHost.reason).toBe("Unschedulable");
    expect(onHost.message).toContain("didn't match Pod's node affinity/selector");
    const inTenant = await waitFor(
      async () => {
        const c = scheduled(await tenantPod("web"));
        return c?.status === "False" && c.message === onHost.message ? c : undefined;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 250,
        description: "tenant Pod shop/web PodScheduled=False with the host's message",
      },
    );
    expect(inTenant.reason).toBe("Unschedulable");
    const event = await waitFor(
      async () => (await tenantPodEvents("web")).find((e) => e.reason === "FailedScheduling"),
      { timeoutMs: 30_000, intervalMs: 250, description: "FailedScheduling Event on the tenant Pod" },
    );
    expect(event).toMatchObject({ type: "Warning", source: { component: "tenantplane-sync-worker" } });
    expect(event.message).toBe(`the host scheduler cannot place this Pod's copy: ${onHost.message}`);
    const described = (
      await run(toolPath("cluster"), [
        "kubectl",
        "--kubeconfig",
        tenantKubeconfigPath,
        "describe",
        "pod",
        "web",
        "-n",
        "shop",
      ])
    ).stdout;
    expect(described).toMatch(
      /Warning\s+FailedScheduling\s+\S+\s+tenantplane-sync-worker\s+the host scheduler cannot place/,
    );
    // Not a sync failure: nothing was refused.
    expect(fails.filter((d) => d.tenantRef.name === "web")).toEqual([]);
  });

  it("a Pod the profile's rules keep off the host says so inside the tenant", async () => {
    await tenantCore.createNamespacedPod({
      namespace: "shop",
      body: {
        metadata: { name: "sniffer" },
        spec: { hostNetwork: true, containers: [{ name: "tcpdump", image: "nicolaka/netshoot" }] },
      },
    });
    const event = await waitFor(
      async () => (await tenantPodEvents("sniffer")).find((e) => e.reason === "SyncSkipped"),
      { timeoutMs: 30_000, intervalMs: 250, description: "SyncSkipped Event on the tenant Pod" },
    );
    expect(event).toMatchObject({ type: "Warning", source: { component: "tenantplane-sync-worker" } });
    expect(event.message).toMatch(
      new RegExp(
        `^this Pod is not copied to the host \\(${REFUSED_NS}/${copyOf("sniffer")}\\): refused by host rules: spec\\.hostNetwork`,
      ),
    );
    expect(await read("v1", "Pod", copyOf("sniffer"), REFUSED_NS)).toBeUndefined();
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
    console.error(
      `[e2e] Events of TenantCluster ${TENANT}:\n${events.map((e) => `  ${e.type} ${e.reason} ${e.source?.component}: ${e.message}`).join("\n")}`,
    );
    // A routine delete is not a Warning.
    expect(events.find((e) => e.reason === "DeleteNamespace")?.type).toBe("Normal");
    expect(events.filter((e) => e.type === "Warning").map((e) => `${e.reason}: ${e.message}`)).toEqual([]);
  });
});
