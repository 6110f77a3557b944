import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient, resourcePath, type RawObject } from "@tenantplane/kube";
import { DecisionSchema, type Decision } from "@tenantplane/messaging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  agentOf,
  installCrds,
  provisionTenant,
  readAudit,
  runTenantplane,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  syncedState,
  tenantJsonClient,
  trackFailures,
  waitFor,
  waitForSynced,
  type HostCluster,
  type NatsServer,
  type RunningService,
  type TenantApiServer,
} from "../harness/index.js";

// Tenant API stand-ins and load-balancer addresses of this suite live on 127.0.0.160-169.
const TENANT = { name: "back-a", address: "127.0.0.160" };
const LB_ADDRESS = "127.0.0.161";
const HOST_NS = `tp-${TENANT.name}`;
const NS = "shop";
const failures = trackFailures();

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let worker: RunningService;
let tenantApi: TenantApiServer;
let tenant: JsonClient;
let hostApi: JsonClient;
let nc: NatsConnection;
const decisions: Decision[] = [];

type Obj = RawObject & {
  spec?: Record<string, unknown> & { nodeName?: string };
  status?: Record<string, unknown> & { phase?: string; podIP?: string; reason?: string };
};
type List = { items: Obj[] };

const hostNameOf = (name: string) => `${name}-x-${NS}-x-${TENANT.name}`;
const podPath = (ns: string, name?: string) => resourcePath("v1", "pods", ns, name);
const isReady = (pod: Obj | undefined) =>
  ((pod?.status?.["conditions"] ?? []) as { type: string; status: string }[]).some(
    (c) => c.type === "Ready" && c.status === "True",
  );

async function get(client: JsonClient, path: string): Promise<Obj | undefined> {
  try {
    return await client.request<Obj>("GET", path);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

// The suite's IsolationProfile: the built-in one with load-balancer Services allowed, plus `spec`.
async function applyProfile(objects: KubernetesObjectApi, spec: Record<string, unknown>): Promise<void> {
  await objects.patch(
    {
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "IsolationProfile",
      metadata: { name: "back-sync-lb" },
      spec: { workloads: { services: { loadBalancer: true } }, ...spec },
    } as KubernetesObject,
    undefined,
    undefined,
    "e2e",
    true,
    PatchStrategy.ServerSideApply,
  );
}

async function tenantPods(selector: string): Promise<Obj[]> {
  return (await tenant.request<List>("GET", podPath(NS), { query: { labelSelector: selector } })).items;
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "back-sync", nodes: 2 }), startNats()]);
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
  nc = await connect({ servers: nats.url });
  nc.subscribe("tenantplane.decisions.>", {
    callback: (_err, msg) => {
      const parsed = DecisionSchema.safeParse(msg.json());
      if (parsed.success && parsed.data.service === "sync-worker") decisions.push(parsed.data);
    },
  });
  const workers = await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    fleet.start("recorder"),
    fleet.start("sync-worker", {
      RESYNC_INTERVAL_SECONDS: "20",
      KUBECONFIG_CHECK_SECONDS: "5",
      PARTITIONS: "8",
      LEASE_TTL_SECONDS: "3",
      LEASE_BUCKET: "back-sync-e2e",
    }),
  ]);
  worker = workers[4];
  // Load-balancer Services are refused by the default profile.
  await applyProfile(objects, {});
  // The tenant API's audit log tells which requests the worker sent it (one create per virtual node).
  tenantApi = await provisionTenant(
    host.kubeConfig,
    TENANT,
    { isolationProfileRef: { name: "back-sync-lb" } },
    { auditLog: true },
  );
  await waitForSynced(host.kubeConfig, TENANT.name);
  tenant = await tenantJsonClient(host.kubeConfig, TENANT.name);
  await tenant.request("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
  });
  // The stand-in's controller manager makes the namespace's default ServiceAccount, which Pods need.
  await waitFor(() => get(tenant, resourcePath("v1", "serviceaccounts", NS, "default")), {
    timeoutMs: 60_000,
    description: "tenant ServiceAccount shop/default",
  });
}, 600_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  await tenantApi?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("back-sync: host state flows back to the tenant", () => {
  it("shows a 3-replica Deployment as 3 Running pods bound to a virtual node, with the host pods' IPs", async () => {
    await tenant.request("POST", `/apis/apps/v1/namespaces/${NS}/deployments`, {
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: NS },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: {
              nodeSelector: { "kubernetes.io/hostname": "kwok-node-0" },
              containers: [{ name: "web", image: "nginx:1.27" }],
            },
          },
        },
      },
    });
    const pods = await waitFor(
      async () => {
        const list = await tenantPods("app=web");
        const running = list.filter((p) => p.status?.phase === "Running" && isReady(p));
        return running.length === 3 ? running : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, description: "3 Running, Ready tenant pods of Deployment web" },
    );
    for (const pod of pods) {
      expect(pod.spec?.nodeName).toBe("kwok-node-0");
      const copy = await get(hostApi, podPath(HOST_NS, hostNameOf(pod.metadata.name)));
      expect(copy?.spec?.nodeName).toBe("kwok-node-0");
      expect(pod.status?.podIP).toBeTruthy();
      expect(pod.status?.podIP).toBe(copy?.status?.podIP);
      expect(pod.status?.["hostIP"]).toBe(copy?.status?.["hostIP"]);
      expect(pod.status?.["startTime"]).toBe(copy?.status?.["startTime"]);
      // The tenant API computed the QoS class from the tenant's spec; it is kept.
      expect(pod.status?.["qosClass"]).toBe("BestEffort");
    }
    const node = await get(tenant, "/api/v1/nodes/kwok-node-0");
    expect(node?.metadata.labels).toMatchObject({
      "kubernetes.io/hostname": "kwok-node-0",
      "tenantplane.io/virtual-node": "true",
    });
    expect(node?.metadata.labels?.["type"]).toBeUndefined();
    expect((node?.status?.["capacity"] as Record<string, string>)["cpu"]).toBe("32");
    const ready = (node?.status?.["conditions"] as { type: string; status: string }[]).find((c) => c.type === "Ready");
    expect(ready?.status).toBe("True");
    // The tenant's own controllers see the pods Ready, as with a real kubelet.
    await waitFor(
      async () => {
        const d = await get(tenant, `/apis/apps/v1/namespaces/${NS}/deployments/web`);
        return (d?.status?.["readyReplicas"] as number | undefined) === 3 || undefined;
      },
      { timeoutMs: 30_000, description: "Deployment web readyReplicas 3" },
    );
    // Status writes change no host object: no Update Decision for any Pod.
    expect(decisions.filter((d) => d.kind === "Pod" && d.action === "Update")).toEqual([]);
    // Three Pods bound to a new node at once share one create of it (each used to send its own,
    // answered 409 but for one); the Lease, written after the create, comes soon after.
    const nodeCreates = readAudit(tenantApi.auditLogPath!).filter(
      (r) => r.verb === "create" && r.resource === "nodes" && agentOf(r) === "tenantplane-sync-worker",
    );
    expect(nodeCreates.map((r) => `${r.name} ${r.code}`)).toEqual(["kwok-node-0 201"]);
    await waitFor(() => get(tenant, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/kwok-node-0"), {
      timeoutMs: 15_000,
      description: "the virtual node's Lease",
    });
    const metrics = (await worker.probe("/metrics")).body;
    expect(metrics).toMatch(/tenantplane_sync_backsync_writes_total\{kind="Pod",action="bind"[^}]*\} [3-9]/);
    expect(metrics).toMatch(/tenantplane_sync_backsync_writes_total\{kind="Node",action="create"[^}]*\} [1-9]/);
  });

  it("marks a tenant pod whose host pod was evicted Failed with the reason; the copy is not made again", async () => {
    const [victim] = (await tenantPods("app=web")).filter((p) => p.status?.phase === "Running");
    expect(victim).toBeDefined();
    const hostPod = hostNameOf(victim!.metadata.name);
    await hostApi.request("POST", `${podPath(HOST_NS, hostPod)}/eviction`, {
      body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: hostPod, namespace: HOST_NS } },
    });
    const failed = await waitFor(
      async () => {
        const pod = await get(tenant, podPath(NS, victim!.metadata.name));
        return pod === undefined || pod.status?.phase === "Failed" ? { pod } : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "evicted tenant pod Failed or gone" },
    );
    if (failed.pod !== undefined) {
      expect(failed.pod.status?.reason).toMatch(/Evicted|HostPodDeleted/);
      expect(isReady(failed.pod)).toBe(false);
      // explain-sync predicts what the worker does: no copy, and it says why for the Pod's own manifest.
      const { name } = failed.pod.metadata;
      const dir = mkdtempSync(join(tmpdir(), "back-sync-"));
      const file = join(dir, "lost.json");
      const manifest = { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: NS }, spec: failed.pod.spec };
      writeFileSync(file, JSON.stringify(manifest));
      const run = await runTenantplane(["explain-sync", "--tenant", TENANT.name, "-f", file, "-o", "json"], {
        HOME: dir,
        KUBECONFIG: host.kubeconfigPath,
      });
      expect(run.code, run.stderr).toBe(0);
      const rows = (JSON.parse(run.stdout) as Decision[]).filter((d) => d.tenantRef.name === name);
      expect(rows.map((d) => `${d.action} ${d.kind} ${d.hostRef.name}: ${d.reason}`)).toEqual([
        `Skip Pod ${hostPod}: Pod ${NS}/${name} is bound to node ${failed.pod.spec?.nodeName} but its host Pod is gone: lost on the host, so the tenant sees it Failed and it is not made again`,
      ]);
    }
    // The Deployment replaces it; the failed pod's copy stays gone.
    await waitFor(
      async () => {
        const running = (await tenantPods("app=web")).filter((p) => p.status?.phase === "Running" && isReady(p));
        return running.length === 3 || undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, description: "3 Running pods again" },
    );
    expect(await get(hostApi, podPath(HOST_NS, hostPod))).toBeUndefined();
  });

  it("deletes the host pod with the tenant's grace period, then the tenant pod, then the unused virtual node", async () => {
    await tenant.request("POST", podPath(NS), {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "solo", namespace: NS },
        spec: {
          nodeSelector: { "kubernetes.io/hostname": "kwok-node-1" },
          containers: [{ name: "solo", image: "nginx:1.27" }],
        },
      },
    });
    await waitFor(
      async () => {
        const pod = await get(tenant, podPath(NS, "solo"));
        return pod?.spec?.nodeName === "kwok-node-1" && pod.status?.phase === "Running" ? pod : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: "solo Running on kwok-node-1" },
    );
    expect(await get(tenant, "/api/v1/nodes/kwok-node-1")).toBeDefined();

    // Watch the host copy to see the grace period its deletion carries (kwok removes it at once).
    const seen: Obj[] = [];
    const abort = new AbortController();
    const watching = (async () => {
      const stream = hostApi.stream(
        podPath(HOST_NS),
        { watch: true, fieldSelector: `metadata.name=${hostNameOf("solo")}` },
        abort.signal,
      );
      for await (const event of stream) seen.push((event as { object: Obj }).object);
    })().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    await tenant.request("DELETE", podPath(NS, "solo"), {
      body: { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 7 },
    });
    await waitFor(async () => ((await get(tenant, podPath(NS, "solo"))) === undefined ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: "tenant pod solo gone after its host copy",
    });
    abort.abort();
    await watching;
    expect(seen.map((p) => p.metadata["deletionGracePeriodSeconds"])).toContain(7);
    expect(await get(hostApi, podPath(HOST_NS, hostNameOf("solo")))).toBeUndefined();
    await waitFor(async () => ((await get(tenant, "/api/v1/nodes/kwok-node-1")) === undefined ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: "virtual node kwok-node-1 removed with its last pod",
    });
    expect(await get(tenant, "/api/v1/nodes/kwok-node-0")).toBeDefined();
  });

  it("binds a claim in the tenant once its host copy is bound: a virtual volume, phase, capacity, access modes", async () => {
    await tenant.request("POST", resourcePath("v1", "persistentvolumeclaims", NS), {
      body: {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "data", namespace: NS },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      },
    });
    const claim = await waitFor(
      async () => {
        const c = await get(tenant, resourcePath("v1", "persistentvolumeclaims", NS, "data"));
        return c?.status?.phase === "Bound" ? c : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: "tenant claim data Bound" },
    );
    const hostClaim = await get(hostApi, resourcePath("v1", "persistentvolumeclaims", HOST_NS, hostNameOf("data")));
    expect(hostClaim?.status?.phase).toBe("Bound");
    expect(claim.status?.["capacity"]).toEqual(hostClaim?.status?.["capacity"]);
    expect(claim.status?.["accessModes"]).toEqual(["ReadWriteOnce"]);
    const volumeName = claim.spec?.["volumeName"] as string;
    expect(volumeName).toBe(`pvc-${claim.metadata.uid}`);
    const volume = await get(tenant, `/api/v1/persistentvolumes/${volumeName}`);
    expect(volume?.spec?.["claimRef"]).toMatchObject({ namespace: NS, name: "data", uid: claim.metadata.uid });
    expect((volume?.spec?.["csi"] as { volumeHandle: string }).volumeHandle).toBe(hostClaim?.spec?.["volumeName"]);
    await waitFor(
      async () =>
        (await get(tenant, `/api/v1/persistentvolumes/${volumeName}`))?.status?.phase === "Bound" || undefined,
      {
        timeoutMs: 15_000,
        description: "virtual volume Bound",
      },
    );
  });

  it("writes the host Service's load-balancer address back to the tenant Service", async () => {
    await tenant.request("POST", resourcePath("v1", "services", NS), {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "front", namespace: NS },
        spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 80 }] },
      },
    });
    await setLoadBalancerIngress(host.kubeConfig, HOST_NS, hostNameOf("front"), LB_ADDRESS);
    const svc = await waitFor(
      async () => {
        const s = await get(tenant, resourcePath("v1", "services", NS, "front"));
        const ingress = (s?.status?.["loadBalancer"] as { ingress?: { ip: string }[] } | undefined)?.ingress;
        return ingress?.[0]?.ip === LB_ADDRESS ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "tenant Service front shows the host address" },
    );
    expect(svc.metadata.name).toBe("front");
  });

  it("reports a back-sync write the tenant refuses in the Synced condition, and recovers when it is allowed", async () => {
    // The tenant refuses status writes for one pod, as an admission policy of its own might.
    await tenant.request("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", {
      body: {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicy",
        metadata: { name: "freeze-stuck" },
        spec: {
          failurePolicy: "Fail",
          matchConstraints: {
            resourceRules: [
              { apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["pods/status"] },
            ],
          },
          validations: [{ expression: "object.metadata.name != 'stuck'", message: "status of stuck is frozen" }],
        },
      },
    });
    await tenant.request("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", {
      body: {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicyBinding",
        metadata: { name: "freeze-stuck" },
        spec: { policyName: "freeze-stuck", validationActions: ["Deny"] },
      },
    });
    // Policies take effect once the API server's informer has them.
    await new Promise((r) => setTimeout(r, 2_000));
    await tenant.request("POST", podPath(NS), {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "stuck", namespace: NS },
        spec: { containers: [{ name: "stuck", image: "nginx:1.27" }] },
      },
    });
    const down = await waitFor(
      async () => {
        const { condition } = await syncedState(host.kubeConfig, TENANT.name);
        return condition?.status === "False" && condition.reason === "BackSyncErrors" ? condition : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, description: "Synced=False BackSyncErrors" },
    );
    expect(down.message).toContain("cannot be written back");
    expect((await worker.probe("/metrics")).body).toMatch(
      /tenantplane_sync_backsync_failures_total\{kind="Pod"[^}]*\} [1-9]/,
    );
    await tenant.request(
      "DELETE",
      "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/freeze-stuck",
    );
    await waitFor(async () => (await get(tenant, podPath(NS, "stuck")))?.status?.phase === "Running" || undefined, {
      timeoutMs: 90_000,
      intervalMs: 500,
      description: "stuck pod Running after the policy is lifted",
    });
    await waitForSynced(host.kubeConfig, TENANT.name, 30_000);
  });
});

describe("back-sync: the tenant reads its host quota", () => {
  type Quota = Obj & {
    metadata: Obj["metadata"] & { annotations?: Record<string, string> };
    status?: { hard?: Record<string, string>; used?: Record<string, string> };
  };
  type View = Obj & { data?: Record<string, string> };
  const VIEW = resourcePath("v1", "configmaps", "kube-public", "tenantplane-quota");
  const hostQuota = () =>
    hostApi.request<Quota>("GET", resourcePath("v1", "resourcequotas", HOST_NS, "tenantplane-quota"));
  const json = (view: View | undefined, key: string) =>
    JSON.parse(view?.data?.[key] ?? "{}") as Record<string, string | undefined>;
  // Whole numbers only: object counts, which is what these checks compare.
  const minus = (a: string | undefined, b: string | undefined) => String(Number(a ?? 0) - Number(b ?? 0));

  // The tenant's view agrees with the host quota as read at the same moment: its usage and limit of
  // pods are the host's minus the control plane's two.
  async function viewMatchingHost(description: string, extra: (view: View) => boolean = () => true) {
    return waitFor(
      async () => {
        const [quota, view] = await Promise.all([hostQuota(), get(tenant, VIEW) as Promise<View | undefined>]);
        const share = JSON.parse(quota.metadata.annotations?.["tenantplane.io/control-plane-share"] ?? "{}") as Record<
          string,
          string
        >;
        const agrees =
          json(view, "used")["pods"] === minus(quota.status?.used?.["pods"], share["pods"]) &&
          json(view, "hard")["pods"] === minus(quota.status?.hard?.["pods"], share["pods"]);
        return view !== undefined && agrees && extra(view) ? { quota, view } : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, description },
    );
  }

  it("mirrors limits and usage into kube-public/tenantplane-quota, the control plane's share taken out", async () => {
    const { quota, view } = await viewMatchingHost("the tenant's quota view agrees with the host quota");
    // The profile's own numbers (the built-in defaults), not the host's totals.
    expect(json(view, "hard")).toMatchObject({ pods: "50", "limits.cpu": "24", "requests.memory": "16Gi" });
    expect(json(view, "controlPlaneShare")).toMatchObject({ pods: "2" });
    expect(quota.status?.hard?.["pods"]).toBe("52");
    expect(view.data?.["profile"]).toBe("back-sync-lb");
    expect(view.data?.["hostQuota"]).toBe(`ResourceQuota tenantplane-quota in host namespace ${HOST_NS}`);
    expect(view.data?.["summary"]).toMatch(/^RESOURCE +USED +HARD\n/);
    // Every tenant user may read it; nothing else of tenantplane's is readable that way.
    const binding = await get(
      tenant,
      resourcePath("rbac.authorization.k8s.io/v1", "rolebindings", "kube-public", "tenantplane-quota-reader"),
    );
    expect(binding?.["subjects"]).toEqual([
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" },
    ]);
    // Never a ResourceQuota in the tenant: its own quota controller would enforce it a second time.
    expect((await tenant.request<List>("GET", "/api/v1/resourcequotas")).items).toEqual([]);
  });

  it("follows usage and a profile change, and overwrites a tenant's edit", async () => {
    const before = json((await viewMatchingHost("view current before the probe pod")).view, "used")["pods"];
    await tenant.request("POST", podPath(NS), {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "quota-probe", namespace: NS },
        spec: { containers: [{ name: "probe", image: "nginx:1.27" }] },
      },
    });
    await viewMatchingHost(
      "the probe pod counted in the tenant's view",
      (v) => json(v, "used")["pods"] === String(Number(before) + 1),
    );

    await applyProfile(KubernetesObjectApi.makeApiClient(host.kubeConfig), {
      resourceQuota: { hard: { pods: "40", "limits.cpu": "12", "services.loadbalancers": "1" } },
    });
    const { view } = await viewMatchingHost(
      "the new profile's limits in the tenant's view",
      (v) => json(v, "hard")["pods"] === "40",
    );
    // The profile's other limits keep their defaults: the apply sets these two keys of its map.
    expect(json(view, "hard")).toMatchObject({ pods: "40", "limits.cpu": "12", "requests.memory": "16Gi" });

    await tenant.request("PUT", VIEW, {
      body: { ...view, data: { ...view.data, hard: '{"pods":"1000"}' } },
    });
    await waitFor(async () => json((await get(tenant, VIEW)) as View, "hard")["pods"] === "40" || undefined, {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: "the tenant's edit of its quota view overwritten",
    });
  });
});
