// `npm run demo`: the real thing on this machine. Starts a host cluster from the test
// stack's binaries (etcd, kube-apiserver, controller-manager, scheduler, kwok nodes), a
// pinned nats-server, installs the CRDs, runs every tenantplane service as a local process,
// applies the bundled examples and waits until the tenants are Ready. The harness plays the
// two parts a laptop lacks: the cloud load balancer (it writes an address into the API
// Service's status) and k3s (a kube-apiserver started from the tenant's PKI Secret).
//
//   npm run demo              stays up until Ctrl-C, then stops everything it started
//   npm run demo -- --once    runs the same, prints the tour and exits (CI runs this)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  StorageV1Api,
  KubeConfig,
  type KubernetesObject,
  type V1Secret,
} from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import YAML from "yaml";
import {
  ServiceFleet,
  buildTools,
  installCrds,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  testProvisionerName,
  toolPath,
  waitFor,
  type HostCluster,
  type NatsServer,
  type ServiceName,
  type TenantApiServer,
} from "../harness/index.js";

const once = process.argv.includes("--once");
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const examples = (file: string) => join(repoRoot, "examples", file);
const started = performance.now();

/** A tenant of the demo and the loopback address the harness gives its load balancer. */
interface DemoTenant {
  name: string;
  address: string;
  manifest: KubernetesObject;
}

const tenants: DemoTenant[] = [
  { name: "payments-dev", address: "127.0.0.231", manifest: readYaml(examples("tenantcluster.yaml"))[0]! },
  {
    // The minimal example, exposed so this machine can reach its API (there is no in-cluster DNS here).
    name: "dev",
    address: "127.0.0.232",
    manifest: {
      ...readYaml(examples("tenantcluster-minimal.yaml"))[0]!,
      spec: { controlPlane: { expose: { loadBalancer: { enabled: true } } } },
    } as KubernetesObject,
  },
];

function step(message: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[${seconds}s] ${message}\n`);
}

function readYaml(path: string): KubernetesObject[] {
  return YAML.parseAllDocuments(readFileSync(path, "utf8"))
    .map((doc) => doc.toJSON() as KubernetesObject | null)
    .filter((doc): doc is KubernetesObject => doc !== null);
}

const workDir = mkdtempSync(join(tmpdir(), "tenantplane-demo-"));
let host: HostCluster | undefined;
let nats: NatsServer | undefined;
let fleet: ServiceFleet | undefined;
const standIns: TenantApiServer[] = [];
let stopping: Promise<void> | undefined;

async function stopAll(keepLogs = false): Promise<void> {
  stopping ??= (async () => {
    step("stopping everything the demo started");
    await fleet?.stop({ keepLogs }).catch(report);
    for (const api of standIns) await api.stop({ keepLogs }).catch(report);
    await nats?.stop({ keepLogs }).catch(report);
    await host?.stop({ keepLogs }).catch(report);
    rmSync(workDir, { recursive: true, force: true });
    step("stopped; no process or temporary directory left behind");
  })();
  return stopping;
}

function report(err: unknown): void {
  console.error(`demo: ${err instanceof Error ? err.message : String(err)}`);
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void stopAll().then(() => process.exit(0));
  });
}

try {
  await run();
  if (!once) {
    step("up; press Ctrl-C to stop");
    await new Promise(() => {});
  }
  await stopAll();
} catch (err) {
  report(err);
  await printTenantStatus();
  await stopAll(true);
  process.exit(1);
}

async function run(): Promise<void> {
  step("building the test stack's binaries (cached; a cold build takes about 8-12 minutes on 2 cores)");
  const toolsDir = await buildTools();
  step("starting the host cluster (etcd, kube-apiserver, controller-manager, scheduler, kwok) and nats-server");
  [host, nats] = await Promise.all([startHostCluster({ name: "demo", toolsDir }), startNats({ toolsDir })]);
  const kc = host.kubeConfig;
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const core = kc.makeApiClient(CoreV1Api);
  const apply = (obj: KubernetesObject) =>
    objects.patch(obj, undefined, undefined, "tenantplane-demo", true, PatchStrategy.ServerSideApply);

  step("installing the CRDs and a fast-ssd StorageClass (served by the harness's volume provisioner)");
  await installCrds(kc, crdManifests());
  await kc.makeApiClient(StorageV1Api).createStorageClass({
    body: { metadata: { name: "fast-ssd" }, provisioner: testProvisionerName, volumeBindingMode: "Immediate" },
  });
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });

  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { LOG_LEVEL: "info", POD_NAMESPACE: "tenantplane-system", RESYNC_INTERVAL_SECONDS: "30" },
  });
  const names = servicesToRun();
  step(`starting the services as local processes: ${names.join(", ")}`);
  await Promise.all(names.map((name) => fleet!.start(name)));

  step("applying examples/isolationprofile.yaml, examples/syncpolicy.yaml and two TenantClusters");
  for (const file of ["isolationprofile.yaml", "syncpolicy.yaml"])
    for (const obj of readYaml(examples(file))) await apply(obj);
  for (const tenant of tenants) await apply(tenant.manifest);

  // The harness as cloud load balancer and as k3s, once their inputs exist.
  await Promise.all(
    tenants.map(async (tenant) => {
      await setLoadBalancerIngress(kc, `tp-${tenant.name}`, "k3s", tenant.address);
      standIns.push(await startTenantStandIn(kc, tenant.name, tenant.address, { toolsDir }));
    }),
  );
  for (const tenant of tenants) {
    await waitFor(async () => (await phaseOf(objects, tenant.name)) === "Ready", {
      timeoutMs: 180_000,
      intervalMs: 500,
      description: `TenantCluster ${tenant.name} phase Ready`,
    });
    step(`TenantCluster ${tenant.name} is Ready`);
  }

  const first = tenants[0]!;
  const tenantKubeconfig = await writeTenantKubeconfig(core, first.name);
  step(`applying examples/tenant/workloads.yaml inside tenant ${first.name}`);
  const tenantKc = new KubeConfig();
  tenantKc.loadFromFile(tenantKubeconfig);
  await applyWorkloads(tenantKc);
  const synced = names.includes("sync-worker") ? await waitForSyncedObjects(core, first.name) : 0;
  if (synced > 0) step(`${synced} tenant objects synced into tp-${first.name}`);

  const kubectl = (...args: string[]) => {
    const result = spawnSync(toolPath("cluster", toolsDir), [
      "kubectl",
      `--kubeconfig=${host!.kubeconfigPath}`,
      ...args,
    ]);
    return result.stdout.toString() + result.stderr.toString();
  };
  const hostKubeconfig = join(workDir, "host.kubeconfig");
  writeFileSync(hostKubeconfig, readFileSync(host.kubeconfigPath));

  print("$ kubectl get tenantclusters", kubectl("get", "tenantclusters"));
  print(
    `$ kubectl get events -A --sort-by=.metadata.creationTimestamp --field-selector involvedObject.kind=TenantCluster,involvedObject.name=${first.name}`,
    kubectl(
      "get",
      "events",
      "-A",
      "--sort-by=.metadata.creationTimestamp",
      "--field-selector",
      `involvedObject.kind=TenantCluster,involvedObject.name=${first.name}`,
      "-o",
      "custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message",
    ),
  );
  print(
    `$ kubectl get configmaps,secrets,services,pods,networkpolicies,resourcequotas,limitranges -n tp-${first.name}`,
    kubectl(
      "get",
      "configmaps,secrets,services,pods,networkpolicies,resourcequotas,limitranges",
      "-n",
      `tp-${first.name}`,
    ),
  );
  print(
    `why each synced host object exists (its reverse mapping):`,
    kubectl(
      "get",
      "configmaps,services,pods,persistentvolumeclaims",
      "-n",
      `tp-${first.name}`,
      "-l",
      "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/kind",
      "-o",
      "custom-columns=KIND:.kind,HOST NAME:.metadata.name,TENANT:.metadata.labels.tenantplane\\.io/tenant,VIRTUAL NAMESPACE:.metadata.annotations.tenantplane\\.io/virtual-namespace,VIRTUAL NAME:.metadata.annotations.tenantplane\\.io/virtual-name",
    ),
  );
  const copies = await core.listNamespacedConfigMap({
    namespace: `tp-${first.name}`,
    labelSelector: "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/kind",
  });
  const example = copies.items[0]?.metadata?.name;
  if (example !== undefined) {
    const explained = spawnSync(
      process.execPath,
      [
        join(repoRoot, "libs/cli/bin/tenantplane.js"),
        "explain",
        `configmap/${example}`,
        "-n",
        `tp-${first.name}`,
        "--kubeconfig",
        host.kubeconfigPath,
        "--nats-url",
        nats.url,
      ],
      { env: { ...process.env, NO_COLOR: "1" } },
    );
    print(
      `$ tenantplane explain configmap/${example} -n tp-${first.name}`,
      explained.stdout.toString() + explained.stderr.toString(),
    );
  }
  const cluster = toolPath("cluster", toolsDir);
  print(
    "try next",
    [
      `alias kubectl="${cluster} kubectl"`,
      `export KUBECONFIG=${hostKubeconfig}   # the host cluster`,
      `kubectl describe tenantcluster ${first.name}`,
      `kubectl --kubeconfig=${tenantKubeconfig} get pods -A   # inside tenant ${first.name}`,
      `npx tenantplane explain-sync --tenant ${first.name} -f examples/tenant/workloads.yaml --kubeconfig ${hostKubeconfig}`,
      `npx tenantplane decisions --tenant ${first.name} --nats-url ${nats.url} --follow`,
      `NATS: ${nats.url} (stream DECISIONS, subjects tenantplane.decisions.>)`,
      "",
    ].join("\n"),
  );
  step(once ? "done (--once)" : "demo ready");
}

function servicesToRun(): ServiceName[] {
  const all = ["watcher", "provisioner", "isolation", "recorder", "sync-worker"];
  return all.filter((name) =>
    existsSync(join(repoRoot, "services", name, "dist", "bundle", "main.js")),
  ) as ServiceName[];
}

async function phaseOf(objects: KubernetesObjectApi, name: string): Promise<string | undefined> {
  const tc = (await objects.read({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name },
  })) as KubernetesObject & { status?: { phase?: string } };
  return tc.status?.phase;
}

async function writeTenantKubeconfig(core: CoreV1Api, tenant: string): Promise<string> {
  const secret: V1Secret = await core.readNamespacedSecret({ name: `${tenant}-kubeconfig`, namespace: `tp-${tenant}` });
  const path = join(workDir, `${tenant}.kubeconfig`);
  writeFileSync(path, Buffer.from(secret.data?.kubeconfig ?? "", "base64"), { mode: 0o600 });
  return path;
}

async function applyWorkloads(tenantKc: KubeConfig): Promise<void> {
  const objects = KubernetesObjectApi.makeApiClient(tenantKc);
  const docs = readYaml(examples("tenant/workloads.yaml"));
  const namespaces = new Set(docs.map((d) => d.metadata?.namespace).filter((ns): ns is string => !!ns));
  for (const ns of namespaces) {
    if (ns === "kube-system" || ns === "default") continue;
    await objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    // k3s's service-account controller creates this; the stand-in API server runs no controllers.
    await objects.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: ns } });
  }
  for (const doc of docs) {
    await objects.patch(doc, undefined, undefined, "tenantplane-demo", true, PatchStrategy.ServerSideApply);
  }
}

async function waitForSyncedObjects(core: CoreV1Api, tenant: string): Promise<number> {
  return waitFor(
    async () => {
      const list = await core.listNamespacedConfigMap({
        namespace: `tp-${tenant}`,
        labelSelector: "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/kind",
      });
      return list.items.length > 0 ? list.items.length : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500, description: `synced objects in tp-${tenant}` },
  );
}

function print(title: string, body: string): void {
  process.stdout.write(`\n${title}\n${body.trimEnd()}\n`);
}

// On failure, what each tenant's conditions said: the first place a user would look.
async function printTenantStatus(): Promise<void> {
  if (!host) return;
  const objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  for (const tenant of tenants) {
    const tc = (await objects
      .read({ apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name: tenant.name } })
      .catch(() => undefined)) as (KubernetesObject & { status?: unknown }) | undefined;
    console.error(`demo: TenantCluster ${tenant.name} status: ${JSON.stringify(tc?.status ?? "absent")}`);
  }
}
