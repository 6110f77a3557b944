import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { StopOptions } from "./artifacts.js";
import { startEtcd } from "./etcd.js";
import { startKubeApiServer } from "./kube-apiserver.js";
import { kubeConfigFrom, kubeconfigYaml } from "./kubeconfig.js";
import { createKwokNode, startKwok } from "./kwok.js";
import { generateCa, generatePrivateKeyPem, signLeaf, type KeyPairPem } from "./pki.js";
import { stablePort } from "./ports.js";
import { startProcess, type ManagedProcess } from "./process.js";
import { startStack } from "./teardown.js";
import { toolPath } from "./tools.js";
import { createDefaultStorageClass, startVolumeProvisioner } from "./volume-provisioner.js";
import { waitFor } from "./wait-for.js";

/** Options for {@link startHostCluster}. */
export interface HostClusterOptions {
  /** Tools directory; defaults to the one the global setup provided. */
  toolsDir?: string;
  /** Label for the artifact directory; defaults to "host". */
  name?: string;
  /** How many kwok nodes to register (`kwok-node-0` …); defaults to 1. */
  nodes?: number;
  /** Writes the API server's audit log to `auditLogPath`, so tests can count requests by user agent. */
  auditLog?: boolean;
  /**
   * kube-controller-manager's `--controllers` (default `["*"]`): `["*", "-resourcequota"]` is a
   * host whose quota controller does not run (until `startControllerManager` starts it).
   */
  controllers?: string[];
}

/** A running host cluster: etcd, kube-apiserver, controller manager, scheduler, kwok and a volume provisioner. */
export interface HostCluster {
  /** Admin kubeconfig file (client certificate in `system:masters`). */
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  /** API server URL, e.g. `https://127.0.0.1:41234`. */
  server: string;
  /** CA that signed the serving certificate and every client certificate. */
  caPem: string;
  /** The harness CA with its key, for tests that need to sign more client certificates. */
  ca: KeyPairPem;
  /** Names of the kwok nodes. */
  nodeNames: string[];
  /** Directory holding each process's log (and the etcd data). */
  logsDir: string;
  /** The API server's audit log (JSON lines), when started with `auditLog`; see `readAudit`. */
  auditLogPath?: string;
  /**
   * Starts one more kube-controller-manager running only `controllers` (for a controller the
   * cluster was started without); it stops with the cluster.
   */
  startControllerManager(controllers: string[]): ManagedProcess;
  /** Stops every process (process groups, reverse start order) and removes `logsDir` unless kept. */
  stop(options?: StopOptions): Promise<void>;
}

const serviceClusterIpRange = "10.96.0.0/16";
const admissionPlugins = [
  "NamespaceLifecycle",
  "LimitRanger",
  "ServiceAccount",
  "PodSecurity",
  "ResourceQuota",
  "DefaultStorageClass",
  "DefaultTolerationSeconds",
  "MutatingAdmissionWebhook",
  "ValidatingAdmissionWebhook",
  "ValidatingAdmissionPolicy",
];

/**
 * Starts a complete host cluster on loopback with free ports and returns once the API server
 * is ready, the kwok nodes are Ready and schedulable, and the `default` ServiceAccount exists.
 * On a start failure everything started so far is stopped and the logs are kept.
 */
export async function startHostCluster(options: HostClusterOptions = {}): Promise<HostCluster> {
  const clusterBinary = toolPath("cluster", options.toolsDir);
  const kwokBinary = toolPath("kwok", options.toolsDir);
  return startStack(options.name ?? "host", async (teardown) => {
    const dir = teardown.dir;
    const pki = join(dir, "pki");
    mkdirSync(pki, { recursive: true });
    const ca = await generateCa("tenantplane-test-ca");
    const port = await stablePort();
    const serving = await signLeaf(ca, {
      commonName: "kube-apiserver",
      usage: "server",
      dnsNames: [
        "localhost",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
      ],
      ipAddresses: ["127.0.0.1", "10.96.0.1"],
    });
    const admin = await signLeaf(ca, {
      commonName: "tenantplane-admin",
      organizations: ["system:masters"],
      usage: "client",
    });
    const serviceAccountKeyPem = await generatePrivateKeyPem();
    const auditLogPath = options.auditLog ? join(dir, "audit.log") : undefined;

    const etcd = await startEtcd(clusterBinary, dir, dir);
    teardown.add(etcd.process);
    const apiServer = await startKubeApiServer({
      clusterBinary,
      dir,
      logsDir: dir,
      etcdUrl: etcd.url,
      address: "127.0.0.1",
      port,
      servingCaPem: ca.certPem,
      serving,
      clientCaPem: ca.certPem,
      probeClient: admin,
      serviceAccountKeyPem,
      serviceClusterIpRange,
      authorizationModes: ["Node", "RBAC"],
      admissionPlugins,
      ...(auditLogPath ? { auditLogPath } : {}),
    });
    teardown.add(apiServer.process);

    const kubeconfig = {
      server: apiServer.url,
      caPem: ca.certPem,
      certPem: admin.certPem,
      keyPem: admin.keyPem,
      name: "host",
    };
    const kubeconfigPath = join(dir, "kubeconfig");
    writeFileSync(kubeconfigPath, kubeconfigYaml(kubeconfig), { mode: 0o600 });
    const kubeConfig = kubeConfigFrom(kubeconfig);
    writeFileSync(join(pki, "ca.crt"), ca.certPem);
    writeFileSync(join(pki, "ca.key"), ca.keyPem, { mode: 0o600 });

    const startControllerManager = (controllers: string[], log: string) =>
      teardown.add(
        startProcess({
          name: log,
          command: clusterBinary,
          args: [
            "kube-controller-manager",
            `--kubeconfig=${kubeconfigPath}`,
            "--leader-elect=false",
            "--secure-port=0",
            `--root-ca-file=${join(pki, "ca.crt")}`,
            `--service-account-private-key-file=${join(pki, "sa.key")}`,
            `--cluster-signing-cert-file=${join(pki, "ca.crt")}`,
            `--cluster-signing-key-file=${join(pki, "ca.key")}`,
            `--service-cluster-ip-range=${serviceClusterIpRange}`,
            `--controllers=${controllers.join(",")}`,
            // The quota controller counts from informer caches that can trail admission: a PVC
            // update (binding) asks it to recount, and a Pod admitted (and counted by admission) a
            // moment before that recount but not yet in its Pod cache is counted out again, until
            // the full resync (five minutes by default) counts it back. Seen as used pods 1 with
            // k3s and the DNS pod both Running. The same safety net as below, sooner.
            "--resource-quota-sync-period=20s",
            // Otherwise the controller manager creates /usr/libexec/kubernetes/... on the machine.
            `--flex-volume-plugin-dir=${join(dir, "flexvolume")}`,
          ],
          logPath: join(dir, `${log}.log`),
        }),
      );
    const controllerManager = startControllerManager(options.controllers ?? ["*"], "kube-controller-manager");
    const scheduler = teardown.add(
      startProcess({
        name: "kube-scheduler",
        command: clusterBinary,
        args: [
          "kube-scheduler",
          `--kubeconfig=${kubeconfigPath}`,
          "--leader-elect=false",
          "--secure-port=0",
          // A pod parked as unschedulable (e.g. its claim was not bound yet) is retried when a
          // cluster event says it may fit; should that event be missed, it is retried after this
          // instead of the default five minutes, longer than any wait in the suites.
          "--pod-max-in-unschedulable-pods-duration=20s",
        ],
        logPath: join(dir, "kube-scheduler.log"),
      }),
    );
    const kwok = teardown.add(startKwok(kwokBinary, kubeconfigPath, dir, dir));

    await createDefaultStorageClass(kubeConfig);
    teardown.add(startVolumeProvisioner(kubeConfig, join(dir, "volumes")));
    const nodeNames = Array.from({ length: options.nodes ?? 1 }, (_, i) => `kwok-node-${i}`);
    for (const name of nodeNames) await createKwokNode(kubeConfig, name, kwok);

    const core = kubeConfig.makeApiClient(CoreV1Api);
    await waitFor(
      async () => {
        for (const proc of [etcd.process, apiServer.process, controllerManager, scheduler, kwok]) proc.assertRunning();
        await core.readNamespacedServiceAccount({ namespace: "default", name: "default" });
        return true;
      },
      { description: "the controller manager to create ServiceAccount default/default", timeoutMs: 60_000 },
    );

    return {
      kubeconfigPath,
      kubeConfig,
      server: apiServer.url,
      caPem: ca.certPem,
      ca,
      nodeNames,
      logsDir: dir,
      ...(auditLogPath ? { auditLogPath } : {}),
      startControllerManager: (controllers) =>
        startControllerManager(controllers, `kube-controller-manager-${controllers.join("-")}`),
      stop: (stopOptions?: StopOptions) => teardown.stop(stopOptions),
    };
  });
}
