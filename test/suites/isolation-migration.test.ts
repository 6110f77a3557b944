import { CoreV1Api, type CoreV1Event, type KubernetesObject } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { resourcePath, type JsonClient, Objects } from "@tenantplane/kube";
import { ANNOTATION_VIRTUAL_NAME, LABEL_MANAGED_BY, LABEL_TENANT, MANAGED_BY } from "@tenantplane/mapping";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  installCrds,
  provisionTenant,
  ServiceFleet,
  startHostCluster,
  startNats,
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
} from "../harness/index.js";

// A tenant running a Deployment (3 replicas, a PodDisruptionBudget of minAvailable 2) and a bare
// Pod moves Shared → Dedicated → Shared while the sync worker driving it is SIGKILLed mid-move.
// Its host Pods must end on the nodes its placement names, its tenant objects are never made
// again, the budget is never broken (sampled every 200 ms), and status.isolation tells it all.
// Tenant API stand-in of this suite: 127.0.0.245.

const failures = trackFailures();
const TENANT = "mig";
const ADDRESS = "127.0.0.245";
const NS = "app";
const POOL = { "tenantplane.io/pool": "mig" };
const DEDICATED_NODES = ["kwok-node-1", "kwok-node-2"];
const OWN_TOLERATION = { key: "tenantplane.io/dedicated", operator: "Equal", value: TENANT, effect: "NoSchedule" };
const BARE_REASON = "bare Pod: nobody recreates it; delete it or set spec.isolation.migration.evictBarePods";
const MOVE_TIMEOUT_MS = 240_000;

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
  dedicatedNodes?: string[];
  migration?: Migration;
}

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let hostObjects: Objects;
let core: CoreV1Api;
let standIn: TenantApiServer;
let tenant: JsonClient;
let worker: RunningService;
let deployment: { uid: string; creationTimestamp: string };

const workerEnv = { PARTITIONS: "4", LEASE_TTL_SECONDS: "3", LEASE_BUCKET: "migration-e2e" };

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

/** Sets the web PodDisruptionBudget's minAvailable (3 of 3 replicas: no eviction allowed). */
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

/** The host copies of the tenant's Pods, by their tenant Pod's name. */
async function hostPods(): Promise<Map<string, Obj>> {
  const list = await hostObjects.list<Obj>("v1", "Pod", {
    namespace: `tp-${TENANT}`,
    labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${TENANT}`,
  });
  return new Map(list.map((p) => [p.metadata?.annotations?.[ANNOTATION_VIRTUAL_NAME] ?? "", p]));
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

async function eventMessages(): Promise<string[]> {
  const list = await core.listEventForAllNamespaces({
    fieldSelector: `involvedObject.kind=TenantCluster,involvedObject.name=${TENANT}`,
  });
  return list.items.map((e: CoreV1Event) => `${e.reason}: ${e.message}`);
}

/** Every web Pod of the tenant Running with a host copy placed as `dedicated` says, and 3 of them. */
async function webPlaced(dedicated: boolean): Promise<Obj[] | undefined> {
  const pods = (await tenantPods("app=web")).filter((p) => p.metadata?.deletionTimestamp === undefined);
  if (pods.length !== 3 || !pods.every(isReady)) return undefined;
  const copies = await hostPods();
  const found = pods.map((p) => copies.get(p.metadata?.name ?? ""));
  if (found.some((c) => c === undefined || !c.spec?.["nodeName"])) return undefined;
  const placed = found.every((c) => hasPool(c!) === dedicated);
  return placed ? (found as Obj[]) : undefined;
}

/**
 * Waits until every web Pod runs placed as `dedicated` says, then stops `sampler`: the budget
 * (minAvailable 2) must have held at every sample of the move.
 */
async function webMoved(dedicated: boolean, sampler: ReturnType<typeof sampleAvailable>, move: string) {
  const copies = await waitFor(() => webPlaced(dedicated), {
    timeoutMs: MOVE_TIMEOUT_MS,
    intervalMs: 500,
    description: `every web Pod placed ${dedicated ? "on the dedicated nodes" : "Shared"}`,
  });
  const { min, samples } = await sampler.stop();
  console.error(`[e2e] ${move}: fewest available web Pods ${min} over ${samples} samples`);
  expect(samples).toBeGreaterThan(3);
  expect(min).toBeGreaterThanOrEqual(2);
  return copies;
}

/** The tenant Deployment's uid and creationTimestamp, as its API stores them now. */
async function deploymentIdentity(): Promise<{ uid: string; creationTimestamp: string }> {
  const now = await tenant.request<Obj>("GET", `/apis/apps/v1/namespaces/${NS}/deployments/web`);
  return { uid: now.metadata?.uid ?? "", creationTimestamp: String(now.metadata?.creationTimestamp) };
}

/** The host nodes carrying this tenant's dedicated-node taint, as the host stores them. */
async function taintedNodes(): Promise<string[]> {
  const nodes = await hostObjects.list<Obj>("v1", "Node");
  return nodes
    .filter((n) => ((n.spec?.["taints"] ?? []) as Record<string, unknown>[]).some((t) => sameTaint(t)))
    .map((n) => n.metadata?.name ?? "")
    .sort();
}

const sameTaint = (t: Record<string, unknown>) =>
  t["key"] === OWN_TOLERATION.key && t["value"] === TENANT && t["effect"] === "NoSchedule";

const hasPool = (copy: Obj) =>
  (copy.spec?.["nodeSelector"] as Record<string, string> | undefined)?.["tenantplane.io/pool"] === "mig";

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "isolation-migration", nodes: 3 }), startNats()]);
  hostObjects = new Objects(host.kubeConfig, "e2e");
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await hostObjects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
  // The operator labels the nodes it sets aside for the tenant.
  for (const node of DEDICATED_NODES) {
    await hostObjects.mergePatch(
      { apiVersion: "v1", kind: "Node", metadata: { name: node } },
      { metadata: { labels: POOL } },
    );
  }
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  [, , , , worker] = await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    fleet.start("recorder"),
    fleet.start("sync-worker", workerEnv),
  ]);
  standIn = await provisionTenant(host.kubeConfig, { name: TENANT, address: ADDRESS });
  await waitForSynced(host.kubeConfig, TENANT);
  tenant = await tenantJsonClient(host.kubeConfig, TENANT);
  await tenant.request("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
  });
  await waitForTenantServiceAccount(tenant, NS);
  const labels = { app: "web" };
  const created = await tenant.request<Obj>("POST", `/apis/apps/v1/namespaces/${NS}/deployments`, {
    body: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: NS },
      spec: {
        replicas: 3,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { terminationGracePeriodSeconds: 1, containers: [{ name: "web", image: "nginx:1.27" }] },
        },
      },
    },
  });
  deployment = { uid: created.metadata!.uid!, creationTimestamp: String(created.metadata!.creationTimestamp) };
  await tenant.request("POST", `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
    body: {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "web", namespace: NS },
      spec: { minAvailable: 2, selector: { matchLabels: labels } },
    },
  });
  await tenant.request("POST", resourcePath("v1", "pods", NS), {
    body: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "debug", namespace: NS },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: "sh", image: "busybox:1.36" }] },
    },
  });
  await waitFor(() => webPlaced(false), {
    timeoutMs: MOVE_TIMEOUT_MS,
    intervalMs: 500,
    description: "3 web Pods Running",
  });
  await waitFor(
    async () =>
      ((await tenantPods()).find((p) => p.metadata?.name === "debug") ?? { status: {} }).status?.["phase"] ===
        "Running" || undefined,
    {
      timeoutMs: 60_000,
      description: "bare Pod debug Running",
    },
  );
}, 600_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  await standIn?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("isolation migration", () => {
  it("shows a Shared tenant's effective mode and places its Pods on the shared nodes", async () => {
    await waitFor(async () => ((await isolationStatus()).mode === "Shared" ? true : undefined), {
      timeoutMs: 30_000,
      description: "status.isolation.mode Shared",
    });
    for (const copy of (await hostPods()).values()) {
      expect(hasPool(copy)).toBe(false);
      expect(copy.spec?.["tolerations"] ?? []).not.toContainEqual(OWN_TOLERATION);
    }
  });

  it("moves Shared → Dedicated by eviction, the budget held, a bare Pod blocked, through a SIGKILL of the worker", async () => {
    const sampler = sampleAvailable();
    // The budget allows no disruption at first, so the migration is held in Moving (every eviction
    // answered 429) for as long as the test needs: the worker driving it dies mid-move, however
    // fast the stack would otherwise move three Pods, and its successor must resume from status.
    await setBudget(3);
    await setIsolation({ mode: "Dedicated", dedicated: { nodeSelector: POOL } });
    await waitFor(
      async () => {
        const s = await isolationStatus();
        return s.migration?.to === "Dedicated" && s.migration.phase === "Moving" ? true : undefined;
      },
      { timeoutMs: MOVE_TIMEOUT_MS, intervalMs: 100, description: "the migration Moving, held by the budget" },
    );
    await new Promise((r) => setTimeout(r, 1_000));
    // Held: nothing was evicted against the budget.
    expect((await tenantPods("app=web")).filter((p) => p.metadata?.deletionTimestamp === undefined)).toHaveLength(3);
    await worker.kill();
    worker = await fleet.start("sync-worker", workerEnv);
    await setBudget(2);

    // The web Pods move; only the bare Pod is left, named with the reason.
    const blocked = await waitForMigration("Dedicated", "Blocked");
    expect(blocked.mode).toBe("Shared");
    expect(blocked.migration).toMatchObject({
      from: "Shared",
      to: "Dedicated",
      left: 1,
      blocked: [{ namespace: NS, name: "debug", reason: BARE_REASON }],
    });
    const copies = await webMoved(true, sampler, "Shared → Dedicated");
    // Read back from the host: selector, the tenant's own toleration, and a dedicated node.
    for (const copy of copies) {
      expect(copy.spec?.["nodeSelector"]).toMatchObject(POOL);
      expect(copy.spec?.["tolerations"]).toContainEqual(OWN_TOLERATION);
      expect(DEDICATED_NODES).toContain(copy.spec?.["nodeName"]);
    }
    // The bare Pod still runs where it was.
    const debugCopy = (await hostPods()).get("debug");
    expect(debugCopy && hasPool(debugCopy)).toBe(false);

    // Allowed to evict it: nobody recreates it, and the migration completes.
    await setIsolation({ mode: "Dedicated", dedicated: { nodeSelector: POOL }, migration: { evictBarePods: true } });
    const done = await waitForMigration("Dedicated", "Complete");
    expect(done.mode).toBe("Dedicated");
    expect(done.migration).toMatchObject({ from: "Shared", to: "Dedicated", left: 0, moved: 3 });
    expect(done.migration?.blocked).toBeUndefined();
    expect(Date.parse(done.migration!.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(done.migration!.startedAt!));
    expect((await tenantPods()).map((p) => p.metadata?.name)).not.toContain("debug");
    // The isolation service reserved the labelled nodes: tainted for this tenant, and listed.
    const reserved = async () => {
      const listed = [...((await isolationStatus()).dedicatedNodes ?? [])].sort();
      return { tainted: await taintedNodes(), listed };
    };
    const want = { tainted: DEDICATED_NODES, listed: DEDICATED_NODES };
    await waitFor(async () => (JSON.stringify(await reserved()) === JSON.stringify(want) ? true : undefined), {
      timeoutMs: 30_000,
      description: "the dedicated nodes tainted for the tenant and listed in status.isolation.dedicatedNodes",
    }).catch(() => undefined);
    expect(await reserved()).toEqual(want);

    const events = await waitFor(
      async () => {
        const messages = await eventMessages();
        return messages.some((m) => m.includes("isolation migration Shared → Dedicated complete"))
          ? messages
          : undefined;
      },
      { timeoutMs: 60_000, description: "the migration's Events on the TenantCluster" },
    );
    expect(events.some((m) => m.includes("isolation migration Shared → Dedicated started"))).toBe(true);
    expect(events.some((m) => /moving ReplicaSet app\/web-/.test(m))).toBe(true);
    expect(events.some((m) => /ReplicaSet app\/web-\S+ moved, its 3 Pod\(s\) run in the new placement/.test(m))).toBe(
      true,
    );
    expect(events.some((m) => m.startsWith("SkipPod") && m.includes(BARE_REASON))).toBe(true);
  });

  it("never makes the tenant's Deployment again", async () => {
    expect(await deploymentIdentity()).toEqual(deployment);
  });

  it("moves back Dedicated → Shared with the budget held", async () => {
    const sampler = sampleAvailable();
    await setIsolation({ mode: "Shared", dedicated: { nodeSelector: POOL }, migration: { evictBarePods: false } });
    const done = await waitForMigration("Shared", "Complete");
    expect(done.mode).toBe("Shared");
    expect(done.migration).toMatchObject({ from: "Dedicated", to: "Shared", left: 0, moved: 3 });
    const copies = await webMoved(false, sampler, "Dedicated → Shared");
    for (const copy of copies) expect(copy.spec?.["tolerations"] ?? []).not.toContainEqual(OWN_TOLERATION);
    await waitFor(async () => ((await taintedNodes()).length === 0 ? true : undefined), {
      timeoutMs: 60_000,
      description: "the dedicated-node taints released",
    });
    expect(await deploymentIdentity()).toEqual(deployment);
  });
});
