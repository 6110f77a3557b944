import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { KubernetesObject } from "@kubernetes/client-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { crdManifests, SYNC_KINDS } from "@tenantplane/api";
import { kubeConfigFromString, Objects } from "@tenantplane/kube";
import { type Decision, DecisionSchema, ensureTopology } from "@tenantplane/messaging";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  createArtifactsDir,
  installCrds,
  releaseArtifactsDir,
  runTenantplane,
  ServiceFleet,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type TenantApiServer,
} from "../harness/index.js";

// What `tenantplane explain-sync` predicts is what the sync worker then does: each step
// predicts with the real CLI against the live host namespace, applies the same manifest to
// the tenant API, and compares the prediction with the sync worker's Decisions on NATS,
// object by object (action, kind, tenant object, host object, reason). That covers the
// ConfigMaps the worker derives for the tenant's Pods too (its DNS zone and service links):
// for each, the worker's last write of the step must be the predicted one, once the
// placeholders for addresses the host assigns later are replaced by the addresses it did assign.

const failures = trackFailures();
const TENANT = "xs-live";
// Tenant API stand-ins of this suite live on 127.0.0.70-79.
const ADDRESS = "127.0.0.70";
const HOST_NS = `tp-${TENANT}`;
const HASH_KEY = "explain-sync-live-content-hash-key";
/** How long the worker gets, after the predicted Decisions arrived, to publish anything unpredicted. */
const SETTLE_MS = 3000;

type Obj = KubernetesObject & Record<string, unknown>;

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let hostObjects: Objects;
let tenant: Objects;
let tenantApi: TenantApiServer | undefined;
let nc: NatsConnection;
let sub: Subscription;
let workDir: string;
const decisions: Decision[] = [];

/** What a prediction and a published Decision must agree on; a Fail's error too. */
type Comparable = Pick<Decision, "action" | "kind" | "tenantRef" | "hostRef" | "reason" | "error">;

/** A predicted Decision; a template stand-in's names the workload whose Pods it stands for. */
type Prediction = Decision & { template?: { kind: string; namespace: string; name: string; field: string } };

/** The host object by namespace and name: a written object's uid is known only after the write. */
function comparable(d: Comparable): Comparable {
  const hostRef = { namespace: d.hostRef.namespace, name: d.hostRef.name };
  const c: Comparable = { action: d.action, kind: d.kind, tenantRef: d.tenantRef, hostRef, reason: d.reason };
  return d.error === undefined ? c : { ...c, error: d.error };
}

function sorted(list: readonly Comparable[]): Comparable[] {
  return list
    .map(comparable)
    .map((c) => [JSON.stringify(c), c] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, c]) => c);
}

/** A Decision about the tenant's DNS zone or service links: it names the tenant, not one of its objects. */
const isDerived = (d: Comparable) => d.tenantRef.namespace === "";

/** The sync worker's Decisions about tenant objects since `mark`, each id once (a redelivered publish is the same Decision). */
function publishedSince(mark: number): Decision[] {
  const seen = new Set<string>();
  return decisions.slice(mark).filter((d) => !isDerived(d) && !seen.has(d.id) && seen.add(d.id));
}

/**
 * The worker's last Decision since `mark` for each derived ConfigMap it wrote: intermediate
 * writes (a Service's copy before a selected Pod is Ready) are steps on the way there.
 */
function lastDerivedSince(mark: number): Comparable[] {
  const last = new Map<string, Decision>();
  for (const d of decisions.slice(mark)) if (isDerived(d)) last.set(d.hostRef.name, d);
  return sorted([...last.values()]);
}

/**
 * The prediction with each placeholder for an address the host assigns after the write
 * (`<ClusterIP of ns/name>`, `<IP of Pod ns/name once Ready>`) replaced by the address it
 * has now; a placeholder whose object has none yet stays, and fails the comparison.
 */
async function resolvePlaceholders(list: readonly Comparable[]): Promise<Comparable[]> {
  const out: Comparable[] = [];
  for (const d of list) {
    let reason = d.reason;
    for (const [placeholder, kind, namespace, name] of d.reason.matchAll(
      /<(ClusterIP of|IP of Pod) ([^/ >]+)\/([^ >]+)(?: once Ready)?>/g,
    )) {
      const found =
        kind === "ClusterIP of"
          ? (await hostObjects.get<Obj>("v1", "Service", name!, namespace))?.["spec"]
          : (await hostObjects.get<Obj>("v1", "Pod", name!, namespace))?.["status"];
      const address = (found as { clusterIP?: string; podIP?: string } | undefined)?.[
        kind === "ClusterIP of" ? "clusterIP" : "podIP"
      ];
      if (address) reason = reason.replace(placeholder, address);
    }
    out.push({ ...d, reason });
  }
  return out;
}

const configMap = (name: string, data: Record<string, string>): Obj => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "shop" },
  data,
});
const secret: Obj = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "creds", namespace: "shop" },
  type: "Opaque",
  stringData: { password: "s3cr3t" },
};
const service = (port: number): Obj => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "shop" },
  spec: { selector: { app: "web" }, ports: [{ port, targetPort: 8080 }] },
});
const pod: Obj = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "app", namespace: "shop", labels: { app: "web" } },
  spec: {
    automountServiceAccountToken: false,
    containers: [{ name: "app", image: "nginx:1.27", volumeMounts: [{ name: "settings", mountPath: "/etc/app" }] }],
    volumes: [{ name: "settings", configMap: { name: "settings" } }],
  },
};

const hostName = (name: string) => `${name}-x-shop-x-${TENANT}`;

/** Applies the manifest to the tenant API as `kubectl apply [--prune]` would with explain-sync's meaning of --prune. */
async function applyToTenant(manifest: readonly Obj[], prune: boolean): Promise<void> {
  for (const obj of manifest) await tenant.apply(obj);
  if (!prune) return;
  const wanted = new Set(manifest.map((o) => `${o.kind}/${o.metadata?.name}`));
  const namespaces = new Set(manifest.map((o) => o.metadata?.namespace ?? "default"));
  for (const namespace of namespaces) {
    for (const kind of SYNC_KINDS) {
      for (const obj of await tenant.list("v1", kind, { namespace })) {
        if (!wanted.has(`${kind}/${obj.metadata?.name}`)) {
          await tenant.delete({ apiVersion: "v1", kind, metadata: { name: obj.metadata?.name, namespace } });
        }
      }
    }
  }
}

/** Predicts `manifest` with the real CLI (-o json), as the tenant will have it once applied. */
async function predict(label: string, manifest: readonly Obj[], prune = false): Promise<Prediction[]> {
  const file = join(workDir, `${label}.yaml`);
  await writeFile(file, manifest.map((m) => YAML.stringify(m)).join("---\n"));
  const run = await runTenantplane(
    ["explain-sync", "--tenant", TENANT, "-f", file, "-o", "json", ...(prune ? ["--prune"] : [])],
    { HOME: workDir, KUBECONFIG: host.kubeconfigPath, CONTENT_HASH_KEY: HASH_KEY },
  );
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Prediction[];
}

/** Workloads in `manifest`: their Pods are named by the tenant's controllers, not by the manifest. */
const workloadsOf = (manifest: readonly Obj[]) =>
  manifest.filter((o) => !(SYNC_KINDS as readonly string[]).includes(o.kind ?? "")).map((o) => o.metadata?.name ?? "");

/**
 * One step: predict with the CLI, apply, then require the sync worker's Decisions (published
 * from then on, settled for {@link SETTLE_MS}) to equal the prediction. The rows of a workload
 * (its own Skip and its template stand-ins) and the Decisions about its controller's Pods are
 * compared by the tests that make them. Returns the whole prediction.
 */
async function predictApplyCompare(label: string, manifest: readonly Obj[], prune = false): Promise<Prediction[]> {
  const raw = await predict(label, manifest, prune);
  const workloads = workloadsOf(manifest);
  const predicted = sorted(
    raw.filter((d) => d.template === undefined && (SYNC_KINDS as readonly string[]).includes(d.kind)),
  );
  const forObjects = predicted.filter((d) => !isDerived(d));
  const derived = predicted.filter(isDerived);
  const controllerPod = (d: Decision) =>
    d.kind === "Pod" && workloads.some((name) => d.tenantRef.name.startsWith(`${name}-`));
  const published = (mark: number) => sorted(publishedSince(mark).filter((d) => !controllerPod(d)));

  const mark = decisions.length;
  await applyToTenant(manifest, prune);
  await waitFor(
    async () =>
      (isDeepStrictEqual(published(mark), forObjects) &&
        isDeepStrictEqual(lastDerivedSince(mark), await resolvePlaceholders(derived))) ||
      undefined,
    {
      timeoutMs: 120_000,
      intervalMs: 200,
      description: `the sync worker's Decisions for step ${label} to equal the prediction`,
    },
  ).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  expect(published(mark)).toEqual(forObjects);
  expect(lastDerivedSince(mark)).toEqual(await resolvePlaceholders(derived));
  return raw;
}

const summary = (list: readonly Comparable[]) => list.map((d) => `${d.action} ${d.kind} ${d.hostRef.name}`);

beforeAll(async () => {
  workDir = createArtifactsDir("explain-sync-live");
  [host, nats] = await Promise.all([startHostCluster({ name: "explain-sync-live" }), startNats()]);
  hostObjects = new Objects(host.kubeConfig, "e2e");
  await installCrds(host.kubeConfig, crdManifests());
  await hostObjects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
  nc = await connect({ servers: nats.url });
  await ensureTopology(await jetstreamManager(nc), []);
  sub = nc.subscribe(`tenantplane.decisions.${TENANT}.>`, {
    callback: (_err, msg) => {
      const parsed = DecisionSchema.safeParse(msg.json());
      if (parsed.success && parsed.data.service === "sync-worker") decisions.push(parsed.data);
    },
  });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    fleet.start("sync-worker", { CONTENT_HASH_KEY: HASH_KEY, PARTITIONS: "16", LEASE_BUCKET: "explain-sync-live" }),
  ]);
  // No SyncPolicy: every supported kind syncs.
  await hostObjects.apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: TENANT },
    spec: { controlPlane: { expose: { loadBalancer: { enabled: true } } } },
  });
  await setLoadBalancerIngress(host.kubeConfig, HOST_NS, "k3s", ADDRESS);
  tenantApi = await startTenantStandIn(host.kubeConfig, TENANT, ADDRESS);
  await waitFor(
    async () => {
      const tc = await hostObjects.get<Obj>("tenantplane.io/v1alpha1", "TenantCluster", TENANT);
      const conditions = (tc?.["status"] as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions;
      return conditions?.some((c) => c.type === "Synced" && c.status === "True") || undefined;
    },
    { timeoutMs: 400_000, intervalMs: 500, description: `${TENANT} Synced=True` },
  );
  const kubeconfig = await runTenantplane(["kubeconfig", TENANT, "--external"], {
    HOME: workDir,
    KUBECONFIG: host.kubeconfigPath,
  });
  expect(kubeconfig.code).toBe(0);
  // Applied as `kubectl apply --server-side` does, whose field manager explain-sync dry-runs as by default.
  tenant = new Objects(kubeConfigFromString(kubeconfig.stdout), "kubectl");
  // The worker writes the tenant's DNS zone once it syncs the tenant; the first step updates it.
  await waitFor(async () => (await hostObjects.get("v1", "ConfigMap", "tenant-dns-records", HOST_NS)) ?? undefined, {
    timeoutMs: 30_000,
    description: "the tenant DNS zone ConfigMap",
  });
  await tenant.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  await waitForDefaultServiceAccount();
  // Starting a host cluster, NATS, four services and a tenant API takes minutes on a loaded machine.
}, 600_000);

/** The tenant controller manager makes (and remakes) ServiceAccount shop/default, which the Pods need. */
async function waitForDefaultServiceAccount(): Promise<void> {
  await waitFor(
    async () => (await tenant.get("v1", "ServiceAccount", "default", "shop", { fresh: true })) ?? undefined,
    {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: "tenant ServiceAccount shop/default",
    },
  );
}

afterAll(async () => {
  const keepLogs = failures.failed();
  sub?.unsubscribe();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  await tenantApi?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
  if (workDir) releaseArtifactsDir(workDir, keepLogs);
});

describe("explain-sync predicts the sync worker's Decisions, object by object", () => {
  it("Create: four new objects of four kinds", async () => {
    const predicted = await predictApplyCompare("create", [
      configMap("settings", { mode: "v1" }),
      secret,
      service(80),
      pod,
    ]);
    expect(summary(predicted).sort()).toEqual(
      [
        `Create ConfigMap ${hostName("settings")}`,
        `Create Pod ${hostName("app")}`,
        `Create Secret ${hostName("creds")}`,
        `Create Service ${hostName("web")}`,
        // The new Service's name in the DNS zone and its service links, at the ClusterIP the host will assign.
        "Update ConfigMap tenant-dns-records",
        "Create ConfigMap service-links.shop",
      ].sort(),
    );
    const zone = predicted.find((d) => d.hostRef.name === "tenant-dns-records");
    expect(zone?.tenantRef).toEqual({ namespace: "", name: TENANT });
    expect(zone?.reason).toContain(`web.shop.svc.cluster.local <ClusterIP of ${HOST_NS}/${hostName("web")}>`);
    // Nothing of the Secret's content in any reason.
    expect(predicted.filter((d) => d.reason.includes("s3cr3t"))).toEqual([]);
  });

  it("Update on a changed field, Skip on a name a foreign host object holds, nothing for unchanged objects", async () => {
    await hostObjects.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: hostName("foreign"), namespace: HOST_NS },
      data: { owner: "someone else" },
    });
    const predicted = await predictApplyCompare("update-skip", [
      configMap("settings", { mode: "v2" }),
      secret,
      service(81),
      pod,
      configMap("foreign", { x: "1" }),
    ]);
    expect(summary(predicted).sort()).toEqual(
      [
        `Update ConfigMap ${hostName("settings")}`,
        `Update Service ${hostName("web")}`,
        `Skip ConfigMap ${hostName("foreign")}`,
        // The port is in the service links; the zone names only addresses, so it stays.
        "Update ConfigMap service-links.shop",
      ].sort(),
    );
    expect(predicted.find((d) => d.action === "Skip")?.reason).toBe(
      "held by foreign object (not managed by tenantplane)",
    );
    // The foreign object is left as it was.
    const foreign = await hostObjects.get<Obj>("v1", "ConfigMap", hostName("foreign"), HOST_NS);
    expect(foreign?.["data"]).toEqual({ owner: "someone else" });
  });

  it("Delete for objects removed from a --prune manifest", async () => {
    const predicted = await predictApplyCompare("delete", [configMap("settings", { mode: "v2" }), pod], true);
    expect(summary(predicted).sort()).toEqual([
      "Delete ConfigMap service-links.shop",
      `Delete Secret ${hostName("creds")}`,
      `Delete Service ${hostName("web")}`,
      "Update ConfigMap tenant-dns-records",
    ]);
    expect(
      predicted
        .filter((d) => !isDerived(d))
        .map((d) => d.reason)
        .sort(),
    ).toEqual([
      `source Secret shop/creds gone from tenant ${TENANT}`,
      `source Service shop/web gone from tenant ${TENANT}`,
    ]);
    await waitFor(
      async () => (await hostObjects.get("v1", "Secret", hostName("creds"), HOST_NS)) === undefined || undefined,
      {
        timeoutMs: 10_000,
        description: "the Secret's host copy deleted",
      },
    );
  });

  it("without --prune an object left out of the manifest is kept, and nothing is predicted or done", async () => {
    const predicted = await predictApplyCompare("keep", [configMap("settings", { mode: "v2" })]);
    expect(predicted).toEqual([]);
    expect(await hostObjects.get("v1", "Pod", hostName("app"), HOST_NS)).toBeDefined();
  });

  it("a headless Service and a Pod with hostname and subdomain: their names at the Pod's address once Ready", async () => {
    const peers: Obj = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "peers", namespace: "shop" },
      spec: { clusterIP: "None", selector: { app: "peer" }, ports: [{ port: 7000 }] },
    };
    const peer: Obj = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "peer-0", namespace: "shop", labels: { app: "peer" } },
      spec: {
        hostname: "peer-0",
        subdomain: "peers",
        automountServiceAccountToken: false,
        containers: [{ name: "app", image: "nginx:1.27" }],
      },
    };
    // The --prune step deleted the namespace's ServiceAccount with the rest; the Pod needs it back.
    await waitForDefaultServiceAccount();
    const predicted = await predictApplyCompare("headless", [configMap("settings", { mode: "v2" }), peers, peer]);
    expect(summary(predicted).sort()).toEqual(
      [
        `Create Pod ${hostName("peer-0")}`,
        `Create Service ${hostName("peers")}`,
        "Update ConfigMap tenant-dns-records",
      ].sort(),
    );
    const pending = `<IP of Pod ${HOST_NS}/${hostName("peer-0")} once Ready>`;
    const zone = predicted.find((d) => d.hostRef.name === "tenant-dns-records")!;
    expect(zone.reason).toContain(
      `peer-0.peers.shop.svc.cluster.local ${pending} (Pod shop/peer-0 hostname and subdomain)`,
    );
    expect(zone.reason).toContain(
      `peers.shop.svc.cluster.local ${pending} (headless Service shop/peers, Pod peer-0 Ready)`,
    );
    // The comparison above replaced the placeholder by the host Pod's address: it has one.
    const podIP = ((await hostObjects.get<Obj>("v1", "Pod", hostName("peer-0"), HOST_NS))?.["status"] as Obj)?.[
      "podIP"
    ];
    expect(podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });
});

describe("explain-sync predicts the host API server's refusals as Fail, as the sync worker meets them", () => {
  const plainPod = (name: string, extra: Record<string, unknown> = {}): Obj => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "shop" },
    spec: { automountServiceAccountToken: false, containers: [{ name: "app", image: "nginx:1.27", ...extra }] },
  });
  const fails = (list: readonly Prediction[]) => list.filter((d) => d.action === "Fail");
  /**
   * Removes a refused object from the tenant: left there, every later prediction would predict
   * its Fail again, which the worker publishes once per error, not per step. A host copy made
   * after all is gone too before the next step, whose Decisions it would otherwise join.
   */
  const removeFromTenant = async (kind: string, name: string, apiVersion = "v1") => {
    await tenant.delete({ apiVersion, kind, metadata: { name, namespace: "shop" } });
    if (!(SYNC_KINDS as readonly string[]).includes(kind)) return;
    await waitFor(async () => (await hostObjects.get("v1", kind, hostName(name), HOST_NS)) === undefined, {
      timeoutMs: 60_000,
      description: `no host copy of ${kind} shop/${name}`,
    });
  };
  // An admission policy of the host's own, as a host admin might run (or a webhook): it refuses
  // Pods whose images are not pinned. The planner cannot know of it; only the host's answer can.
  const policy = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: "explain-sync-pinned-images" },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"] },
        ],
      },
      validations: [
        {
          expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))",
          message: "images must name a version, not :latest",
          reason: "Forbidden",
        },
      ],
    },
  };
  const binding = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: "explain-sync-pinned-images" },
    spec: {
      policyName: policy.metadata.name,
      validationActions: ["Deny"],
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": HOST_NS } } },
    },
  };
  const latest = { image: "nginx:latest" };

  beforeAll(async () => {
    await hostObjects.apply(policy);
    await hostObjects.apply(binding);
    // In force once the API server has compiled it: a dry run of an unpinned Pod is refused.
    const probe = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "policy-probe", namespace: HOST_NS },
      spec: { containers: [{ name: "app", ...latest }] },
    };
    await waitFor(
      async () => {
        try {
          await hostObjects.apply(probe, { dryRun: true });
          return false;
        } catch (error) {
          return /images must name a version/.test(String(error)) || undefined;
        }
      },
      { timeoutMs: 30_000, description: "the host's admission policy in force" },
    );
  });

  afterAll(async () => {
    await hostObjects?.delete(binding).catch(() => undefined);
    await hostObjects?.delete(policy).catch(() => undefined);
  });

  it("a Pod beyond a host ResourceQuota: Fail with the quota's numbers", async () => {
    // A quota of exactly the Pods there are now: the next Pod exceeds it.
    const quota = {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "explain-sync-pods", namespace: HOST_NS },
      spec: { hard: { pods: "1000" } },
    };
    await hostObjects.apply(quota);
    const used = await waitFor(
      async () =>
        (
          (await hostObjects.get<Obj>("v1", "ResourceQuota", quota.metadata.name, HOST_NS, { fresh: true }))?.[
            "status"
          ] as { used?: { pods?: string } } | undefined
        )?.used?.pods,
      { timeoutMs: 30_000, description: "the quota's usage counted" },
    );
    await hostObjects.apply({ ...quota, spec: { hard: { pods: used } } });
    await waitFor(
      async () =>
        (
          (await hostObjects.get<Obj>("v1", "ResourceQuota", quota.metadata.name, HOST_NS, { fresh: true }))?.[
            "status"
          ] as { hard?: { pods?: string } } | undefined
        )?.hard?.pods === used || undefined,
      { timeoutMs: 30_000, description: "the lowered quota in force" },
    );
    try {
      const predicted = await predictApplyCompare("quota", [configMap("settings", { mode: "v2" }), plainPod("big")]);
      expect(fails(predicted).map((d) => [d.hostRef.name, d.error?.code, d.error?.reason, d.error?.attempted])).toEqual(
        [[hostName("big"), 403, "Forbidden", "Create"]],
      );
      expect(fails(predicted)[0]?.reason).toBe(
        `Forbidden: pods "${hostName("big")}" is forbidden: exceeded quota: explain-sync-pods, requested: pods=1, used: pods=${used}, limited: pods=${used}`,
      );
      // The tenant side explains the Pod that was never copied: what happens now, and the worker's Fail.
      const explained = await runTenantplane(["explain", "pod/shop/big", "--tenant", TENANT], {
        HOME: workDir,
        KUBECONFIG: host.kubeconfigPath,
        NATS_URL: nats.url,
        CONTENT_HASH_KEY: HASH_KEY,
      });
      expect(explained.stderr).toBe("");
      expect(explained.code).toBe(0);
      expect(explained.stdout).toContain(`owner:        no host copy: tenant ${TENANT}'s Pod shop/big maps to`);
      expect(explained.stdout).toContain(
        `planned now:  Fail: Forbidden: pods "${hostName("big")}" is forbidden: exceeded quota`,
      );
      expect(explained.stdout).toMatch(/ Fail +sync-worker: Forbidden: pods .* exceeded quota: explain-sync-pods/);
    } finally {
      await removeFromTenant("Pod", "big");
      await hostObjects.delete({ apiVersion: "v1", kind: "ResourceQuota", metadata: quota.metadata });
    }
  });

  it("a Pod the host's admission policy refuses and a Service the host answers 422: Fail with the server's words; a Pod Pod Security forbids: Skip", async () => {
    // The tenant API takes annotations up to 256 KiB; the host copy adds the reverse mapping and goes over.
    const blob: Obj = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "blob", namespace: "shop", annotations: { "example.com/blob": "x".repeat(262_100) } },
      spec: { selector: { app: "blob" }, ports: [{ port: 80 }] },
    };
    // Pod Security baseline forbids an unconfined seccomp profile, and so does the profile's
    // allow-list, which the planner applies itself (before Pod Security): a Skip, never a write.
    const unconfined = plainPod("unconfined", { securityContext: { seccompProfile: { type: "Unconfined" } } });
    const predicted = await predictApplyCompare("refusals", [
      configMap("settings", { mode: "v2" }),
      plainPod("unpinned", latest),
      unconfined,
      blob,
    ]).finally(async () => {
      for (const name of ["unpinned", "unconfined"]) await removeFromTenant("Pod", name);
      await removeFromTenant("Service", "blob");
    });
    const byName = new Map(fails(predicted).map((d) => [d.hostRef.name, d]));
    expect([...byName.keys()].sort()).toEqual([hostName("blob"), hostName("unpinned")]);
    expect(byName.get(hostName("unpinned"))).toMatchObject({
      error: { code: 403, reason: "Forbidden", attempted: "Create" },
      reason: `Forbidden: pods "${hostName("unpinned")}" is forbidden: ValidatingAdmissionPolicy 'explain-sync-pinned-images' with binding 'explain-sync-pinned-images' denied request: images must name a version, not :latest`,
    });
    expect(byName.get(hostName("blob"))?.error).toMatchObject({ code: 422, reason: "Invalid", attempted: "Create" });
    expect(byName.get(hostName("blob"))?.reason).toContain("metadata.annotations: Too long");
    const skipped = predicted.find((d) => d.hostRef.name === hostName("unconfined"));
    expect(skipped?.action).toBe("Skip");
    expect(skipped?.reason).toMatch(
      /^refused by host rules: spec\.containers\[0\]\.securityContext\.seccompProfile\.type: /,
    );
    // None was written: the host has no copy of any.
    for (const [kind, name] of [
      ["Pod", "unpinned"],
      ["Pod", "unconfined"],
      ["Service", "blob"],
    ] as const) {
      expect(await hostObjects.get("v1", kind, hostName(name), HOST_NS)).toBeUndefined();
    }
  });

  it("a Deployment whose Pod template the host refuses: the refusal is predicted at the Deployment", async () => {
    const deployment: Obj = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "prober", namespace: "shop" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "prober" } },
        template: {
          metadata: { labels: { app: "prober" } },
          spec: {
            automountServiceAccountToken: false,
            containers: [{ name: "app", ...latest }],
          },
        },
      },
    };
    const mark = decisions.length;
    onTestFinished(() => removeFromTenant("Deployment", "prober", "apps/v1").then(() => undefined));
    const predicted = await predictApplyCompare("deployment", [deployment]);
    const own = predicted.find((d) => d.kind === "Deployment");
    expect(own).toMatchObject({ action: "Skip", hostRef: { namespace: "" } });
    expect(own?.reason).toMatch(
      /^not synced itself: the Deployment controller in the tenant makes its Pods from spec.template/,
    );
    const standIn = predicted.find((d) => d.template !== undefined);
    expect(standIn).toMatchObject({
      action: "Fail",
      kind: "Pod",
      template: { kind: "Deployment", namespace: "shop", name: "prober", field: "spec.template" },
      error: { code: 403, reason: "Forbidden", attempted: "Create" },
    });
    expect(standIn?.reason).toMatch(
      /^from spec\.template of Deployment shop\/prober \(each of its Pods\): Forbidden: pods ".*" is forbidden: ValidatingAdmissionPolicy 'explain-sync-pinned-images' .*denied request: images must name a version, not :latest$/,
    );
    // The tenant's controllers make the Pod; the worker's write of it fails the same way, in the same words
    // but for the Pod's real name.
    const real = await waitFor(
      () => decisions.slice(mark).find((d) => d.kind === "Pod" && d.tenantRef.name.startsWith("prober-")),
      { timeoutMs: 120_000, description: "the sync worker's Decision about the Deployment's Pod" },
    );
    const named = (text: string) => text.replaceAll(standIn!.hostRef.name, real.hostRef.name);
    expect(real.action).toBe("Fail");
    expect(real.error).toEqual({ ...standIn!.error!, message: named(standIn!.error!.message) });
    expect(`from spec.template of Deployment shop/prober (each of its Pods): ${real.reason}`).toBe(
      named(standIn!.reason),
    );
    // explain tc/<tenant> lists it among what is not synced, with the host's words.
    const tc = await runTenantplane(["explain", `tc/${TENANT}`, "-o", "json"], {
      HOME: workDir,
      KUBECONFIG: host.kubeconfigPath,
      NATS_URL: nats.url,
    });
    expect(tc.code).toBe(0);
    const notSynced = (
      JSON.parse(tc.stdout) as { notSynced: Array<{ tenantRef: { name: string }; action: string; reason: string }> }
    ).notSynced;
    expect(notSynced).toContainEqual(
      expect.objectContaining({
        tenantRef: { namespace: "shop", name: real.tenantRef.name },
        action: "Fail",
        reason: real.reason,
      }),
    );
  });
});
