import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { kubeConfigFromString, Objects } from "@tenantplane/kube";
import { hostName } from "@tenantplane/mapping";
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
  testProvisionerName,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type TenantApiServer,
  waitForSynced,
} from "../harness/index.js";

// Claims only get what the profile gives: tenant claims are created through the tenant's API
// under the built-in IsolationProfile (the host's default StorageClass only, no resource
// claims), and what the host then stores is read back. The sync worker's Decisions are
// compared with what `tenantplane explain-sync` predicted for the same manifest.

const failures = trackFailures();
const TENANT = "claims";
// Tenant API stand-ins of this suite live on 127.0.0.71-74.
const ADDRESS = "127.0.0.71";
const HOST_NS = `tp-${TENANT}`;
const HASH_KEY = "claims-content-hash-key";
/** A static host volume made by an operator for someone else, labelled for its owner. */
const VAULT = "bank-vault";
/** An operator's static volume of the host's default class, Available to whichever claim of that class matches it. */
const POOL = "team-pool";
/** The tenant's own copy of the host's default class, which its claims ask for. */
const CLASS_COPY = `tp-${TENANT}.standard`;
/** A static volume an operator hands to the tenant: made for its class copy. */
const HANDED = "handed-to-claims";

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
let predictions: Array<Pick<Decision, "action" | "kind" | "tenantRef" | "reason">> = [];

const copyOf = (name: string) => hostName({ tenant: TENANT, namespace: "shop", name }).name;
const claim = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): Obj => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name, namespace: "shop", ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, ...spec },
});
const pod = (name: string, spec: Record<string, unknown>): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "shop" },
  spec: { containers: [{ name: "app", image: "nginx" }], ...spec },
});

// Every tenant object the suite applies, each asking the host for something the profile does not give.
const manifest: Obj[] = [
  // Asks for the host's default class by name, which the operator's pool volume is of; read-write-once.
  claim("plain", { storageClassName: "standard" }),
  // Read-write-many: only the volume the operator made for the tenant's class copy has that mode.
  claim("shared", { accessModes: ["ReadWriteMany"] }),
  // Names the operator's volume by name and by label, and says it is already bound on a node.
  claim(
    "data",
    { volumeName: VAULT, selector: { matchLabels: { owner: "bank" } } },
    {
      "pv.kubernetes.io/bind-completed": "yes",
      "pv.kubernetes.io/bound-by-controller": "yes",
      "volume.kubernetes.io/selected-node": "kwok-node-0",
      "volume.beta.kubernetes.io/storage-provisioner": "evil.example.com/provisioner",
    },
  ),
  // Class "" binds pre-made volumes without a class: the operator's vault.
  claim("loot", { storageClassName: "", volumeName: VAULT }),
  // A host class the built-in profile does not allow.
  claim("fast-data", { storageClassName: "fast" }),
  // The same through an ephemeral volume, which the host's ephemeral-volume controller turns into a claim.
  pod("raider", {
    volumes: [
      {
        name: "scratch",
        ephemeral: {
          volumeClaimTemplate: {
            spec: {
              accessModes: ["ReadWriteOnce"],
              resources: { requests: { storage: "1Gi" } },
              storageClassName: "",
              volumeName: VAULT,
            },
          },
        },
      },
    ],
  }),
  // Devices from the node's drivers (dynamic resource allocation).
  pod("gpu", {
    containers: [{ name: "app", image: "nginx", resources: { claims: [{ name: "gpu" }] } }],
    resourceClaims: [{ name: "gpu", resourceClaimTemplateName: "single-gpu" }],
  }),
];

const decisionFor = (kind: string, name: string) =>
  decisions.find((d) => d.kind === kind && d.tenantRef.namespace === "shop" && d.tenantRef.name === name);

async function tenantEvents(name: string): Promise<Obj[]> {
  const events = await tenant.list<Obj>("v1", "Event", { namespace: "shop" });
  return events.filter((e) => (e["involvedObject"] as { name?: string } | undefined)?.name === name);
}

async function volumePhase(name: string): Promise<{ phase?: string; claimRef?: { name?: string } }> {
  const pv = await hostObjects.get<Obj>("v1", "PersistentVolume", name);
  return {
    phase: (pv?.["status"] as { phase?: string } | undefined)?.phase,
    claimRef: (pv?.["spec"] as Obj)["claimRef"] as { name?: string } | undefined,
  };
}
const vaultPhase = () => volumePhase(VAULT);

/** A static volume an operator made by hand (hostPath, Retain), Available to whichever claim matches it. */
function staticVolume(
  name: string,
  storageClassName: string,
  accessModes: string[],
  labels: Record<string, string>,
  storage = "5Gi",
) {
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name, labels },
    spec: {
      capacity: { storage },
      accessModes,
      storageClassName,
      persistentVolumeReclaimPolicy: "Retain",
      hostPath: { path: join(workDir, name) },
    },
  } as Obj;
}

/** The host copy of tenant claim `name` once Bound. */
async function boundCopy(name: string): Promise<Obj> {
  return waitFor(
    async () => {
      const found = await hostObjects.get<Obj>("v1", "PersistentVolumeClaim", copyOf(name), HOST_NS);
      return (found?.["status"] as { phase?: string } | undefined)?.phase === "Bound" ? found : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, description: `host claim ${copyOf(name)} Bound` },
  );
}

beforeAll(async () => {
  workDir = createArtifactsDir("claims");
  [host, nats] = await Promise.all([startHostCluster({ name: "claims" }), startNats()]);
  hostObjects = new Objects(host.kubeConfig, "e2e");
  await installCrds(host.kubeConfig, crdManifests());
  await hostObjects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
  // A second host class (served by the harness's provisioner) and an operator's static volume
  // without a class, Available for anyone whose claim matches it.
  await hostObjects.create({
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: "fast" },
    provisioner: testProvisionerName,
    reclaimPolicy: "Delete",
    volumeBindingMode: "Immediate",
  } as Obj);
  await hostObjects.create(staticVolume(VAULT, "", ["ReadWriteOnce"], { owner: "bank" }));
  // The same of the host's default class, the one tenant claims may use: the host's PV controller
  // binds a claim of that class to it (the smallest Available match) before anything is provisioned.
  // 2Gi fits the tenant's 1Gi claims but not the tenant control plane's own 5Gi data claim in the
  // host namespace, which the provisioner makes of the host's default class.
  await hostObjects.create(staticVolume(POOL, "standard", ["ReadWriteOnce"], { owner: "platform-team" }, "2Gi"));
  // And one the operator hands to the tenant, made for its class copy.
  await hostObjects.create(staticVolume(HANDED, CLASS_COPY, ["ReadWriteMany"], { owner: TENANT }));
  for (const name of [VAULT, POOL, HANDED]) {
    await waitFor(async () => (await volumePhase(name)).phase === "Available" || undefined, {
      timeoutMs: 30_000,
      description: `PersistentVolume ${name} Available`,
    });
  }
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
    fleet.start("recorder"),
    fleet.start("sync-worker", { CONTENT_HASH_KEY: HASH_KEY, PARTITIONS: "8", LEASE_BUCKET: "claims-e2e" }),
  ]);
  // No profile and no policy: the built-in ones, under which every supported kind syncs.
  await hostObjects.apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: TENANT },
    spec: { controlPlane: { expose: { loadBalancer: { enabled: true } } } },
  });
  await setLoadBalancerIngress(host.kubeConfig, HOST_NS, "k3s", ADDRESS);
  tenantApi = await startTenantStandIn(host.kubeConfig, TENANT, ADDRESS);
  await waitForSynced(host.kubeConfig, TENANT, 400_000);
  const kubeconfig = await runTenantplane(["kubeconfig", TENANT, "--external"], {
    HOME: workDir,
    KUBECONFIG: host.kubeconfigPath,
  });
  expect(kubeconfig.code).toBe(0);
  tenant = new Objects(kubeConfigFromString(kubeconfig.stdout), "kubectl");
  await tenant.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  await waitFor(() => tenant.get("v1", "ServiceAccount", "default", "shop"), {
    timeoutMs: 60_000,
    intervalMs: 100,
    description: "tenant ServiceAccount shop/default",
  });

  // What explain-sync predicts for the manifest, before the tenant has it.
  const file = join(workDir, "claims.yaml");
  await writeFile(file, manifest.map((m) => YAML.stringify(m)).join("---\n"));
  const run = await runTenantplane(["explain-sync", "--tenant", TENANT, "-f", file, "-o", "json"], {
    HOME: workDir,
    KUBECONFIG: host.kubeconfigPath,
    CONTENT_HASH_KEY: HASH_KEY,
  });
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  predictions = JSON.parse(run.stdout) as typeof predictions;

  for (const obj of manifest) await tenant.apply(obj);
  await waitFor(() => manifest.every((o) => decisionFor(o.kind!, o.metadata!.name!)) || undefined, {
    timeoutMs: 60_000,
    intervalMs: 250,
    description: "a sync worker Decision for every tenant object",
  });
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

describe("a tenant claim on the host", () => {
  it("names no host volume: its copy gets the tenant's copy of the host's default class and binds a volume provisioned for it", async () => {
    const copy = await boundCopy("data");
    const spec = copy["spec"] as { volumeName?: string; selector?: unknown; storageClassName?: string };
    expect(spec.selector).toBeUndefined();
    expect(spec.storageClassName).toBe(CLASS_COPY);
    expect(spec.volumeName).not.toBe(VAULT);
    const pv = await hostObjects.get<Obj>("v1", "PersistentVolume", spec.volumeName!);
    expect(pv?.metadata?.annotations?.["pv.kubernetes.io/provisioned-by"]).toBe(testProvisionerName);
    expect((pv?.["spec"] as { storageClassName?: string }).storageClassName).toBe(CLASS_COPY);
    expect((pv?.["spec"] as { claimRef?: { name?: string } }).claimRef?.name).toBe(copyOf("data"));
    // The tenant's binding annotations are gone; the host's controllers wrote their own.
    const annotations = copy.metadata?.annotations ?? {};
    expect(annotations["volume.kubernetes.io/selected-node"]).toBeUndefined();
    expect(annotations["volume.beta.kubernetes.io/storage-provisioner"]).not.toBe("evil.example.com/provisioner");
    expect(await vaultPhase()).toEqual({ phase: "Available", claimRef: undefined });

    const decision = decisionFor("PersistentVolumeClaim", "data")!;
    expect(decision.action).toBe("Create");
    expect(decision.reason).toContain(
      "spec.volumeName, spec.selector, metadata.annotations[pv.kubernetes.io/bind-completed], " +
        "metadata.annotations[pv.kubernetes.io/bound-by-controller] and 2 more dropped",
    );
    expect(decision.reason).toContain("spec.storageClassName set to the host's default StorageClass standard");
    expect(decision.reason).toContain(
      `spec.storageClassName standard becomes ${CLASS_COPY}, the tenant's own copy of that host class`,
    );
  });

  it("asking for the host class by name binds a volume provisioned for it, never the operator's static volume of that class", async () => {
    const copy = await boundCopy("plain");
    const spec = copy["spec"] as { volumeName?: string; storageClassName?: string };
    expect(spec.storageClassName).toBe(CLASS_COPY);
    expect(spec.volumeName).not.toBe(POOL);
    const pv = await hostObjects.get<Obj>("v1", "PersistentVolume", spec.volumeName!);
    expect(pv?.metadata?.annotations?.["pv.kubernetes.io/provisioned-by"]).toBe(testProvisionerName);
    expect((pv?.["spec"] as { claimRef?: { name?: string } }).claimRef?.name).toBe(copyOf("plain"));
    // The tenant sees its claim Bound.
    const own = await waitFor(
      async () => {
        const found = await tenant.get<Obj>("v1", "PersistentVolumeClaim", "plain", "shop");
        return (found?.["status"] as { phase?: string } | undefined)?.phase === "Bound" ? found : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "tenant claim shop/plain Bound" },
    );
    expect(own).toBeDefined();
    expect(await volumePhase(POOL)).toEqual({ phase: "Available", claimRef: undefined });
  });

  it("binds the static volume an operator made for the tenant's class copy", async () => {
    const copy = await boundCopy("shared");
    expect((copy["spec"] as { volumeName?: string }).volumeName).toBe(HANDED);
    expect((await volumePhase(HANDED)).claimRef?.name).toBe(copyOf("shared"));
  });

  it("the class copy is the host class's twin, tenantplane's, owned by the TenantCluster, never a default, and its creation a Decision", async () => {
    const [standard, copy, tc] = await Promise.all([
      hostObjects.get<Obj>("storage.k8s.io/v1", "StorageClass", "standard"),
      hostObjects.get<Obj>("storage.k8s.io/v1", "StorageClass", CLASS_COPY),
      hostObjects.get<Obj>("tenantplane.io/v1alpha1", "TenantCluster", TENANT),
    ]);
    for (const field of ["provisioner", "parameters", "reclaimPolicy", "volumeBindingMode", "allowVolumeExpansion"]) {
      expect(copy?.[field]).toEqual(standard?.[field]);
    }
    expect(copy?.metadata?.labels).toEqual({
      "app.kubernetes.io/managed-by": "tenantplane",
      "tenantplane.io/tenant": TENANT,
    });
    expect(copy?.metadata?.annotations).toEqual({ "tenantplane.io/storage-class": "standard" });
    expect(copy?.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "TenantCluster",
        name: TENANT,
        uid: tc?.metadata?.uid,
        controller: true,
      },
    ]);
    const created = decisions.find((d) => d.kind === "StorageClass" && d.action === "Create");
    expect(created?.hostRef).toEqual({ namespace: "", name: CLASS_COPY, uid: copy?.metadata?.uid });
    expect(created?.tenantRef).toEqual({ namespace: "", name: "standard" });
    expect(created?.reason).toContain(`copy of host StorageClass standard (the host's default StorageClass`);
  });

  it.each([
    ["PersistentVolumeClaim", "loot", 'spec.storageClassName: class "" asks for a pre-made volume without a class'],
    [
      "PersistentVolumeClaim",
      "fast-data",
      "spec.storageClassName: storage class fast is not in IsolationProfile spec.workloads.storage.allowedClasses " +
        "(absent, so only the host's default StorageClass, standard)",
    ],
    [
      "Pod",
      "raider",
      'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.storageClassName: class "" asks for a pre-made volume',
    ],
    [
      "Pod",
      "gpu",
      "spec.resourceClaims[0]: claim gpu asks the node's drivers for devices, which needs " +
        "IsolationProfile spec.workloads.allowResourceClaims: true",
    ],
  ])("%s %s is skipped, naming the field and the rule, and the tenant is told on it", async (kind, name, why) => {
    const decision = decisionFor(kind, name)!;
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toContain(why);
    expect(await hostObjects.get("v1", kind, copyOf(name), HOST_NS)).toBeUndefined();
    const event = await waitFor(async () => (await tenantEvents(name)).find((e) => e["reason"] === "SyncSkipped"), {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: `SyncSkipped Event on tenant ${kind} shop/${name}`,
    });
    expect(event["type"]).toBe("Warning");
    expect(event["message"]).toContain(why);
  });

  it("leaves the operator's static volumes Available: no tenant claim bound them", async () => {
    // Long enough for the host's volume controllers to have bound them to any claim that matched.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await vaultPhase()).toEqual({ phase: "Available", claimRef: undefined });
    expect(await volumePhase(POOL)).toEqual({ phase: "Available", claimRef: undefined });
  });

  it("was predicted by explain-sync, Decision for Decision", () => {
    const published = manifest.map((o) => {
      const d = decisionFor(o.kind!, o.metadata!.name!)!;
      return { action: d.action, kind: d.kind, name: d.tenantRef.name, reason: d.reason };
    });
    const predicted = manifest.map((o) => {
      const p = predictions.find((x) => x.kind === o.kind && x.tenantRef.name === o.metadata!.name);
      return { action: p?.action, kind: p?.kind, name: p?.tenantRef.name, reason: p?.reason };
    });
    expect(predicted).toEqual(published);
  });
});

describe("a tenant's class copy", () => {
  const readCopy = () => hostObjects.get<Obj>("storage.k8s.io/v1", "StorageClass", CLASS_COPY);
  const copyDecisions = (action: string) =>
    decisions.filter((d) => d.kind === "StorageClass" && d.action === action && d.hostRef.name === CLASS_COPY);

  it("follows the host class: a field a class may change is updated in place", async () => {
    const before = await readCopy();
    await hostObjects.mergePatch(
      { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "standard" } },
      { allowVolumeExpansion: true, mountOptions: ["noatime"] },
    );
    const after = await waitFor(
      async () => ((await readCopy())?.["allowVolumeExpansion"] === true ? readCopy() : undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 250,
        description: `StorageClass ${CLASS_COPY} allowVolumeExpansion true`,
      },
    );
    expect(after?.metadata?.uid).toBe(before?.metadata?.uid);
    expect(after?.["mountOptions"]).toEqual(["noatime"]);
    await waitFor(() => copyDecisions("Update")[0], { timeoutMs: 10_000, description: "Update Decision" });
    expect(copyDecisions("Update")[0]?.reason).toBe(
      "copy of host StorageClass standard brought in step: allowVolumeExpansion, mountOptions",
    );
  });

  it("follows the host class made again with other parameters: the copy is made again, bound claims keep their volumes", async () => {
    const before = await readCopy();
    const volume = ((await boundCopy("data"))["spec"] as { volumeName?: string }).volumeName;
    const standard = (await hostObjects.get<Obj>("storage.k8s.io/v1", "StorageClass", "standard"))!;
    await hostObjects.delete(standard);
    await hostObjects.create({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: "standard", annotations: standard.metadata?.annotations ?? {} },
      provisioner: standard["provisioner"],
      parameters: { tier: "gold" },
      reclaimPolicy: "Delete",
      volumeBindingMode: "Immediate",
    } as Obj);
    const remade = await waitFor(
      async () => {
        const found = await readCopy();
        return (found?.["parameters"] as { tier?: string } | undefined)?.tier === "gold" ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: `StorageClass ${CLASS_COPY} made again with tier gold` },
    );
    expect(remade.metadata?.uid).not.toBe(before?.metadata?.uid);
    expect(copyDecisions("Delete").length).toBeGreaterThan(0);
    const copy = await boundCopy("data");
    expect((copy["spec"] as { volumeName?: string }).volumeName).toBe(volume);
    expect((copy["spec"] as { storageClassName?: string }).storageClassName).toBe(CLASS_COPY);
  });

  it("goes with the tenant: deleting the TenantCluster deletes it", async () => {
    expect(await hostObjects.get("storage.k8s.io/v1", "StorageClass", CLASS_COPY)).toBeDefined();
    await hostObjects.delete({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: TENANT },
    });
    await waitFor(async () => (await hostObjects.get("storage.k8s.io/v1", "StorageClass", CLASS_COPY)) === undefined, {
      timeoutMs: 180_000,
      intervalMs: 500,
      description: `StorageClass ${CLASS_COPY} deleted with its TenantCluster`,
    });
    // The host class it copied stays.
    expect(await hostObjects.get("storage.k8s.io/v1", "StorageClass", "standard")).toBeDefined();
  }, 200_000);
});
