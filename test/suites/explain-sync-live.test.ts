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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** What a prediction and a published Decision must agree on. */
type Comparable = Pick<Decision, "action" | "kind" | "tenantRef" | "hostRef" | "reason">;

/** The host object by namespace and name: a written object's uid is known only after the write. */
function comparable(d: Decision): Comparable {
  const hostRef = { namespace: d.hostRef.namespace, name: d.hostRef.name };
  return { action: d.action, kind: d.kind, tenantRef: d.tenantRef, hostRef, reason: d.reason };
}

function sorted(list: readonly Decision[]): Comparable[] {
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

/**
 * One step: predict with the CLI, apply, then require the sync worker's Decisions (published
 * from then on, settled for {@link SETTLE_MS}) to equal the prediction. Returns the prediction.
 */
async function predictApplyCompare(label: string, manifest: readonly Obj[], prune = false): Promise<Comparable[]> {
  const file = join(workDir, `${label}.yaml`);
  await writeFile(file, manifest.map((m) => YAML.stringify(m)).join("---\n"));
  const run = await runTenantplane(
    ["explain-sync", "--tenant", TENANT, "-f", file, "-o", "json", ...(prune ? ["--prune"] : [])],
    { HOME: workDir, KUBECONFIG: host.kubeconfigPath, CONTENT_HASH_KEY: HASH_KEY },
  );
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const predicted = sorted(JSON.parse(run.stdout) as Decision[]);
  const forObjects = predicted.filter((d) => !isDerived(d));
  const derived = predicted.filter(isDerived);

  const mark = decisions.length;
  await applyToTenant(manifest, prune);
  await waitFor(
    async () =>
      (isDeepStrictEqual(sorted(publishedSince(mark)), forObjects) &&
        isDeepStrictEqual(lastDerivedSince(mark), await resolvePlaceholders(derived))) ||
      undefined,
    {
      timeoutMs: 120_000,
      intervalMs: 200,
      description: `the sync worker's Decisions for step ${label} to equal the prediction`,
    },
  ).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  expect(sorted(publishedSince(mark))).toEqual(forObjects);
  expect(lastDerivedSince(mark)).toEqual(await resolvePlaceholders(derived));
  return predicted;
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
