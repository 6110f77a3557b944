import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, type KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { kubeconfigYaml } from "./kubeconfig.js";
import { signLeaf, type KeyPairPem } from "./pki.js";
import { startProcess, type ManagedProcess } from "./process.js";
import type { TenantApiServer } from "./tenant-api-server.js";
import { startTenantControllerManager } from "./tenant-controller-manager.js";
import { TENANT_CONTROLLERS } from "@tenantplane/provisioner/desired-objects";
import { toolPath } from "./tools.js";
import { StopWaiting, waitFor } from "./wait-for.js";

/** The k3s flag that keeps a tenant's scheduler off: present for every mode but Private. */
export const DISABLE_SCHEDULER_FLAG = "--disable-scheduler";

/** The k3s argument that sets the controller manager's controllers. */
const CONTROLLERS_ARG = "--kube-controller-manager-arg=controllers=";
/** kube-controller-manager's controllers when k3s is given none: k3s's own default. */
const K3S_DEFAULT_CONTROLLERS = ["*", "tokencleaner"];
/** The stand-in's service range (k3s's default), as tenant-api-server.ts starts it. */
const SERVICE_CLUSTER_IP_RANGE = "10.43.0.0/16";

/** The k3s control plane's Pod and container (StatefulSet `k3s`, one replica, in `tp-<tenant>`). */
const K3S_POD = "k3s-0";
const K3S_CONTAINER = "k3s";

/**
 * A tenant's kube-scheduler that runs exactly while the k3s Pod running for the tenant lacks
 * {@link DISABLE_SCHEDULER_FLAG}, as k3s itself starts or leaves out its scheduler when its
 * StatefulSet rolls to new arguments; the tenant's controller manager likewise runs the
 * controllers that Pod names.
 */
export interface TenantSchedulerFollower {
  /** Whether the tenant's kube-scheduler runs now. */
  running(): boolean;
  /** How many times the scheduler was started, and stopped because the flag came back. */
  readonly starts: number;
  readonly stops: number;
  /**
   * The controllers the tenant's kube-controller-manager runs now: the stand-in's own at first,
   * then what the running k3s Pod's `--kube-controller-manager-arg=controllers=` says.
   */
  controllers(): readonly string[];
  /** How many times the controller manager was restarted for a new controller set. */
  readonly controllerManagerRestarts: number;
  /** The scheduler's log (appended to across restarts). */
  readonly logPath: string;
  /** What the follower last saw of the k3s Pod, for messages. */
  lastSeen(): string;
  /**
   * Waits until the scheduler runs (`true`) or does not (`false`); fails at once when the
   * scheduler exited on its own, quoting its log.
   */
  waitUntil(running: boolean, timeoutMs?: number): Promise<void>;
  /** Stops following and stops the scheduler. */
  stop(): Promise<void>;
}

/** Options for {@link followTenantScheduler}. */
export interface TenantSchedulerOptions {
  toolsDir?: string;
  /** How often the k3s Pod is read; defaults to 250 ms. */
  intervalMs?: number;
}

/**
 * Follows the host's k3s Pod of `tenant` (the one its StatefulSet `tp-<tenant>/k3s` rolled to:
 * `k3s-0`, not terminating, Running) and runs a real kube-scheduler against the tenant's
 * stand-in while that Pod's `k3s` container has no {@link DISABLE_SCHEDULER_FLAG}, with k3s's
 * identity for it: a `system:kube-scheduler` client certificate signed by the tenant's client
 * CA (from the provisioner's `<tenant>-pki` Secret), the server CA to verify the API. No leader
 * election and no serving port, so several stand-ins share a machine. When the Pod's controller
 * set (`--kube-controller-manager-arg=controllers=`, k3s's `*,tokencleaner` without it) differs
 * from the one the tenant's kube-controller-manager runs, that one is stopped and another is
 * started with the Pod's set, as k3s restarts it on a roll. While no k3s Pod runs
 * (mid-roll) the scheduler is left as it is: the stand-in's API keeps running through a roll,
 * where k3s would restart; its etcd is never restarted.
 */
export async function followTenantScheduler(
  kc: KubeConfig,
  tenant: string,
  standIn: TenantApiServer,
  options: TenantSchedulerOptions = {},
): Promise<TenantSchedulerFollower> {
  const clusterBinary = toolPath("cluster", options.toolsDir);
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = `tp-${tenant}`;
  const pki = await core.readNamespacedSecret({ name: `${tenant}-pki`, namespace });
  const file = (key: string) => Buffer.from(pki.data?.[key] ?? "", "base64").toString("utf8");
  const serverCaPem = file("server-ca.crt");
  const clientCa: KeyPairPem = { certPem: file("client-ca.crt"), keyPem: file("client-ca.key") };
  const serverCa: KeyPairPem = { certPem: serverCaPem, keyPem: file("server-ca.key") };
  const serviceAccountKeyPem = file("service.key");
  if (!serverCaPem || !serverCa.keyPem || !clientCa.certPem || !clientCa.keyPem || !serviceAccountKeyPem) {
    throw new Error(
      `Secret ${namespace}/${tenant}-pki lacks one of server-ca.crt, server-ca.key, client-ca.crt, client-ca.key, service.key`,
    );
  }
  const dir = join(standIn.logsDir, "scheduler");
  mkdirSync(dir, { recursive: true });
  // The identity k3s gives its scheduler: RBAC's bootstrap policy binds system:kube-scheduler
  // (and system:volume-scheduler) to this user.
  const client = await signLeaf(clientCa, { commonName: "system:kube-scheduler", usage: "client" });
  const kubeconfigPath = join(dir, "kubeconfig");
  writeFileSync(
    kubeconfigPath,
    kubeconfigYaml({ server: standIn.url, caPem: serverCaPem, ...client, name: "tenant" }),
    { mode: 0o600 },
  );
  const logPath = join(standIn.logsDir, "kube-scheduler.log");
  const followerLog = join(standIn.logsDir, "scheduler-follower.log");
  const note = (line: string) => appendFileSync(followerLog, `${new Date().toISOString()} ${line}\n`);

  let scheduler: ManagedProcess | undefined;
  let starts = 0;
  let stops = 0;
  let seen = "nothing read yet";
  let crashed: string | undefined;
  let following = true;
  let controllers: readonly string[] = TENANT_CONTROLLERS;
  let controllerManager: ManagedProcess | undefined = standIn.controllerManager;
  let controllerManagerRestarts = 0;

  const restartControllerManager = async (wanted: readonly string[]) => {
    note(
      `k3s Pod runs controllers ${wanted.join(",")} (was ${controllers.join(",")}): restarting kube-controller-manager`,
    );
    await controllerManager?.stop();
    controllerManagerRestarts++;
    controllers = wanted;
    controllerManager = await startTenantControllerManager({
      clusterBinary,
      dir: join(dir, `controller-manager-${controllerManagerRestarts}`),
      logsDir: standIn.logsDir,
      apiServerUrl: standIn.url,
      serverCa,
      clientCa,
      serviceAccountKeyPem,
      serviceClusterIpRange: SERVICE_CLUSTER_IP_RANGE,
      controllers: wanted,
    });
  };

  const start = () => {
    starts++;
    note(`k3s Pod runs without ${DISABLE_SCHEDULER_FLAG}: starting kube-scheduler (start ${starts})`);
    scheduler = startProcess({
      name: `kube-scheduler ${standIn.url}`,
      command: clusterBinary,
      args: [
        "kube-scheduler",
        `--kubeconfig=${kubeconfigPath}`,
        "--leader-elect=false",
        "--secure-port=0",
        "--profiling=false",
      ],
      logPath,
    });
  };
  const stopScheduler = async (why: string) => {
    const running = scheduler;
    scheduler = undefined;
    if (running === undefined) return;
    stops++;
    note(`${why}: stopping kube-scheduler`);
    await running.stop();
  };

  const step = async () => {
    let pod: V1Pod | undefined;
    try {
      pod = await core.readNamespacedPod({ name: K3S_POD, namespace });
    } catch (error) {
      const code = (error as { code?: number }).code;
      seen = code === 404 ? `no Pod ${namespace}/${K3S_POD}` : `reading Pod ${namespace}/${K3S_POD}: ${String(error)}`;
      return;
    }
    const args = pod.spec?.containers.find((c) => c.name === K3S_CONTAINER)?.args ?? [];
    const wantScheduler = !args.includes(DISABLE_SCHEDULER_FLAG);
    const controllersArg = args.find((a) => a.startsWith(CONTROLLERS_ARG));
    const wantControllers =
      controllersArg === undefined ? K3S_DEFAULT_CONTROLLERS : controllersArg.slice(CONTROLLERS_ARG.length).split(",");
    const phase = pod.status?.phase ?? "no phase";
    const terminating = pod.metadata?.deletionTimestamp !== undefined;
    seen = `Pod ${namespace}/${K3S_POD} uid ${pod.metadata?.uid ?? "?"} ${terminating ? "terminating" : phase}, ${
      wantScheduler ? "without" : "with"
    } ${DISABLE_SCHEDULER_FLAG}`;
    if (terminating || phase !== "Running") return;
    if (wantControllers.join(",") !== controllers.join(",")) await restartControllerManager(wantControllers);
    if (scheduler !== undefined && !scheduler.running()) {
      crashed = `kube-scheduler exited on its own; log ${logPath}`;
      note(crashed);
      scheduler = undefined;
    }
    if (wantScheduler && scheduler === undefined && crashed === undefined) start();
    if (!wantScheduler && scheduler !== undefined) await stopScheduler(`k3s Pod runs with ${DISABLE_SCHEDULER_FLAG}`);
  };

  const intervalMs = options.intervalMs ?? 250;
  const loop = (async () => {
    while (following) {
      await step().catch((error: unknown) => note(`follower step failed: ${String(error)}`));
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();

  return {
    running: () => scheduler?.running() ?? false,
    controllers: () => controllers,
    get controllerManagerRestarts() {
      return controllerManagerRestarts;
    },
    get starts() {
      return starts;
    },
    get stops() {
      return stops;
    },
    logPath,
    lastSeen: () => seen,
    async waitUntil(running: boolean, timeoutMs = 120_000) {
      await waitFor(
        () => {
          if (crashed !== undefined) throw new StopWaiting(crashed);
          return (scheduler?.running() ?? false) === running || undefined;
        },
        {
          timeoutMs,
          intervalMs: 100,
          description: `the tenant scheduler of ${tenant} ${running ? "running" : "stopped"}`,
        },
      ).catch((error: unknown) => {
        throw new Error(`${String(error)} (last seen: ${seen}; follower log ${followerLog})`);
      });
    },
    async stop() {
      following = false;
      await loop;
      await stopScheduler("follower stopped");
      // The stand-in stops its own controller manager; one started here is stopped here.
      if (controllerManager !== standIn.controllerManager) await controllerManager?.stop();
    },
  };
}
