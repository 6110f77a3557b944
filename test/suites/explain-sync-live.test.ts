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
// object by object (action, kind, tenant object, host object, reason).

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

/** The sync worker's Decisions since `mark`, each id once (a redelivered publish is the same Decision). */
// Decisions about tenant objects, which explain-sync predicts. The tenant-wide DNS zone and
// service-link ConfigMaps the worker derives from them (tenantRef without a namespace) are
// not predicted by explain-sync yet.
function publishedSince(mark: number): Decision[] {
  const seen = new Set<string>();
  return decisions.slice(mark).filter((d) => d.tenantRef.namespace !== "" && !seen.has(d.id) && seen.add(d.id));
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

  const mark = decisions.length;
  await applyToTenant(manifest, prune);
  await waitFor(() => isDeepStrictEqual(sorted(publishedSince(mark)), predicted) || undefined, {
    timeoutMs: 120_000,
    intervalMs: 200,
    description: `the sync worker's Decisions for step ${label} to equal the prediction`,
  }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  expect(sorted(publishedSince(mark))).toEqual(predicted);
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
  await tenant.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  // The stand-in runs no controller manager: the Pod's ServiceAccount is made by hand, outside the manifests.
  await tenant.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: "shop" } });
  // Starting a host cluster, NATS, four services and a tenant API takes minutes on a loaded machine.
}, 600_000);

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
      ].sort(),
    );
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
      `Delete Secret ${hostName("creds")}`,
      `Delete Service ${hostName("web")}`,
    ]);
    expect(predicted.map((d) => d.reason).sort()).toEqual([
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
});
