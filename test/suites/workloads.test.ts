import { readFileSync } from "node:fs";
import type { KubernetesObject } from "@kubernetes/client-node";
import {
  crdManifests,
  defaultIsolationProfileSpec,
  defaultSyncPolicySpec,
  parseIsolationProfile,
  parseSyncPolicy,
  SYNC_KINDS,
  type IsolationProfileSpec,
  type SyncPolicySpec,
} from "@tenantplane/api";
import { kubeConfigFromString, Objects } from "@tenantplane/kube";
import {
  ANNOTATION_VIRTUAL_NAME,
  ANNOTATION_VIRTUAL_NAMESPACE,
  LABEL_KIND,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  MANAGED_BY,
} from "@tenantplane/mapping";
import { compileHostRules, defaultStorageClass, plan } from "@tenantplane/sync";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  installCrds,
  provisionTenant,
  ServiceFleet,
  startHostCluster,
  startNats,
  syncedState,
  tenantKubeconfig,
  trackFailures,
  waitFor,
  waitForSynced,
  type HostCluster,
  type NatsServer,
  type TenantApiServer,
} from "../harness/index.js";

// Workloads people deploy, applied inside two tenants through their own API: a web app with
// its ServiceAccount, RBAC, configuration, Service and HPA; a StatefulSet with claims behind a
// headless Service; a Job and a CronJob; a NodePort Service. One tenant runs under the
// built-in IsolationProfile and SyncPolicy, the other under the examples an operator starts
// from. Each must run as the tenant sees it (Pods Running, Jobs Complete), report Synced=True,
// and have on the host exactly the copies the sync planner predicts from the tenant's objects.

const failures = trackFailures();
// Tenant API stand-ins and load-balancer addresses of this suite live on 127.0.0.180-199.
const NAMESPACES = ["shop", "data", "batch"];
const PODS_TIMEOUT_MS = 240_000;
// The sync worker's key, so this suite's planner computes the content hashes the worker records.
const HASH_KEY = "workloads-content-hash-key";

type Obj = KubernetesObject & Record<string, unknown>;
type Condition = { type: string; status: string; reason?: string; message?: string };

const readYaml = (path: string): Obj[] =>
  YAML.parseAllDocuments(readFileSync(new URL(path, import.meta.url), "utf8"))
    .map((doc) => doc.toJSON() as Obj | null)
    .filter((obj): obj is Obj => obj !== null);
const fixture = (file: string) => readYaml(`./fixtures/workloads/${file}`);
const exampleProfile = parseIsolationProfile(readYaml("../../examples/isolationprofile.yaml")[0]);
const examplePolicy = parseSyncPolicy(readYaml("../../examples/syncpolicy.yaml")[0]);

interface WorkloadTenant {
  name: string;
  address: string;
  /** What the TenantCluster names; empty for the built-ins. */
  spec: Record<string, unknown>;
  profile: IsolationProfileSpec;
  policy: SyncPolicySpec;
  api?: Objects;
  standIn?: TenantApiServer;
}

const tenants: WorkloadTenant[] = [
  {
    name: "wl-builtin",
    address: "127.0.0.180",
    spec: {},
    profile: defaultIsolationProfileSpec,
    policy: defaultSyncPolicySpec,
  },
  {
    name: "wl-example",
    address: "127.0.0.181",
    spec: {
      isolationProfileRef: { name: exampleProfile.metadata.name },
      syncPolicyRef: { name: examplePolicy.metadata.name },
    },
    profile: exampleProfile.spec,
    policy: examplePolicy.spec,
  },
];

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let hostObjects: Objects;

const tenantApi = (t: WorkloadTenant): Objects => {
  if (t.api === undefined) throw new Error(`tenant ${t.name} has no API client: its start failed`);
  return t.api;
};
const conditionOf = (obj: Obj | undefined, type: string): Condition | undefined =>
  ((obj?.["status"] as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
const status = (obj: Obj | undefined) => (obj?.["status"] ?? {}) as Record<string, unknown>;

/** Applies objects in order, as `kubectl apply --server-side -f` does. */
async function applyAll(api: Objects, objects: readonly Obj[]): Promise<void> {
  for (const obj of objects) await api.apply(obj);
}

/** Starts a run of a CronJob now, as `kubectl create job <name> --from=cronjob/<cronjob>` does. */
async function createJobFrom(api: Objects, namespace: string, cronJob: string, name: string): Promise<void> {
  const source = await api.get<Obj>("batch/v1", "CronJob", cronJob, namespace);
  if (source === undefined) throw new Error(`CronJob ${namespace}/${cronJob} is missing`);
  const template = (source["spec"] as { jobTemplate: { metadata?: Obj["metadata"]; spec: unknown } }).jobTemplate;
  await api.create({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name,
      namespace,
      labels: template.metadata?.labels ?? {},
      annotations: { ...template.metadata?.annotations, "cronjob.kubernetes.io/instantiate": "manual" },
      ownerReferences: [
        {
          apiVersion: "batch/v1",
          kind: "CronJob",
          name: cronJob,
          uid: source.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: template.spec,
  });
}

/** The workload a Pod belongs to, as its labels say, and its phase: `ns/workload Phase`. */
function podSummary(pod: Obj): string {
  const labels = pod.metadata?.labels ?? {};
  const workload = labels["batch.kubernetes.io/job-name"] ?? labels["app.kubernetes.io/name"] ?? pod.metadata?.name;
  return `${pod.metadata?.namespace}/${workload} ${String(status(pod)["phase"])}`;
}

async function tenantPods(t: WorkloadTenant): Promise<Obj[]> {
  const lists = await Promise.all(NAMESPACES.map((namespace) => tenantApi(t).list<Obj>("v1", "Pod", { namespace })));
  return lists.flat();
}

/** What a host copy is compared on: where it is, what it says it copies, and how its Pod runs. */
interface CopySummary {
  kind: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  source: string;
  serviceAccountName?: string;
  nodeSelector?: Record<string, string>;
}

function copySummary(kind: string, obj: Obj): CopySummary {
  const annotations = obj.metadata?.annotations ?? {};
  const spec = (obj["spec"] ?? {}) as { serviceAccountName?: string; nodeSelector?: Record<string, string> };
  return {
    kind,
    namespace: obj.metadata?.namespace ?? "",
    name: obj.metadata?.name ?? "",
    labels: obj.metadata?.labels ?? {},
    source: `${annotations[ANNOTATION_VIRTUAL_NAMESPACE]}/${annotations[ANNOTATION_VIRTUAL_NAME]}`,
    ...(kind === "Pod"
      ? { serviceAccountName: spec.serviceAccountName ?? "", nodeSelector: spec.nodeSelector ?? {} }
      : {}),
  };
}

const byIdentity = (a: CopySummary, b: CopySummary) => `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`, "en");

const inWorkloads = (ref: { namespace: string }) => NAMESPACES.includes(ref.namespace);

/** What the sync planner makes of the tenant's objects as they are now against `host`, as the sync worker plans. */
async function planNow(t: WorkloadTenant, host: readonly Obj[], tenantObjects?: readonly Obj[]) {
  const objects =
    tenantObjects ?? (await Promise.all(SYNC_KINDS.map((kind) => tenantApi(t).list<Obj>("v1", kind)))).flat();
  // A claim naming no class gets the host's default StorageClass, read as the sync worker reads it.
  const hostDefaultClass = defaultStorageClass(await hostObjects.list<Obj>("storage.k8s.io/v1", "StorageClass"));
  return plan({
    tenant: t.name,
    policy: t.policy,
    tenantObjects: objects,
    hostObjects: host,
    rules: compileHostRules(t.profile, undefined, hostDefaultClass),
    hashKey: HASH_KEY,
  });
}

/**
 * The planner's answer for the tenant's workload objects against the host namespace as it
 * is: what it would still do there (nothing, once the worker caught up), the copies it finds
 * in sync, and the objects it refuses with its reasons.
 */
async function planAgainstHost(t: WorkloadTenant) {
  const host = (
    await Promise.all(SYNC_KINDS.map((kind) => hostObjects.list<Obj>("v1", kind, { namespace: `tp-${t.name}` })))
  ).flat();
  const result = await planNow(t, host);
  const workloads = result.decisions.filter((d) => inWorkloads(d.tenantRef));
  return {
    pending: workloads
      .filter((d) => d.action !== "Skip")
      .map((d) => `${d.action} ${d.kind} ${d.hostRef.name}: ${d.reason}`),
    inSync: result.inSync
      .filter((target) => inWorkloads(target.tenantRef))
      .map((target) => `${target.kind}/${target.hostRef.name}`)
      .sort(),
    skips: workloads
      .filter((d) => d.action === "Skip")
      .map((d) => `${d.kind} ${d.tenantRef.namespace}/${d.tenantRef.name}: ${d.reason}`),
  };
}

/**
 * The copies the planner creates for the tenant's workload objects in an empty host
 * namespace, with each Pod as the planner first saw it: before back-sync bound it to the
 * node its host copy runs on (a bound Pod without a host copy is one the host lost).
 */
async function predictCopies(t: WorkloadTenant): Promise<CopySummary[]> {
  const objects = (await Promise.all(SYNC_KINDS.map((kind) => tenantApi(t).list<Obj>("v1", kind)))).flat();
  const unbound = objects.map((o) =>
    o.kind === "Pod" ? { ...o, spec: { ...(o["spec"] as Record<string, unknown>), nodeName: undefined } } : o,
  );
  const result = await planNow(t, [], unbound);
  return result.decisions
    .filter((d) => d.action === "Create" && d.object !== undefined && inWorkloads(d.tenantRef))
    .map((d) => copySummary(d.kind, d.object as unknown as Obj))
    .sort(byIdentity);
}

/** The sync copies of the tenant's workload-namespace objects that the host namespace holds. */
async function hostCopies(t: WorkloadTenant): Promise<CopySummary[]> {
  const lists = await Promise.all(
    SYNC_KINDS.map(async (kind) =>
      (
        await hostObjects.list<Obj>("v1", kind, {
          namespace: `tp-${t.name}`,
          labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${t.name},${LABEL_KIND}`,
        })
      )
        .filter((o) => NAMESPACES.includes(o.metadata?.annotations?.[ANNOTATION_VIRTUAL_NAMESPACE] ?? ""))
        .map((o) => copySummary(kind, o)),
    ),
  );
  return lists.flat().sort(byIdentity);
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "workloads" }), startNats()]);
  hostObjects = new Objects(host.kubeConfig, "e2e");
  await installCrds(host.kubeConfig, crdManifests());
  await hostObjects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
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
    fleet.start("sync-worker", {
      PARTITIONS: "8",
      LEASE_TTL_SECONDS: "3",
      LEASE_BUCKET: "workloads-e2e",
      CONTENT_HASH_KEY: HASH_KEY,
    }),
  ]);
  await hostObjects.apply(readYaml("../../examples/isolationprofile.yaml")[0]!);
  await hostObjects.apply(readYaml("../../examples/syncpolicy.yaml")[0]!);
  // The example profile keeps tenant Pods on nodes set aside for tenants: an operator labels them.
  for (const node of host.nodeNames) {
    await hostObjects.mergePatch(
      { apiVersion: "v1", kind: "Node", metadata: { name: node } },
      { metadata: { labels: exampleProfile.spec.workloads.nodeSelector } },
    );
  }
  await Promise.all(
    tenants.map(async (t) => {
      t.standIn = await provisionTenant(host.kubeConfig, t, t.spec);
      await waitForSynced(host.kubeConfig, t.name);
      t.api = new Objects(kubeConfigFromString(await tenantKubeconfig(host.kubeConfig, t.name)), "kubectl");
    }),
  );
  await Promise.all(
    tenants.map(async (t) => {
      const api = tenantApi(t);
      await applyAll(api, fixture("namespaces.yaml"));
      // The tenant's controller manager gives each new namespace its default ServiceAccount,
      // which the ServiceAccount admission of every Pod without one needs.
      for (const namespace of NAMESPACES) {
        await waitFor(() => api.get("v1", "ServiceAccount", "default", namespace), {
          timeoutMs: 60_000,
          description: `${t.name}: ServiceAccount ${namespace}/default`,
        });
      }
      await applyAll(api, [...fixture("podinfo.yaml"), ...fixture("redis.yaml"), ...fixture("batch.yaml")]);
      await createJobFrom(api, "batch", "hello", "hello-manual");
    }),
  );
  // Two tenants, five services and the host cluster on a 2-core machine take minutes to start.
}, 600_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  for (const t of tenants) await t.standIn?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe.each(tenants)("tenant $name", (t) => {
  it("runs every Pod as the tenant sees it, and completes its Jobs", async () => {
    const api = tenantApi(t);
    const expected = [
      "batch/hello-manual Succeeded",
      "batch/pi Succeeded",
      "data/redis Running",
      "data/redis Running",
      "shop/podinfo Running",
      "shop/podinfo Running",
    ];
    await waitFor(
      async () =>
        JSON.stringify((await tenantPods(t)).map(podSummary).sort()) === JSON.stringify(expected) || undefined,
      { timeoutMs: PODS_TIMEOUT_MS, intervalMs: 1000, description: `${t.name}: the workloads' Pods Running` },
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\n${await explainPods(t)}`);
    });
    expect((await tenantPods(t)).map(podSummary).sort()).toEqual(expected);

    // The tenant's ReplicaSet and Deployment controllers count the Pods after they run: their
    // status follows the Pods by a sync of each controller, so it is awaited, not read once.
    const deployment = await waitFor(
      async () => {
        const found = await api.get<Obj>("apps/v1", "Deployment", "podinfo", "shop");
        return status(found)["availableReplicas"] === 2 ? found : undefined;
      },
      { timeoutMs: 60_000, description: `${t.name}: Deployment shop/podinfo availableReplicas 2` },
    );
    expect(conditionOf(deployment, "Available")?.status).toBe("True");
    const statefulSet = await waitFor(
      async () => {
        const found = await api.get<Obj>("apps/v1", "StatefulSet", "redis", "data");
        return status(found)["readyReplicas"] === 2 ? found : undefined;
      },
      { timeoutMs: 60_000, description: `${t.name}: StatefulSet data/redis readyReplicas 2` },
    );
    expect(status(statefulSet)["readyReplicas"]).toBe(2);
    for (const job of ["pi", "hello-manual"]) {
      const complete = await waitFor(
        async () => conditionOf(await api.get<Obj>("batch/v1", "Job", job, "batch"), "Complete")?.status === "True",
        { timeoutMs: 60_000, description: `${t.name}: Job batch/${job} Complete` },
      );
      expect(complete).toBe(true);
    }
    // Each replica of the StatefulSet has its claim in the tenant.
    const claims = await api.list<Obj>("v1", "PersistentVolumeClaim", { namespace: "data" });
    expect(claims.map((c) => c.metadata?.name).sort()).toEqual(["data-redis-0", "data-redis-1"]);
  });

  it("keeps the web app at the HPA's minimum, as the tenant's autoscaler reports", async () => {
    const api = tenantApi(t);
    const hpa = await waitFor(
      async () => {
        const found = await api.get<Obj>("autoscaling/v2", "HorizontalPodAutoscaler", "podinfo", "shop");
        return status(found)["currentReplicas"] === 2 ? found : undefined;
      },
      { timeoutMs: 60_000, description: `${t.name}: HPA shop/podinfo status` },
    );
    expect(conditionOf(hpa, "AbleToScale")?.status).toBe("True");
    const deployment = await api.get<Obj>("apps/v1", "Deployment", "podinfo", "shop");
    expect((deployment?.["spec"] as { replicas: number }).replicas).toBe(2);
  });

  it("reports Synced=True with no failed object", async () => {
    await waitForSynced(host.kubeConfig, t.name, 60_000);
    const state = await syncedState(host.kubeConfig, t.name);
    expect(state.condition?.status, state.condition?.message).toBe("True");
    expect(state.sync?.failed).toBe(0);
  });

  it("holds on the host exactly the copies the sync planner predicts", async () => {
    // Once the worker caught up, the planner has nothing left to do for any workload object.
    await waitFor(async () => (await planAgainstHost(t)).pending.length === 0 || undefined, {
      timeoutMs: 60_000,
      intervalMs: 1000,
      description: `${t.name}: nothing left to sync`,
    }).catch(() => undefined);
    const { pending, inSync, skips } = await planAgainstHost(t);
    expect(pending).toEqual([]);
    const copies = await predictCopies(t);
    const actual = await hostCopies(t);
    expect(actual).toEqual(copies);
    expect(inSync).toEqual(actual.map((c) => `${c.kind}/${c.name}`).sort());

    // Every workload Pod has a copy, and only the NodePort Service is refused: neither profile grants node ports.
    expect(copies.filter((c) => c.kind === "Pod")).toHaveLength(6);
    expect(skips).toHaveLength(1);
    expect(skips[0]).toMatch(/^Service shop\/podinfo-nodeport: .*nodePort/);
    const kinds = [...new Set(copies.map((c) => c.kind))].sort();
    const synced = t.policy.toHost.map((r) => r.kind);
    expect(kinds).toEqual(
      ["ConfigMap", "PersistentVolumeClaim", "Pod", "Secret", "Service", "ServiceAccount"].filter((k) =>
        synced.includes(k as (typeof synced)[number]),
      ),
    );
    // Pods keep to the profile's nodes and run as a ServiceAccount the host has: their own
    // account's copy where the policy syncs ServiceAccounts, else the host namespace's own.
    for (const pod of copies.filter((c) => c.kind === "Pod")) {
      expect(pod.nodeSelector).toMatchObject(t.profile.workloads.nodeSelector);
      expect(await hostObjects.get("v1", "ServiceAccount", pod.serviceAccountName!, pod.namespace)).toBeDefined();
    }
  });

  it("explains the refused NodePort Service inside the tenant, on the Service", async () => {
    const api = tenantApi(t);
    const warning = await waitFor(
      async () =>
        (await api.list<Obj>("v1", "Event", { namespace: "shop" })).find(
          (e) =>
            e["type"] === "Warning" &&
            (e["involvedObject"] as { kind?: string; name?: string }).kind === "Service" &&
            (e["involvedObject"] as { name?: string }).name === "podinfo-nodeport",
        ),
      { timeoutMs: 60_000, description: `${t.name}: a Warning Event on Service shop/podinfo-nodeport` },
    );
    expect(String(warning["message"])).toMatch(/nodePort|NodePort|node port/);
    expect(await hostObjects.get("v1", "Service", `podinfo-nodeport-x-shop-x-${t.name}`, `tp-${t.name}`)).toBe(
      undefined,
    );
  });
});

describe("the CronJob's own schedule", () => {
  it("starts a Job within its first minute once resumed, and the Job completes in every tenant", async () => {
    await Promise.all(
      tenants.map(async (t) => {
        const api = tenantApi(t);
        await api.mergePatch(
          { apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "hello", namespace: "batch" } },
          {
            spec: { suspend: false },
          },
        );
        const job = await waitFor(
          async () =>
            (await api.list<Obj>("batch/v1", "Job", { namespace: "batch" })).find(
              (j) =>
                j.metadata?.name?.startsWith("hello-") &&
                j.metadata.name !== "hello-manual" &&
                conditionOf(j, "Complete")?.status === "True",
            ),
          {
            timeoutMs: 150_000,
            intervalMs: 1000,
            description: `${t.name}: a scheduled Job of CronJob batch/hello Complete`,
          },
        );
        // The CronJob controller records the run it started once that Job completes.
        await waitFor(
          async () => status(await api.get<Obj>("batch/v1", "CronJob", "hello", "batch"))["lastSuccessfulTime"],
          { timeoutMs: 30_000, description: `${t.name}: CronJob batch/hello lastSuccessfulTime` },
        );
        const pods = await api.list<Obj>("v1", "Pod", {
          namespace: "batch",
          labelSelector: `batch.kubernetes.io/job-name=${job.metadata!.name}`,
        });
        expect(pods.map((p) => status(p)["phase"])).toContain("Succeeded");
      }),
    );
  });
});

/** Each tenant Pod that is not yet where it should be, with what the tenant and the host say of it. */
async function explainPods(t: WorkloadTenant): Promise<string> {
  const lines: string[] = [];
  for (const pod of await tenantPods(t)) {
    const phase = status(pod)["phase"];
    const conditions = ((status(pod)["conditions"] ?? []) as Condition[])
      .filter((c) => c.status !== "True")
      .map((c) => `${c.type}=${c.status} ${c.reason ?? ""} ${c.message ?? ""}`.trim());
    lines.push(`  ${pod.metadata?.namespace}/${pod.metadata?.name} ${String(phase)} ${conditions.join("; ")}`);
  }
  const events = (await Promise.all(NAMESPACES.map((ns) => tenantApi(t).list<Obj>("v1", "Event", { namespace: ns }))))
    .flat()
    .filter((e) => e["type"] === "Warning")
    .map((e) => {
      const about = e["involvedObject"] as { kind?: string; name?: string };
      return `  Warning ${about.kind}/${about.name}: ${String(e["reason"])} ${String(e["message"])}`;
    });
  const state = await syncedState(host.kubeConfig, t.name);
  return [
    `tenant ${t.name} Pods:`,
    ...lines,
    "tenant Warning Events:",
    ...events,
    `Synced: ${state.condition?.status} ${state.condition?.message}`,
  ].join("\n");
}
