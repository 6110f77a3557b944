import { CoreV1Api, type KubernetesObject } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { resourcePath, type JsonClient, Objects } from "@tenantplane/kube";
import { ANNOTATION_VIRTUAL_NAME, LABEL_MANAGED_BY, LABEL_TENANT, MANAGED_BY } from "@tenantplane/mapping";
import { TENANT_CONTROLLERS } from "@tenantplane/provisioner/desired-objects";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  caHashOf,
  createPrivateNode,
  followTenantScheduler,
  installCrds,
  provisionTenant,
  readJoinCredential,
  selfSubjectReview,
  ServiceFleet,
  startHostCluster,
  startNats,
  startTenantKwok,
  tenantJsonClient,
  isAvailable,
  sampleMinimum,
  trackFailures,
  waitFor,
  waitForSynced,
  waitForTenantServiceAccount,
  type HostCluster,
  type MinimumSampler,
  type NatsServer,
  type RunningService,
  type TenantApiServer,
  type TenantKwok,
  type TenantSchedulerFollower,
} from "../harness/index.js";

// A tenant running a Deployment (3 replicas, a PodDisruptionBudget of minAvailable 2), a
// StatefulSet with a claim, Services and ConfigMaps moves Shared → Dedicated → Private →
// Dedicated → Shared. Private: the provisioner rolls k3s without --disable-scheduler (the
// harness then runs the tenant's own kube-scheduler, as k3s would), nodes join the tenant's API
// (kwok on the tenant stand-in, after the join credential is proven against it), the sync worker
// evicts the tenant's Pods through its API, the tenant's controllers recreate them and its
// scheduler places them on the private nodes; no host copy of any Pod remains. A Pod on a
// host-backed claim blocks the move, named. After every move: no tenant object was made again,
// the tenant datastore went on (a ConfigMap's resourceVersion only grows), the budget held at
// every 200 ms sample, the admin kubeconfig still works, status.isolation tells the move. Every
// move goes through a SIGKILL of the sync worker driving it, while the budget holds it in Moving,
// and ends under the migration it started (same startedAt); the provisioner is SIGKILLed as the
// tenant leaves Private, and its successor rolls k3s back. The k3s stand-in (API server, etcd,
// controller manager) is not restarted by the StatefulSet's rolls: only the scheduler follows them.
// Tenant API stand-in of this suite: 127.0.0.246 (range 127.0.0.246-249).

const failures = trackFailures();
const TENANT = "prv";
const ADDRESS = "127.0.0.246";
const NS = "app";
const POOL = { "tenantplane.io/pool": TENANT };
const DEDICATED_NODES = ["kwok-node-1", "kwok-node-2"];
const PRIVATE_NODES = ["prv-private-0", "prv-private-1"];
const PRIVATE_LABELS = { "node-role.kubernetes.io/worker": "", "example.com/rack": "r1" };
const MOVE_TIMEOUT_MS = 240_000;
const STEP_TIMEOUT_MS = 600_000;
const CLAIM = "data-db-0";

type Obj = KubernetesObject & {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};
interface Migration {
  from: string;
  to: string;
  phase: string;
  moved?: number;
  left?: number;
  blocked?: { namespace: string; name: string; reason: string }[];
  startedAt?: string;
  finishedAt?: string;
}
interface IsolationStatus {
  mode?: string;
  migration?: Migration;
}
type Placement = "Shared" | "Dedicated" | "Private";

const hasPool = (copy: Obj) =>
  (copy.spec?.["nodeSelector"] as Record<string, string> | undefined)?.["tenantplane.io/pool"] === TENANT;

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let hostObjects: Objects;
let core: CoreV1Api;
let standIn: TenantApiServer;
let tenant: JsonClient;
let worker: RunningService;
let provisioner: RunningService;
let scheduler: TenantSchedulerFollower;
let kwok: TenantKwok | undefined;
/** Tenant objects (not Pods) by kind/name: uid@creationTimestamp, as first read. */
let identities: Map<string, string>;
/** Tenant objects the suite deleted on purpose. */
const deleted = new Set<string>();
let tickerVersion = 0n;
let tick = 0;

const workerEnv = { PARTITIONS: "4", LEASE_TTL_SECONDS: "3", LEASE_BUCKET: "private-e2e" };

async function isolationStatus(): Promise<IsolationStatus> {
  const tc = await hostObjects.get<Obj>("tenantplane.io/v1alpha1", "TenantCluster", TENANT);
  return ((tc?.status ?? {}) as { isolation?: IsolationStatus }).isolation ?? {};
}

async function setIsolation(isolation: Record<string, unknown>): Promise<void> {
  await hostObjects.mergePatch(
    { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name: TENANT } },
    { spec: { isolation } },
  );
}

async function setBudget(minAvailable: number): Promise<void> {
  await tenant.request("PATCH", `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/web`, {
    body: { spec: { minAvailable } },
    contentType: "application/merge-patch+json",
  });
}

async function tenantPods(selector?: string): Promise<Obj[]> {
  const list = await tenant.request<{ items: Obj[] }>("GET", resourcePath("v1", "pods", NS), {
    ...(selector === undefined ? {} : { query: { labelSelector: selector } }),
  });
  return list.items;
}

/** The host copies of the tenant's Pods (not its control plane), by their tenant Pod's name. */
async function hostPods(): Promise<Map<string, Obj>> {
  const list = await hostObjects.list<Obj>("v1", "Pod", {
    namespace: `tp-${TENANT}`,
    labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${TENANT}`,
  });
  return new Map(
    list
      .filter((p) => p.metadata?.annotations?.[ANNOTATION_VIRTUAL_NAME] !== undefined)
      .map((p) => [p.metadata!.annotations![ANNOTATION_VIRTUAL_NAME]!, p]),
  );
}

const isReady = (pod: Obj) => isAvailable(pod);

/** Counts the web Pods Ready and not terminating (what the disruption budget counts) every 200 ms until stopped. */
const sampleAvailable = (): MinimumSampler =>
  sampleMinimum(async () => (await tenantPods("app=web")).filter(isReady).length);

async function waitForMigration(to: string, phase: string, extra: (s: IsolationStatus) => boolean = () => true) {
  return waitFor(
    async () => {
      const s = await isolationStatus();
      return s.migration?.to === to && s.migration.phase === phase && extra(s) ? s : undefined;
    },
    { timeoutMs: MOVE_TIMEOUT_MS, intervalMs: 500, description: `migration to ${to} ${phase}` },
  );
}

/**
 * Where `names`' Pods run, or why not yet: each tenant Pod Ready, and its host copy (Shared,
 * Dedicated) on the nodes of that placement, or (Private) on a private node with no host copy.
 */
async function placedAs(placement: Placement, selector: string, count: number): Promise<Obj[] | string> {
  const pods = (await tenantPods(selector)).filter((p) => p.metadata?.deletionTimestamp === undefined);
  if (pods.length !== count) return `${pods.length} of ${count} Pods (${selector})`;
  const notReady = pods.filter((p) => !isReady(p)).map((p) => p.metadata?.name);
  if (notReady.length > 0) return `not Ready: ${notReady.join(", ")}`;
  const copies = await hostPods();
  if (placement === "Private") {
    const off = pods.filter((p) => !PRIVATE_NODES.includes(String(p.spec?.["nodeName"])));
    if (off.length > 0)
      return `not on a private node: ${off.map((p) => `${p.metadata?.name}@${p.spec?.["nodeName"]}`)}`;
    const copied = pods.filter((p) => copies.has(p.metadata?.name ?? ""));
    if (copied.length > 0) return `host copies remain: ${copied.map((p) => p.metadata?.name).join(", ")}`;
    return pods;
  }
  // Shared copies go wherever the host scheduler puts them (the pool's nodes are untainted
  // then): what marks them Shared is the absence of the pool's nodeSelector.
  const wrong = pods.filter((p) => {
    const copy = copies.get(p.metadata?.name ?? "");
    const nodeName = copy?.spec?.["nodeName"];
    if (copy === undefined || typeof nodeName !== "string") return true;
    return placement === "Dedicated" ? !DEDICATED_NODES.includes(nodeName) || !hasPool(copy) : hasPool(copy);
  });
  if (wrong.length > 0) {
    return `host copy missing, unscheduled or not ${placement}: ${wrong
      .map((p) => {
        const copy = copies.get(p.metadata?.name ?? "");
        return `${p.metadata?.name}@${copy?.spec?.["nodeName"] ?? "none"}${copy && hasPool(copy) ? " (pool selector)" : ""}`;
      })
      .join(", ")}`;
  }
  const onPrivate = pods.filter((p) => PRIVATE_NODES.includes(String(p.spec?.["nodeName"])));
  if (onPrivate.length > 0) return `still bound to a private node: ${onPrivate.map((p) => p.metadata?.name)}`;
  return pods;
}

async function waitPlaced(placement: Placement, selector: string, count: number): Promise<Obj[]> {
  let last = "";
  return waitFor(
    async () => {
      const placed = await placedAs(placement, selector, count);
      if (typeof placed === "string") {
        last = placed;
        return undefined;
      }
      return placed;
    },
    { timeoutMs: MOVE_TIMEOUT_MS, intervalMs: 500, description: `${selector} placed ${placement}` },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}; last: ${last}`);
  });
}

const IDENTITY_KINDS: [apiVersion: string, resource: string][] = [
  ["v1", "configmaps"],
  ["v1", "services"],
  ["v1", "serviceaccounts"],
  ["v1", "persistentvolumeclaims"],
  ["apps/v1", "deployments"],
  ["apps/v1", "replicasets"],
  ["apps/v1", "statefulsets"],
  ["policy/v1", "poddisruptionbudgets"],
];

/** Every tenant object of the suite but Pods, read from the tenant API now. */
async function tenantIdentities(client: JsonClient = tenant): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const ns = await client.request<Obj>("GET", resourcePath("v1", "namespaces", undefined, NS));
  out.set(`namespaces/${NS}`, `${ns.metadata?.uid}@${String(ns.metadata?.creationTimestamp)}`);
  for (const [apiVersion, resource] of IDENTITY_KINDS) {
    const list = await client.request<{ items: Obj[] }>("GET", resourcePath(apiVersion, resource, NS));
    for (const o of list.items) {
      out.set(`${resource}/${o.metadata?.name}`, `${o.metadata?.uid}@${String(o.metadata?.creationTimestamp)}`);
    }
  }
  return out;
}

/**
 * After a move: nothing of the tenant made again (each object first read is there with its uid
 * and creationTimestamp, but for those the suite deleted, and none is new), the datastore went
 * on (the ticker ConfigMap's resourceVersion grows past every earlier one), the admin
 * kubeconfig read afresh from its Secret works, and status.isolation reads back the move.
 */
async function checkAfterMove(from: Placement, to: Placement): Promise<void> {
  const fresh = await tenantJsonClient(host.kubeConfig, TENANT);
  const now = await tenantIdentities(fresh);
  const expected = new Map([...identities].filter(([key]) => !deleted.has(key)));
  expect(Object.fromEntries(now)).toEqual(Object.fromEntries(expected));

  tick++;
  const ticker = await fresh.request<Obj>("PATCH", resourcePath("v1", "configmaps", NS, "ticker"), {
    body: { data: { step: `${tick}: ${from} → ${to}` } },
    contentType: "application/merge-patch+json",
  });
  const version = BigInt(ticker.metadata?.resourceVersion ?? "0");
  console.error(`[e2e] ${from} → ${to}: ticker resourceVersion ${version} (before ${tickerVersion})`);
  expect(version > tickerVersion).toBe(true);
  tickerVersion = version;

  const s = await isolationStatus();
  expect(s.mode).toBe(to);
  expect(s.migration).toMatchObject({ from, to, phase: "Complete", left: 0 });
  expect(s.migration?.blocked).toBeUndefined();
  expect(Date.parse(s.migration!.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(s.migration!.startedAt!));
}

/** The budget held through a move: more than three samples, never under minAvailable 2. */
async function budgetHeld(sampler: ReturnType<typeof sampleAvailable>, move: string): Promise<void> {
  const { min, samples } = await sampler.stop();
  console.error(`[e2e] ${move}: fewest available web Pods ${min} over ${samples} samples`);
  expect(samples).toBeGreaterThan(3);
  expect(min).toBeGreaterThanOrEqual(2);
}

/**
 * Whether the tenant's own scheduler bound `pod`: its Scheduled Event from default-scheduler in
 * the tenant API, naming the node the Pod is on. (The Pod never had a host copy whose Events
 * the sync could have mirrored.)
 */
async function scheduledByTenantScheduler(pod: Obj): Promise<boolean> {
  const events = await tenant.request<{ items: Record<string, unknown>[] }>("GET", resourcePath("v1", "events", NS), {
    query: { fieldSelector: `involvedObject.uid=${pod.metadata?.uid},reason=Scheduled` },
  });
  const node = String(pod.spec?.["nodeName"]);
  return events.items.some((e) => {
    const source = (e["source"] as { component?: string } | undefined)?.component;
    const component = e["reportingComponent"] || source;
    return component === "default-scheduler" && String(e["message"]).endsWith(` to ${node}`);
  });
}

/**
 * The SIGKILL mid-move. The budget (minAvailable 3, set before the move) refuses every eviction,
 * so the migration to `to` stays in Moving for as long as this takes: it waits for that, checks no
 * web Pod was evicted, SIGKILLs the sync worker driving the move, starts another, then relaxes the
 * budget to 2. Returns the parked migration's startedAt: the successor must finish that one.
 */
async function killWorkerWhileParked(to: Placement): Promise<string> {
  const parked = await waitFor(
    async () => {
      const s = await isolationStatus();
      return s.migration?.to === to && s.migration.phase === "Moving" ? s.migration : undefined;
    },
    { timeoutMs: MOVE_TIMEOUT_MS, intervalMs: 100, description: `the migration to ${to} Moving, held by the budget` },
  );
  await new Promise((r) => setTimeout(r, 1_000));
  expect((await tenantPods("app=web")).filter((p) => p.metadata?.deletionTimestamp === undefined)).toHaveLength(3);
  await worker.kill();
  worker = await fleet.start("sync-worker", workerEnv);
  await setBudget(2);
  expect(parked.startedAt).toBeTypeOf("string");
  return parked.startedAt!;
}

/** The k3s container's arguments in the host StatefulSet `tp-<tenant>/k3s`, as the provisioner wrote them. */
async function k3sArgs(): Promise<string[]> {
  const sts = await hostObjects.get<Obj>("apps/v1", "StatefulSet", "k3s", `tp-${TENANT}`);
  const template = (sts?.spec?.["template"] ?? {}) as { spec?: { containers?: { name: string; args?: string[] }[] } };
  return template.spec?.containers?.find((c) => c.name === "k3s")?.args ?? [];
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "isolation-private", nodes: 3 }), startNats()]);
  hostObjects = new Objects(host.kubeConfig, "e2e");
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await hostObjects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
  for (const node of DEDICATED_NODES) {
    await hostObjects.mergePatch(
      { apiVersion: "v1", kind: "Node", metadata: { name: node } },
      { metadata: { labels: POOL } },
    );
  }
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: {
      RESYNC_INTERVAL_SECONDS: "30",
      LEASE_DURATION_SECONDS: "6",
      POD_NAMESPACE: "tenantplane-system",
      // The worker is killed on purpose in every move, four times within minutes; with the default
      // three a kill that lands while it is busy with the tenant quarantines it (suite quarantine).
      QUARANTINE_CRASHES: "10",
    },
  });
  [, provisioner, , , worker] = await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    fleet.start("recorder"),
    fleet.start("sync-worker", workerEnv),
  ]);
  // The built-in IsolationProfile and SyncPolicy: Pods, Services, ConfigMaps and claims all sync.
  standIn = await provisionTenant(host.kubeConfig, { name: TENANT, address: ADDRESS });
  scheduler = await followTenantScheduler(host.kubeConfig, TENANT, standIn);
  await waitForSynced(host.kubeConfig, TENANT);
  tenant = await tenantJsonClient(host.kubeConfig, TENANT);
  await tenant.request("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
  });
  await waitForTenantServiceAccount(tenant, NS);
  const create = (apiVersion: string, resource: string, body: Record<string, unknown>) =>
    tenant.request("POST", resourcePath(apiVersion, resource, NS), { body });
  await create("v1", "configmaps", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings" },
    data: { greeting: "hello" },
  });
  const ticker = await tenant.request<Obj>("POST", resourcePath("v1", "configmaps", NS), {
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ticker" }, data: {} },
  });
  tickerVersion = BigInt(ticker.metadata?.resourceVersion ?? "0");
  const web = { app: "web" };
  await create("apps/v1", "deployments", {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web" },
    spec: {
      replicas: 3,
      selector: { matchLabels: web },
      template: {
        metadata: { labels: web },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: "web", image: "nginx:1.27", envFrom: [{ configMapRef: { name: "settings" } }] }],
        },
      },
    },
  });
  await create("policy/v1", "poddisruptionbudgets", {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: "web" },
    spec: { minAvailable: 2, selector: { matchLabels: web } },
  });
  await create("v1", "services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web" },
    spec: { selector: web, ports: [{ port: 80, targetPort: 80 }] },
  });
  const db = { app: "db" };
  await create("v1", "services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "db" },
    spec: { clusterIP: "None", selector: db, ports: [{ port: 5432 }] },
  });
  await create("apps/v1", "statefulsets", {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "db" },
    spec: {
      replicas: 1,
      serviceName: "db",
      selector: { matchLabels: db },
      template: {
        metadata: { labels: db },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            { name: "db", image: "postgres:16", volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql" }] },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            storageClassName: "standard",
            resources: { requests: { storage: "1Gi" } },
          },
        },
      ],
    },
  });
  await waitPlaced("Shared", "app=web", 3);
  await waitPlaced("Shared", "app=db", 1);
  identities = await tenantIdentities();
  for (const key of ["deployments/web", "statefulsets/db", "services/web", "services/db", "configmaps/ticker"]) {
    expect([...identities.keys()]).toContain(key);
  }
  expect([...identities.keys()].filter((k) => k.startsWith("replicasets/"))).toHaveLength(1);
  await waitFor(() => tenant.request("GET", resourcePath("v1", "persistentvolumeclaims", NS, CLAIM)), {
    description: `claim ${CLAIM}`,
  });
  identities = await tenantIdentities();
}, STEP_TIMEOUT_MS);

afterAll(async () => {
  const keepLogs = failures.failed();
  await scheduler?.stop();
  await kwok?.stop();
  await fleet?.stop({ keepLogs });
  await standIn?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("isolation Private", () => {
  it("starts Shared: k3s runs with --disable-scheduler, so no tenant scheduler runs", async () => {
    await waitFor(async () => ((await isolationStatus()).mode === "Shared" ? true : undefined), {
      timeoutMs: 30_000,
      description: "status.isolation.mode Shared",
    });
    expect(await k3sArgs()).toContain("--disable-scheduler");
    await scheduler.waitUntil(false, 5_000);
    expect(scheduler.starts).toBe(0);
    expect(scheduler.controllers()).toEqual(TENANT_CONTROLLERS);
    expect(scheduler.controllerManagerRestarts).toBe(0);
  });

  it(
    "moves Shared → Dedicated through a SIGKILL of the worker: host copies on the dedicated nodes only, the budget held",
    async () => {
      const sampler = sampleAvailable();
      await setBudget(3);
      await setIsolation({ mode: "Dedicated", dedicated: { nodeSelector: POOL } });
      const startedAt = await killWorkerWhileParked("Dedicated");
      const done = await waitForMigration("Dedicated", "Complete");
      expect(done.migration?.startedAt).toBe(startedAt);
      await waitPlaced("Dedicated", "app=web", 3);
      await waitPlaced("Dedicated", "app=db", 1);
      await budgetHeld(sampler, "Shared → Dedicated");
      expect(await k3sArgs()).toContain("--disable-scheduler");
      expect(scheduler.running()).toBe(false);
      await checkAfterMove("Shared", "Dedicated");
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "moves Dedicated → Private through a SIGKILL of the worker: k3s rolls with its scheduler, nodes join with the join credential, a claim-bound Pod blocks",
    async () => {
      const sampler = sampleAvailable();
      // No disruption allowed at first: the move is held in Moving while the worker dies.
      await setBudget(3);
      await setIsolation({ mode: "Private" });

      // The provisioner rolls k3s without --disable-scheduler; k3s (the follower) starts its scheduler.
      await waitFor(async () => ((await k3sArgs()).includes("--disable-scheduler") ? undefined : true), {
        timeoutMs: 120_000,
        intervalMs: 250,
        description: "the k3s StatefulSet without --disable-scheduler",
      });
      await scheduler.waitUntil(true, 120_000);
      expect(scheduler.starts).toBe(1);
      // ... and k3s's own controller set, node lifecycle and IPAM included, as the Pod says.
      await waitFor(() => scheduler.controllers().join(",") === "*,tokencleaner" || undefined, {
        timeoutMs: 30_000,
        description: "the tenant controller manager running *,tokencleaner",
      });

      // The join credential: K10<sha256 of the server CA>::<bootstrap token>, and that token
      // authenticates to the tenant's API as a bootstrapping node.
      const join = await waitFor(() => readJoinCredential(host.kubeConfig, TENANT), {
        timeoutMs: 120_000,
        intervalMs: 500,
        description: `Secret tp-${TENANT}/${TENANT}-join`,
      });
      const pki = await core.readNamespacedSecret({ name: `${TENANT}-pki`, namespace: `tp-${TENANT}` });
      const serverCaPem = Buffer.from(pki.data?.["server-ca.crt"] ?? "", "base64").toString("utf8");
      expect(join.caHash).toBe(caHashOf(serverCaPem));
      expect(join.caPem).toBe(serverCaPem);
      expect(new URL(join.server).protocol).toBe("https:");
      const review = await selfSubjectReview(standIn.url, join.caPem, join.bootstrapToken);
      expect(review).toMatchObject({ username: `system:bootstrap:${join.tokenId}` });
      expect(review.groups).toContain("system:bootstrappers:k3s:default-node-token");
      const forged = await selfSubjectReview(standIn.url, join.caPem, `${join.tokenId}.0000000000000000`);
      expect(forged.status).toBe(401);

      // The machines join (kwok on the tenant API, see test/harness/README.md).
      kwok = await startTenantKwok(host.kubeConfig, TENANT, standIn);
      for (const name of PRIVATE_NODES) await createPrivateNode(kwok, name, PRIVATE_LABELS);

      const startedAt = await killWorkerWhileParked("Private");

      // The web Pods move; the StatefulSet's Pod stays, its claim named.
      const blocked = await waitForMigration("Private", "Blocked");
      expect(blocked.migration).toMatchObject({ from: "Dedicated", to: "Private", left: 1 });
      expect(blocked.migration?.blocked).toHaveLength(1);
      expect(blocked.migration?.blocked?.[0]).toMatchObject({ namespace: NS, name: "db-0" });
      expect(blocked.migration?.blocked?.[0]?.reason).toContain(CLAIM);
      const web = await waitPlaced("Private", "app=web", 3);
      for (const pod of web) expect(await scheduledByTenantScheduler(pod)).toBe(true);
      // The blocked Pod still runs where it was, its host copy on a dedicated node.
      expect(await placedAs("Dedicated", "app=db", 1)).not.toBeTypeOf("string");

      // Without the claim-bound workload the move completes.
      await tenant.request("DELETE", resourcePath("apps/v1", "statefulsets", NS, "db"));
      deleted.add("statefulsets/db");
      const done = await waitForMigration("Private", "Complete");
      expect(done.migration).toMatchObject({ from: "Dedicated", to: "Private", left: 0, startedAt });
      await waitFor(async () => ((await tenantPods("app=db")).length === 0 ? true : undefined), {
        timeoutMs: 60_000,
        description: "the StatefulSet's Pod gone",
      });
      await waitPlaced("Private", "app=web", 3);
      await waitFor(async () => ((await hostPods()).size === 0 ? true : undefined), {
        timeoutMs: 60_000,
        description: "no host copy of any tenant Pod",
      });
      await budgetHeld(sampler, "Dedicated → Private");
      expect(scheduler.running()).toBe(true);
      await checkAfterMove("Dedicated", "Private");
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "keeps a new Pod of a Private tenant off the host: the tenant scheduler places it on a private node",
    async () => {
      await tenant.request("PATCH", resourcePath("apps/v1", "deployments", NS, "web") + "/scale", {
        body: { spec: { replicas: 4 } },
        contentType: "application/merge-patch+json",
      });
      const pods = await waitPlaced("Private", "app=web", 4);
      for (const pod of pods) expect(await scheduledByTenantScheduler(pod)).toBe(true);
      expect((await hostPods()).size).toBe(0);
      await tenant.request("PATCH", resourcePath("apps/v1", "deployments", NS, "web") + "/scale", {
        body: { spec: { replicas: 3 } },
        contentType: "application/merge-patch+json",
      });
      await waitPlaced("Private", "app=web", 3);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "moves Private → Dedicated through SIGKILLs of the provisioner and the worker: k3s rolls back to --disable-scheduler, host copies on the dedicated nodes again",
    async () => {
      const sampler = sampleAvailable();
      await setBudget(3);
      await setIsolation({ mode: "Dedicated", dedicated: { nodeSelector: POOL } });
      // The provisioner dies as the mode changes, whether or not it has written the roll yet;
      // its successor must leave k3s with --disable-scheduler either way.
      await provisioner.kill();
      const rolled = (await k3sArgs()).includes("--disable-scheduler");
      console.error(`[e2e] Private → Dedicated: provisioner SIGKILLed ${rolled ? "after" : "before"} it rolled k3s`);
      provisioner = await fleet.start("provisioner");
      const restarted = Date.now();
      await waitFor(async () => ((await k3sArgs()).includes("--disable-scheduler") ? true : undefined), {
        timeoutMs: 120_000,
        intervalMs: 250,
        description: "the k3s StatefulSet with --disable-scheduler again",
      });
      console.error(
        `[e2e] Private → Dedicated: k3s rolled back ${Date.now() - restarted} ms after the provisioner restarted`,
      );
      await scheduler.waitUntil(false, 120_000);
      await waitFor(() => scheduler.controllers().join(",") === TENANT_CONTROLLERS.join(",") || undefined, {
        timeoutMs: 30_000,
        description: "the tenant controller manager back on the Shared/Dedicated controller set",
      });
      const startedAt = await killWorkerWhileParked("Dedicated");
      const done = await waitForMigration("Dedicated", "Complete");
      expect(done.migration?.startedAt).toBe(startedAt);
      await waitPlaced("Dedicated", "app=web", 3);
      await budgetHeld(sampler, "Private → Dedicated");
      expect(scheduler.stops).toBe(1);
      await checkAfterMove("Private", "Dedicated");
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "moves Dedicated → Shared through a SIGKILL of the worker: host copies on the shared nodes",
    async () => {
      const sampler = sampleAvailable();
      await setBudget(3);
      await setIsolation({ mode: "Shared" });
      const startedAt = await killWorkerWhileParked("Shared");
      const done = await waitForMigration("Shared", "Complete");
      expect(done.migration?.startedAt).toBe(startedAt);
      await waitPlaced("Shared", "app=web", 3);
      await budgetHeld(sampler, "Dedicated → Shared");
      expect(await k3sArgs()).toContain("--disable-scheduler");
      expect(scheduler.running()).toBe(false);
      expect(scheduler.starts).toBe(1);
      // Into Private and out again: the controller manager followed both rolls.
      expect(scheduler.controllerManagerRestarts).toBe(2);
      expect(scheduler.controllers()).toEqual(TENANT_CONTROLLERS);
      await checkAfterMove("Dedicated", "Shared");
    },
    STEP_TIMEOUT_MS,
  );
});
