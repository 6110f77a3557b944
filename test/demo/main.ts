// `npm run demo`: the real thing on this machine. Starts a host cluster from the test
// stack's binaries (etcd, kube-apiserver, controller-manager, scheduler, kwok nodes), a
// pinned nats-server, installs the CRDs, runs every tenantplane service as a local process,
// sets a node aside for tenant Pods as the example IsolationProfile asks, applies the bundled
// examples (two TenantClusters, then the example workloads inside each tenant) and waits
// until every example Pod runs inside its tenant and each tenant is Synced. The harness plays
// the two parts a laptop lacks: the cloud load balancer (it writes an address into the API
// Service's status) and k3s (a kube-apiserver and kube-controller-manager started from the
// tenant's PKI Secret).
//
//   npm run demo              stays up until Ctrl-C, then stops everything it started
//   npm run demo -- --once    runs the same, prints the tour and exits (CI runs this); exits 1
//                             when a tenant is not Ready, an example Pod does not run or a
//                             tenant is not Synced within the time bounds below
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  StorageV1Api,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { hostName } from "@tenantplane/mapping";
import YAML from "yaml";
import {
  ServiceFleet,
  buildTools,
  installCrds,
  runTenantplane,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  syncedState,
  tenantKubeconfig,
  testProvisionerName,
  toolPath,
  waitFor,
  type HostCluster,
  type NatsServer,
  type RunningService,
  type ServiceName,
  type TenantApiServer,
} from "../harness/index.js";
import { expectedPods, judgePods, type WorkloadManifest } from "./example-pods.js";
import { tenantNodeCommands, type WorkloadPlacement } from "./tenant-nodes.js";
import { applyInTenant, tenantPods } from "./tenant-workloads.js";

const once = process.argv.includes("--once");
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const examples = (file: string) => join(repoRoot, "examples", file);
const started = performance.now();

/** How long a tenant may take to become Ready, and then its example Pods to run and it to be Synced. */
const READY_TIMEOUT_MS = 180_000;
const WORKLOADS_TIMEOUT_MS = 300_000;

/** A tenant of the demo and the loopback address the harness gives its load balancer. */
interface DemoTenant {
  name: string;
  address: string;
  manifest: KubernetesObject;
  /** Set once the tenant is Ready. */
  kubeconfigPath?: string;
  kubeConfig?: KubeConfig;
  api?: TenantApiServer;
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
/** The host has two nodes: the first for everything, the second set aside for tenant Pods. */
const TENANT_NODE = "kwok-node-1";

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
let stopping: Promise<void> | undefined;
let toolsDir: string | undefined;

async function stopAll(keepLogs = false): Promise<void> {
  stopping ??= (async () => {
    step("stopping everything the demo started");
    await fleet?.stop({ keepLogs }).catch(report);
    for (const tenant of tenants) await tenant.api?.stop({ keepLogs }).catch(report);
    await nats?.stop({ keepLogs }).catch(report);
    await host?.stop({ keepLogs }).catch(report);
    rmSync(workDir, { recursive: true, force: true });
    step(keepLogs ? "stopped; the logs above are kept" : "stopped; no process or temporary directory left behind");
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
  toolsDir = await buildTools();
  step(
    "starting the host cluster (etcd, kube-apiserver, controller-manager, scheduler, two kwok nodes) and nats-server",
  );
  [host, nats] = await Promise.all([startHostCluster({ name: "demo", toolsDir, nodes: 2 }), startNats({ toolsDir })]);
  const kc = host.kubeConfig;
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const core = kc.makeApiClient(CoreV1Api);
  const apply = (obj: KubernetesObject) =>
    objects.patch(obj, undefined, undefined, "tenantplane-demo", true, PatchStrategy.ServerSideApply);

  setTenantNodeAside();

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
  const services = await Promise.all(names.map((name) => fleet!.start(name)));

  step("applying examples/isolationprofile.yaml, examples/syncpolicy.yaml and two TenantClusters");
  for (const file of ["isolationprofile.yaml", "syncpolicy.yaml"])
    for (const obj of readYaml(examples(file))) await apply(obj);
  for (const tenant of tenants) await apply(tenant.manifest);

  // The harness as cloud load balancer and as k3s, once their inputs exist.
  await Promise.all(
    tenants.map(async (tenant) => {
      await setLoadBalancerIngress(kc, `tp-${tenant.name}`, "k3s", tenant.address);
      tenant.api = await startTenantStandIn(kc, tenant.name, tenant.address, { toolsDir });
    }),
  );
  for (const tenant of tenants) {
    await waitFor(async () => (await phaseOf(objects, tenant.name)) === "Ready", {
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 500,
      description: `TenantCluster ${tenant.name} phase Ready`,
    });
    step(`TenantCluster ${tenant.name} is Ready`);
    tenant.kubeconfigPath = join(workDir, `${tenant.name}.kubeconfig`);
    writeFileSync(tenant.kubeconfigPath, await tenantKubeconfig(kc, tenant.name), { mode: 0o600 });
    tenant.kubeConfig = new KubeConfig();
    tenant.kubeConfig.loadFromFile(tenant.kubeconfigPath);
  }

  const workloads = readYaml(examples("tenant/workloads.yaml"));
  const expected = expectedPods(workloads as WorkloadManifest[]);
  for (const tenant of tenants) {
    step(`applying examples/tenant/workloads.yaml inside tenant ${tenant.name} (its own API, its admin kubeconfig)`);
    await applyInTenant(tenant.kubeConfig!, workloads);
  }
  step(
    `waiting (at most ${WORKLOADS_TIMEOUT_MS / 1000} s) until the ${expected.total} example Pods run inside each tenant ` +
      "(the Job's completes) and each tenant is Synced",
  );
  await Promise.all(tenants.map((tenant) => waitForWorkloads(tenant, expected)));

  await printTour(services);
  step(once ? "done (--once)" : "demo ready");
}

/** Labels and taints the tenant node as the example profile's placement asks, printing each command. */
function setTenantNodeAside(): void {
  const profile = readYaml(examples("isolationprofile.yaml"))[0] as KubernetesObject & {
    spec: { workloads?: WorkloadPlacement };
  };
  const placement = profile.spec.workloads ?? {};
  step(
    `setting ${TENANT_NODE} aside for tenant Pods, as an operator would: IsolationProfile ` +
      `${profile.metadata?.name} (examples/isolationprofile.yaml) runs tenant Pods only on nodes labelled ` +
      `${Object.entries(placement.nodeSelector ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(",")} and lets them tolerate the taint that keeps every other Pod off those nodes; ` +
      "without the label its Pods would stay Pending",
  );
  for (const args of tenantNodeCommands(TENANT_NODE, placement)) {
    const result = kubectl(host!.kubeconfigPath, args);
    print(`$ kubectl ${args.join(" ")}`, result.output);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${result.code}`);
  }
}

/**
 * Waits until every example Pod runs inside `tenant` (as its own API lists them) and its
 * TenantCluster is Synced=True, printing progress when it changes and one line per fact
 * that CI greps for. On timeout, prints what the tenant sees and throws.
 */
async function waitForWorkloads(tenant: DemoTenant, expected: ReturnType<typeof expectedPods>): Promise<void> {
  const deadline = Date.now() + WORKLOADS_TIMEOUT_MS;
  let last = "";
  let podsReported = false;
  for (;;) {
    const pods = await tenantPods(tenant.kubeConfig!, expected.namespaces).then(
      (list) => ({ list }),
      (err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }),
    );
    const judged = "list" in pods ? judgePods(expected.total, pods.list) : undefined;
    const synced = await syncedState(host!.kubeConfig, tenant.name).catch(() => undefined);
    const condition = synced?.condition;
    if (judged?.done && !podsReported) step(`tenant ${tenant.name}: ${judged.summary}`);
    podsReported = judged?.done === true;
    // Synced=True counts only once its counts cover every copy on the host: the condition is
    // written a moment after the worker's passes, so a True read early may predate the workloads.
    const copies = judged?.done && condition?.status === "True" ? await hostCopies(tenant.name) : undefined;
    if (
      copies !== undefined &&
      synced?.sync !== undefined &&
      synced.sync.failed === 0 &&
      synced.sync.inSync >= copies
    ) {
      step(`TenantCluster ${tenant.name} Synced=True (${condition!.message}; ${copies} copies on the host)`);
      return;
    }
    const now = [
      "error" in pods ? `cannot list its Pods: ${pods.error}` : judged!.summary,
      `Synced=${condition ? `${condition.status} ${condition.reason}: ${condition.message}` : "unset"}`,
      ...(copies === undefined ? [] : [`${copies} copies on the host`]),
    ].join("; ");
    if (now !== last) step(`tenant ${tenant.name}: ${now}`);
    last = now;
    if (Date.now() >= deadline) {
      printTenantPods(tenant);
      // What the tenant's own `kubectl describe` says about the first Pod that does not run.
      const [namespace, name] = judged?.notRunning[0]?.split("/") ?? [];
      if (namespace !== undefined && name !== undefined) {
        const args = ["describe", "pod", name, "-n", namespace];
        print(
          `$ kubectl --kubeconfig=${tenant.kubeconfigPath} ${args.join(" ")}`,
          kubectl(tenant.kubeconfigPath!, args).output,
        );
      }
      throw new Error(
        `tenant ${tenant.name}: not every example Pod runs or it is not Synced after ${WORKLOADS_TIMEOUT_MS / 1000} s: ${now}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

async function printTour(services: RunningService[]): Promise<void> {
  const first = tenants[0]!;
  const hostKubeconfig = join(workDir, "host.kubeconfig");
  writeFileSync(hostKubeconfig, readFileSync(host!.kubeconfigPath));
  const hostKubectl = (...args: string[]) => kubectl(hostKubeconfig, args).output;

  print("$ kubectl get tenantclusters", hostKubectl("get", "tenantclusters"));
  printTenantPods(first);
  print(
    `$ kubectl --kubeconfig=${first.kubeconfigPath} describe pod web -n shop   # runs as ServiceAccount web, which the SyncPolicy keeps in the tenant`,
    kubectl(first.kubeconfigPath!, ["describe", "pod", "web", "-n", "shop"]).output,
  );
  print(
    `$ kubectl get pods,services,persistentvolumeclaims -n tp-${first.name} -o wide   # the same workloads as the host runs them`,
    hostKubectl("get", "pods,services,persistentvolumeclaims", "-n", `tp-${first.name}`, "-o", "wide"),
  );
  print(
    `why each synced host object exists (its reverse mapping):`,
    hostKubectl(
      "get",
      "pods,configmaps,secrets,services,persistentvolumeclaims",
      "-n",
      `tp-${first.name}`,
      "-l",
      "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/kind",
      "-o",
      "custom-columns=KIND:.kind,HOST NAME:.metadata.name,TENANT:.metadata.labels.tenantplane\\.io/tenant,VIRTUAL NAMESPACE:.metadata.annotations.tenantplane\\.io/virtual-namespace,VIRTUAL NAME:.metadata.annotations.tenantplane\\.io/virtual-name",
    ),
  );
  print(
    `$ kubectl get events -A --field-selector involvedObject.kind=TenantCluster,involvedObject.name=${first.name}`,
    hostKubectl(
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
  const webCopy = hostName({ tenant: first.name, namespace: "shop", name: "web" }).name;
  for (const target of [[`tc/${first.name}`], [`pod/${webCopy}`, "-n", `tp-${first.name}`]]) {
    const explained = await runTenantplane(
      ["explain", ...target, "--kubeconfig", hostKubeconfig, "--nats-url", nats!.url],
      { HOME: process.env.HOME, NO_COLOR: "1" },
    );
    print(`$ tenantplane explain ${target.join(" ")}`, explained.stdout + explained.stderr);
  }
  const cluster = toolPath("cluster", toolsDir);
  print(
    "logs (each service's own file; removed when the demo stops, kept when it fails)",
    [
      ...services.map((s) => `${s.name.replace(/-\d+$/, "").padEnd(28)} ${s.process.logPath}`),
      `${"host cluster".padEnd(28)} ${logFiles(host!.logsDir)}`,
      `${"nats-server".padEnd(28)} ${logFiles(nats!.logsDir)}`,
      ...tenants.map((t) => `${`tenant ${t.name} (k3s stand-in)`.padEnd(28)} ${logFiles(t.api!.logsDir)}`),
    ].join("\n"),
  );
  print(
    "try next (in another terminal, while the demo is up)",
    [
      `alias kubectl="${cluster} kubectl"   # or any kubectl`,
      `export KUBECONFIG=${hostKubeconfig}   # the host cluster`,
      `export NATS_URL=${nats!.url}   # the DECISIONS stream, subjects tenantplane.decisions.>`,
      `kubectl describe tenantcluster ${first.name}`,
      `kubectl --kubeconfig=${first.kubeconfigPath} get pods,pvc,jobs -A   # inside tenant ${first.name}`,
      `npx tenantplane explain-sync --tenant ${first.name} -f examples/tenant/workloads.yaml`,
      `npx tenantplane decisions --tenant ${first.name} --follow`,
      "",
    ].join("\n"),
  );
}

/** How many host objects in `tp-<tenant>` are sync copies (reverse-mapping labels), of every kind a policy may sync. */
async function hostCopies(tenant: string): Promise<number> {
  const core = host!.kubeConfig.makeApiClient(CoreV1Api);
  const query = {
    namespace: `tp-${tenant}`,
    labelSelector: "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/kind",
  };
  const lists = await Promise.all([
    core.listNamespacedPod(query),
    core.listNamespacedConfigMap(query),
    core.listNamespacedSecret(query),
    core.listNamespacedService(query),
    core.listNamespacedPersistentVolumeClaim(query),
    core.listNamespacedServiceAccount(query),
  ]);
  return lists.reduce((sum, list) => sum + list.items.length, 0);
}

/** `kubectl get pods -A -o wide` as the tenant sees its Pods, through its admin kubeconfig. */
function printTenantPods(tenant: DemoTenant): void {
  if (tenant.kubeconfigPath === undefined) return;
  print(
    `$ kubectl --kubeconfig=${tenant.kubeconfigPath} get pods -A -o wide   # inside tenant ${tenant.name}`,
    kubectl(tenant.kubeconfigPath, ["get", "pods", "-A", "-o", "wide"]).output,
  );
}

/** Runs the test stack's own kubectl (built with the cluster binary, so a fresh machine has it). */
function kubectl(kubeconfigPath: string, args: string[]): { code: number | null; output: string } {
  const result = spawnSync(toolPath("cluster", toolsDir), ["kubectl", `--kubeconfig=${kubeconfigPath}`, ...args], {
    encoding: "utf8",
  });
  return { code: result.status, output: `${result.stdout ?? ""}${result.stderr ?? ""}` };
}

function logFiles(dir: string): string {
  const logs = readdirSync(dir).filter((f) => f.endsWith(".log"));
  return `${dir}/ (${logs.join(", ")})`;
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
