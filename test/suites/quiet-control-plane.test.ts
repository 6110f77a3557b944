import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient } from "@tenantplane/kube";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  agentOf,
  installCrds,
  isWrite,
  readAudit,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  trackFailures,
  waitFor,
  consumersSettled,
  describeRequests,
  requestsOfResync,
  type AuditRequest,
  type HostCluster,
  type RunningService,
  type NatsServer,
  type TenantApiServer,
} from "../harness/index.js";

// The provisioner and the isolation service at rest: a pass over an unchanged tenant writes
// nothing, a tenant waiting for its control plane is not redelivered, and a hand edit is
// repaired by the watch event it causes, not by the next resync. Requests are told apart by
// user agent in the host API server's audit log.

const failures = trackFailures();
let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let api: JsonClient;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let isolation: RunningService;
let watcher: RunningService;
let provisioner: RunningService;
const tenantApis: TenantApiServer[] = [];
const SERVICES = ["tenantplane-provisioner", "tenantplane-isolation"];
const DURABLES = ["provisioner", "isolation"];
// As the chart configures the provisioner: each service's fixed role bound in every tenant
// namespace (the ClusterRoles need not exist for the bindings to be made and read).
const ROLE_BINDINGS = ["provisioner", "isolation"]
  .map((s) => `tenantplane-${s}-tenant=tenantplane-system/tenantplane-${s}`)
  .join(",");

type Tc = {
  metadata: { generation?: number };
  status?: { phase?: string; conditions?: Array<{ type: string; status: string; reason: string }> };
};

const tcPath = (name: string) => `/apis/tenantplane.io/v1alpha1/tenantclusters/${name}`;

/** Server-side applies one of tenantplane's cluster-scoped objects as the e2e field manager. */
async function applyTenantplaneObject(plural: string, kind: string, name: string, spec: object): Promise<void> {
  const body = { apiVersion: "tenantplane.io/v1alpha1", kind, metadata: { name }, spec };
  const init = { query: { fieldManager: "e2e", force: true }, contentType: "application/apply-patch+yaml", body };
  await api.request("PATCH", `/apis/tenantplane.io/v1alpha1/${plural}/${name}`, init);
}

async function createTenant(name: string, extra: { size?: string; isolationProfile?: string } = {}): Promise<void> {
  await applyTenantplaneObject("tenantclusters", "TenantCluster", name, {
    controlPlane: { storage: { size: extra.size ?? "1Gi" }, expose: { loadBalancer: { enabled: true } } },
    ...(extra.isolationProfile ? { isolationProfileRef: { name: extra.isolationProfile } } : {}),
  });
}

/**
 * A profile spelling its quantities as the API server does not store them ("8192Mi" is kept as
 * "8Gi", "0.5" as "500m"): a resync must still see the objects as up to date.
 */
async function createNonCanonicalProfile(name: string): Promise<void> {
  await applyTenantplaneObject("isolationprofiles", "IsolationProfile", name, {
    resourceQuota: { hard: { pods: "50", "requests.memory": "8192Mi", "limits.cpu": "8000m" } },
    limitRange: { container: { default: { cpu: "0.5", memory: "1024Mi" } } },
  });
}

async function waitForPhase(name: string, phase: string, timeoutMs = 120_000): Promise<void> {
  await waitFor(async () => (await api.request<Tc>("GET", tcPath(name))).status?.phase === phase, {
    timeoutMs,
    intervalMs: 500,
    description: `${name} phase ${phase}`,
  });
}

// Both services have handled (and settled) every message published so far.
const consumersCaughtUp = () => consumersSettled(jsm, DURABLES);

const byServices = (since: number): AuditRequest[] =>
  readAudit(host.auditLogPath!, since).filter((r) => SERVICES.includes(agentOf(r)));

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "quiet", auditLog: true }), startNats()]);
  api = new JsonClient(host.kubeConfig, { userAgent: "e2e/1" });
  await installCrds(host.kubeConfig, crdManifests());
  await api.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "tenantplane-system" } } });
  // No periodic resync within the suite: every pass is caused by a message the test publishes
  // or by a watch event.
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "3600", POD_NAMESPACE: "tenantplane-system" },
  });
  [watcher, provisioner, isolation] = await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner", { TENANT_ROLE_BINDINGS: ROLE_BINDINGS }),
    fleet.start("isolation"),
  ]);
  nc = await connect({ servers: nats.url });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  // A host cluster, NATS and three services: slow to start on a loaded machine.
}, 400_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  for (const t of tenantApis) await t.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("a tenant at rest costs nothing", () => {
  it("a tenant waiting for its load balancer is settled, not redelivered, and is woken by the address", async () => {
    const created = Date.now();
    await createTenant("waits");
    await waitFor(
      async () =>
        (await api.request<Tc>("GET", tcPath("waits"))).status?.conditions?.find((c) => c.type === "ControlPlaneReady")
          ?.reason === "WaitingForLoadBalancer",
      { timeoutMs: 120_000, intervalMs: 500, description: "waits: WaitingForLoadBalancer" },
    );
    // A new tenant's namespace comes as a watch event: isolation neither reads it before the
    // provisioner has made it nor reports it missing meanwhile.
    const early = byServices(created).filter((r) => agentOf(r) === "tenantplane-isolation");
    expect(describeRequests(early.filter((r) => r.verb === "get" && r.resource === "namespaces"))).toEqual([]);
    await consumersCaughtUp();
    const before = await jsm.consumers.info("TENANTS", "provisioner");
    const since = Date.now();

    await new Promise((r) => setTimeout(r, 20_000));
    const after = await jsm.consumers.info("TENANTS", "provisioner");
    expect(after.num_redelivered).toBe(before.num_redelivered);
    expect(after.num_ack_pending).toBe(0);
    expect(after.delivered.stream_seq).toBe(before.delivered.stream_seq);
    expect(describeRequests(byServices(since).filter((r) => r.namespace === "tp-waits" || r.name === "waits"))).toEqual(
      [],
    );

    // The address is a watch event on the Service: the tenant goes on without any message.
    await setLoadBalancerIngress(host.kubeConfig, "tp-waits", "k3s", "127.0.0.21");
    tenantApis.push(await startTenantStandIn(host.kubeConfig, "waits", "127.0.0.21"));
    await waitForPhase("waits", "Ready", 120_000);
    // Status changes on the way to Ready may publish fresh changes; none was a redelivery.
    expect((await jsm.consumers.info("TENANTS", "provisioner")).num_redelivered).toBe(before.num_redelivered);
  }, 400_000);

  it("a resync of an unchanged Ready tenant makes no write and no LIST, its RoleBindings included", async () => {
    await createNonCanonicalProfile("spelled-out");
    await createTenant("quiet", { size: "1024Mi", isolationProfile: "spelled-out" });
    await setLoadBalancerIngress(host.kubeConfig, "tp-quiet", "k3s", "127.0.0.20");
    tenantApis.push(await startTenantStandIn(host.kubeConfig, "quiet", "127.0.0.20"));
    await waitForPhase("quiet", "Ready");
    // Trust the server: it stored other spellings than the ones sent. The quota's limits are the
    // profile's plus the control plane's share (k3s at the LimitRange's default limit, and DNS).
    const quota = await api.request<{ spec: { hard: Record<string, string> } }>(
      "GET",
      "/api/v1/namespaces/tp-quiet/resourcequotas/tenantplane-quota",
    );
    expect(quota.spec.hard).toMatchObject({ pods: "52", "requests.memory": "8480Mi", "limits.cpu": "8700m" });
    const limits = await api.request<{ spec: { limits: Array<{ type: string; default?: Record<string, string> }> } }>(
      "GET",
      "/api/v1/namespaces/tp-quiet/limitranges/tenantplane-limits",
    );
    expect(limits.spec.limits.find((l) => l.type === "Container")?.default).toEqual({ cpu: "500m", memory: "1Gi" });
    type Sts = { spec: { volumeClaimTemplates: Array<{ spec: { resources: { requests: { storage: string } } } }> } };
    const sts = await api.request<Sts>("GET", "/apis/apps/v1/namespaces/tp-quiet/statefulsets/k3s");
    expect(sts.spec.volumeClaimTemplates[0]?.spec.resources.requests.storage).toBe("1Gi");
    // The RoleBinding step ran: the services' roles are bound in the namespace.
    const bindings = await api.request<{ items: Array<{ metadata: { name: string } }> }>(
      "GET",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/tp-quiet/rolebindings",
    );
    expect(bindings.items.map((b) => b.metadata.name).sort()).toEqual([
      "tenantplane-isolation-tenant",
      "tenantplane-provisioner-tenant",
    ]);
    await consumersCaughtUp();
    await new Promise((r) => setTimeout(r, 2_000));

    const requests = await requestsOfResync({
      js,
      jsm,
      tenant: "quiet",
      durables: DURABLES,
      auditLogPath: host.auditLogPath!,
      agents: SERVICES,
    });
    expect(describeRequests(requests.filter(isWrite))).toEqual([]);
    expect(describeRequests(requests.filter((r) => r.verb === "list"))).toEqual([]);
    expect(describeRequests(requests.filter((r) => r.verb === "get"))).toEqual([]);
  }, 400_000);

  it("a hand edit of an isolation object, a control-plane Service or a RoleBinding is repaired by its watch event", async () => {
    const npPath = "/apis/networking.k8s.io/v1/namespaces/tp-quiet/networkpolicies/tenantplane-default-deny";
    const svcPath = "/api/v1/namespaces/tp-quiet/services/k3s-headless";
    type Np = { spec: { policyTypes: string[] } };
    type Svc = { spec: { publishNotReadyAddresses?: boolean } };
    const original = (await api.request<Np>("GET", npPath)).spec.policyTypes;
    expect(original.length).toBeGreaterThan(1);
    expect((await api.request<Svc>("GET", svcPath)).spec.publishNotReadyAddresses).toBe(true);
    const lastMessage = (await jsm.streams.info("TENANTS")).state.last_seq;

    const edit = { query: { fieldManager: "kubectl-edit" }, contentType: "application/merge-patch+json" };
    await api.request("PATCH", npPath, { ...edit, body: { spec: { policyTypes: ["Ingress"] } } });
    await api.request("PATCH", svcPath, { ...edit, body: { spec: { publishNotReadyAddresses: false } } });
    const rbPath = "/apis/rbac.authorization.k8s.io/v1/namespaces/tp-quiet/rolebindings/tenantplane-isolation-tenant";
    const uidOf = async () =>
      (await api.request<{ metadata: { uid: string } }>("GET", rbPath).catch(() => undefined))?.metadata.uid;
    const removed = await uidOf();
    expect(removed).toBeDefined();
    await api.request("DELETE", rbPath);

    await waitFor(async () => (await api.request<Np>("GET", npPath)).spec.policyTypes.length === original.length, {
      timeoutMs: 15_000,
      intervalMs: 250,
      description: "the NetworkPolicy's policyTypes restored",
    });
    await waitFor(async () => (await api.request<Svc>("GET", svcPath)).spec.publishNotReadyAddresses === true, {
      timeoutMs: 15_000,
      intervalMs: 250,
      description: "the headless Service's publishNotReadyAddresses restored",
    });
    await waitFor(
      async () => {
        const uid = await uidOf();
        return uid !== undefined && uid !== removed;
      },
      { timeoutMs: 15_000, intervalMs: 250, description: "the deleted RoleBinding created again" },
    );
    // No message brought the repair: the resync is an hour away and nobody published.
    expect((await jsm.streams.info("TENANTS")).state.last_seq).toBe(lastMessage);
  });
});

describe("a new tenant's first condition", () => {
  // The provisioner's grace for the isolation service's first report (ISOLATION_REPORT_GRACE_MS).
  const GRACE_MS = 10_000;
  type Created = { metadata: { creationTimestamp: string } };
  const createdAt = async (name: string) =>
    Date.parse((await api.request<Created>("GET", tcPath(name))).metadata.creationTimestamp);
  const statusWrites = (name: string, since: number) =>
    byServices(since).filter(
      (r) =>
        agentOf(r) === "tenantplane-provisioner" &&
        r.uri.split("?")[0]!.endsWith(`/tenantclusters/${name}/status`) &&
        isWrite(r),
    );
  const stsCreated = (name: string, since: number) =>
    byServices(since).find((r) => r.verb === "create" && r.resource === "statefulsets" && r.namespace === `tp-${name}`)
      ?.receivedMs;

  it("is not a report of waiting for isolation while the isolation service is about to report", async () => {
    const since = Date.now();
    await applyTenantplaneObject("tenantclusters", "TenantCluster", "prompt", {
      controlPlane: { storage: { size: "1Gi" } },
    });
    await waitFor(async () => stsCreated("prompt", since), {
      timeoutMs: 120_000,
      intervalMs: 500,
      description: "prompt's StatefulSet created",
    });
    const created = await createdAt("prompt");
    const stsAt = stsCreated("prompt", since)!;
    // The creation timestamp is cut to the second; the grace counts from it.
    const early = statusWrites("prompt", since).filter(
      (r) => r.receivedMs < stsAt && r.receivedMs < created + GRACE_MS,
    );
    expect(describeRequests(early)).toEqual([]);
    const ready = (await api.request<Tc>("GET", tcPath("prompt"))).status?.conditions?.find(
      (c) => c.type === "IsolationApplied",
    );
    expect(ready?.status).toBe("True");
    // The first report came with the control plane, not before it.
    await waitFor(
      async () =>
        ["WaitingForPod", "ApiServerUnreachable"].includes(
          (await api.request<Tc>("GET", tcPath("prompt"))).status?.conditions?.find(
            (c) => c.type === "ControlPlaneReady",
          )?.reason ?? "",
        ),
      { timeoutMs: 60_000, intervalMs: 500, description: "prompt reports its control plane" },
    );
  }, 300_000);

  it("names a stalled isolation service once the grace is over, and goes on when it reports", async () => {
    await isolation.stop();
    const since = Date.now();
    await applyTenantplaneObject("tenantclusters", "TenantCluster", "stalled", {
      controlPlane: { storage: { size: "1Gi" } },
    });
    const waiting = async () =>
      (await api.request<Tc>("GET", tcPath("stalled"))).status?.conditions?.find((c) => c.type === "ControlPlaneReady")
        ?.reason === "WaitingForIsolation";
    await waitFor(waiting, {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: "stalled: WaitingForIsolation after the grace",
    });
    const created = await createdAt("stalled");
    const writes = statusWrites("stalled", since);
    expect(writes.length).toBeGreaterThan(0);
    // Held for the grace, then written by the pass its timer woke (no message, no resync).
    expect(Math.min(...writes.map((r) => r.receivedMs))).toBeGreaterThanOrEqual(created + GRACE_MS - 1_000);
    expect(stsCreated("stalled", since)).toBeUndefined();

    isolation = await fleet.start("isolation");
    await waitFor(async () => stsCreated("stalled", since), {
      timeoutMs: 120_000,
      intervalMs: 500,
      description: "stalled's StatefulSet once isolation reports",
    });
  }, 300_000);
});

describe("a change whose message comes before the service's own watch sees it", () => {
  // The watcher's message and a service's watch race: a pass run for the message may read the
  // cache as it was. The cache catching up must wake a pass of its own, so here the watcher is
  // stopped and the change reaches the isolation service through its watch alone.
  const quotaPods = async (tenant: string) => {
    type Quotas = { items: Array<{ spec: { hard?: Record<string, string> } }> };
    const quotas = await api.request<Quotas>("GET", `/api/v1/namespaces/tp-${tenant}/resourcequotas`, {
      query: { labelSelector: "app.kubernetes.io/managed-by=tenantplane" },
    });
    return quotas.items.map((q) => q.spec.hard?.["pods"]);
  };
  const profile = (name: string, pods: string) =>
    applyTenantplaneObject("isolationprofiles", "IsolationProfile", name, { resourceQuota: { hard: { pods } } });
  // The host quota allows the profile's pods plus the control plane's two (k3s and DNS).
  const quotaSays = (tenant: string, pods: string, what: string) =>
    waitFor(async () => (await quotaPods(tenant)).join() === String(Number(pods) + 2), {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: `${tenant}'s quota allows ${pods} pods (${what})`,
    });

  it("applies a new profile reference and a profile edit that no message announces", async () => {
    // Stopped before the tenant exists, so no message about it is waiting for redelivery either.
    await watcher.stop();
    try {
      await Promise.all([profile("catchup-first", "11"), profile("catchup-second", "12")]);
      const spec = (ref: string) => ({
        controlPlane: { storage: { size: "1Gi" } },
        isolationProfileRef: { name: ref },
      });
      await applyTenantplaneObject("tenantclusters", "TenantCluster", "catchup", spec("catchup-first"));
      await quotaSays("catchup", "11", "woken by the new namespace");
      await applyTenantplaneObject("tenantclusters", "TenantCluster", "catchup", spec("catchup-second"));
      await quotaSays("catchup", "12", "woken by the TenantCluster's new generation");
      await profile("catchup-second", "13");
      await quotaSays("catchup", "13", "woken by the IsolationProfile it references");
    } finally {
      watcher = await fleet.start("watcher");
    }
  }, 300_000);
});

describe("a tenant API that never answers", () => {
  // Last in the file: it replaces the provisioner with one that reconciles one tenant at a time.
  const silentConnections: Array<{ open: boolean; socket: Socket }> = [];
  let silentApi: Server | undefined;

  afterAll(async () => {
    for (const { socket } of silentConnections) socket.destroy();
    await new Promise((r) => (silentApi ? silentApi.close(r) : r(undefined)));
  });

  it("does not hold up another tenant while its probe waits for an answer", async () => {
    // Accepts the probe's connection and never says a word, so the probe waits its full timeout.
    silentApi = createServer((socket) => {
      const connection = { open: true, socket };
      silentConnections.push(connection);
      socket.on("close", () => (connection.open = false));
      socket.on("error", () => undefined);
    });
    await new Promise<void>((r) => silentApi!.listen(6443, "127.0.0.140", r));
    await provisioner.stop();
    // One slot: a probe awaited inside a pass would leave none for anyone else while it waits.
    provisioner = await fleet.start("provisioner", { TENANT_ROLE_BINDINGS: ROLE_BINDINGS, RECONCILE_CONCURRENCY: "1" });

    await createTenant("silent");
    await setLoadBalancerIngress(host.kubeConfig, "tp-silent", "k3s", "127.0.0.140");
    const probing = await waitFor(() => silentConnections.find((c) => c.open), {
      timeoutMs: 120_000,
      intervalMs: 20,
      description: "the provisioner's probe of silent's API to connect",
    });

    await createTenant("prompt");
    await waitFor(
      async () =>
        (await api.request("GET", "/api/v1/namespaces/tp-prompt/secrets/prompt-pki").catch(() => undefined)) !==
        undefined,
      { timeoutMs: 60_000, intervalMs: 50, description: "prompt's PKI Secret" },
    );
    // prompt's first pass ran while silent's probe still waited: the probe's answer, written as
    // ApiServerUnreachable, came later. A pass awaiting the probe would have held the only slot
    // until the answer was written, and prompt's pass would have come after it.
    const unreachable = async () =>
      (await api.request<Tc>("GET", tcPath("silent"))).status?.conditions?.find(
        (c) => c.type === "ControlPlaneReady" && c.reason === "ApiServerUnreachable",
      );
    expect(await unreachable()).toBeUndefined();
    expect(probing.open).toBe(true);
    const condition = await waitFor(unreachable, {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: "silent: ApiServerUnreachable, once its probe timed out",
    });
    expect(condition.status).toBe("False");
  }, 300_000);
});
