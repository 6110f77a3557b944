import { join } from "node:path";
import type { StopOptions } from "./artifacts.js";
import { startEtcd } from "./etcd.js";
import { httpsGet } from "./https.js";
import { startKubeApiServer } from "./kube-apiserver.js";
import { canConnect } from "./ports.js";
import { signLeaf, type KeyPairPem } from "./pki.js";
import type { ManagedProcess } from "./process.js";
import { startTenantControllerManager } from "./tenant-controller-manager.js";
import { startStack } from "./teardown.js";
import { toolPath } from "./tools.js";
import { waitFor } from "./wait-for.js";

/** Options for {@link startTenantApiServer}: the CAs a tenant's k3s would find on its data volume. */
export interface TenantApiServerOptions {
  /** Loopback address to listen on (any of 127.0.0.0/8), port 6443. */
  address: string;
  /** CA that signs the serving certificate (k3s `server-ca`). */
  serverCa: KeyPairPem;
  /**
   * CA whose client certificates are trusted (k3s `client-ca`), with its key: the stand-in
   * signs its controller manager's certificate with it, as k3s does.
   */
  clientCa?: KeyPairPem;
  /**
   * The client CA's certificate alone, for a caller that keeps the key to itself; the stand-in
   * then runs no controller manager. Ignored when `clientCa` is given.
   */
  clientCaPem?: string;
  /** Front-proxy CA (k3s `request-header-ca`); when given, request-header authentication is on. */
  requestHeaderCa?: KeyPairPem;
  /** Service-account signing key (k3s `service.key`), PEM. */
  serviceAccountKeyPem: string;
  /** Extra DNS names for the serving certificate (e.g. the in-cluster Service names). */
  dnsNames?: string[];
  /** Tools directory; defaults to the one the global setup provided. */
  toolsDir?: string;
  /** Writes the API server's audit log (see `readAudit`), so a bench can count requests by client. */
  auditLog?: boolean;
}

/** A running stand-in for a tenant's k3s API. */
export interface TenantApiServer {
  /** `https://<address>:6443`. */
  url: string;
  logsDir: string;
  /** The API server's audit log (JSON lines), when started with `auditLog`. */
  auditLogPath: string | undefined;
  /** The tenant's kube-controller-manager, unless only `clientCaPem` was given. */
  controllerManager: ManagedProcess | undefined;
  stop(options?: StopOptions): Promise<void>;
}

/**
 * Starts etcd plus kube-apiserver on `https://<address>:6443`, serving a certificate signed by
 * `serverCa` (SANs: the address and `dnsNames`) and trusting the client CA, as k3s does with
 * CA files placed in its data directory, and kube-controller-manager with the controllers
 * k3s runs for a tenant (see tenant-controller-manager.ts). Resolves once `/readyz` answers
 * and the controller manager has made the `default` ServiceAccount of namespace `default`.
 */
export async function startTenantApiServer(options: TenantApiServerOptions): Promise<TenantApiServer> {
  const clusterBinary = toolPath("cluster", options.toolsDir);
  const clientCaPem = options.clientCa?.certPem ?? options.clientCaPem;
  if (clientCaPem === undefined) {
    throw new Error("startTenantApiServer: set clientCa (the tenant's client CA with its key) or clientCaPem");
  }
  const port = 6443;
  if (await canConnect(options.address, port)) {
    throw new Error(`${options.address}:${port} is already in use; pick another 127.0.0.N address`);
  }
  return startStack(`tenant-${options.address}`, async (teardown) => {
    const serving = await signLeaf(options.serverCa, {
      commonName: "k3s",
      usage: "server",
      dnsNames: [
        "localhost",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        ...(options.dnsNames ?? []),
      ],
      ipAddresses: [options.address, "10.43.0.1"],
    });
    const etcd = await startEtcd(clusterBinary, teardown.dir, teardown.dir);
    teardown.add(etcd.process);
    const requestHeader =
      options.requestHeaderCa === undefined
        ? undefined
        : {
            caPem: options.requestHeaderCa.certPem,
            proxyClient: await signLeaf(options.requestHeaderCa, { commonName: "front-proxy-client", usage: "client" }),
          };
    const auditLogPath = options.auditLog ? join(teardown.dir, "audit.log") : undefined;
    const apiServer = await startKubeApiServer({
      clusterBinary,
      dir: teardown.dir,
      logsDir: teardown.dir,
      etcdUrl: etcd.url,
      address: options.address,
      port,
      servingCaPem: options.serverCa.certPem,
      serving,
      clientCaPem,
      // Only the caller may hold the client CA's key, so readiness is probed anonymously
      // (RBAC's system:public-info-viewer allows /readyz).
      serviceAccountKeyPem: options.serviceAccountKeyPem,
      serviceClusterIpRange,
      authorizationModes: ["Node", "RBAC"],
      // k3s turns it on (pkg/daemons/control/server.go): a Private tenant's join token is a
      // bootstrap token Secret, and the tenant's controller manager runs tokencleaner for it.
      bootstrapTokenAuth: true,
      ...(requestHeader === undefined ? {} : { requestHeader }),
      ...(auditLogPath === undefined ? {} : { auditLogPath }),
    });
    teardown.add(apiServer.process);
    const controllerManager =
      options.clientCa === undefined
        ? undefined
        : teardown.add(
            await startControllerManager(clusterBinary, teardown.dir, apiServer.url, {
              ...options,
              clientCa: options.clientCa,
            }),
          );
    return {
      url: apiServer.url,
      logsDir: teardown.dir,
      auditLogPath,
      controllerManager,
      stop: (stopOptions?: StopOptions) => teardown.stop(stopOptions),
    };
  });
}

const serviceClusterIpRange = "10.43.0.0/16";

/**
 * Starts the tenant's controller manager and waits until it has made ServiceAccount
 * `default/default`: the sign that it runs and is authorised, and what a suite's first
 * Pod in `default` needs.
 */
async function startControllerManager(
  clusterBinary: string,
  dir: string,
  url: string,
  options: TenantApiServerOptions & { clientCa: KeyPairPem },
): Promise<ManagedProcess> {
  const controllerManager = await startTenantControllerManager({
    clusterBinary,
    dir,
    logsDir: dir,
    apiServerUrl: url,
    serverCa: options.serverCa,
    clientCa: options.clientCa,
    serviceAccountKeyPem: options.serviceAccountKeyPem,
    serviceClusterIpRange,
  });
  try {
    const probe = await signLeaf(options.clientCa, {
      commonName: "tenantplane-harness",
      organizations: ["system:masters"],
      usage: "client",
    });
    await waitFor(
      async () => {
        controllerManager.assertRunning();
        const res = await httpsGet(`${url}/api/v1/namespaces/default/serviceaccounts/default`, {
          caPem: options.serverCa.certPem,
          ...probe,
        });
        return res.status === 200;
      },
      {
        description: `the tenant controller manager to create ServiceAccount default/default at ${url}`,
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );
  } catch (error) {
    await controllerManager.stop();
    throw error;
  }
  return controllerManager;
}
