import type { StopOptions } from "./artifacts.js";
import { startEtcd } from "./etcd.js";
import { startKubeApiServer } from "./kube-apiserver.js";
import { canConnect } from "./ports.js";
import { signLeaf, type KeyPairPem } from "./pki.js";
import { startStack } from "./teardown.js";
import { toolPath } from "./tools.js";

/** Options for {@link startTenantApiServer}: the CAs a tenant's k3s would find on its data volume. */
export interface TenantApiServerOptions {
  /** Loopback address to listen on (any of 127.0.0.0/8), port 6443. */
  address: string;
  /** CA that signs the serving certificate (k3s `server-ca`). */
  serverCa: KeyPairPem;
  /** CA whose client certificates are trusted (k3s `client-ca`). */
  clientCaPem: string;
  /** Front-proxy CA (k3s `request-header-ca`); when given, request-header authentication is on. */
  requestHeaderCa?: KeyPairPem;
  /** Service-account signing key (k3s `service.key`), PEM. */
  serviceAccountKeyPem: string;
  /** Extra DNS names for the serving certificate (e.g. the in-cluster Service names). */
  dnsNames?: string[];
  /** Tools directory; defaults to the one the global setup provided. */
  toolsDir?: string;
}

/** A running stand-in for a tenant's k3s API. */
export interface TenantApiServer {
  /** `https://<address>:6443`. */
  url: string;
  logsDir: string;
  stop(options?: StopOptions): Promise<void>;
}

/**
 * Starts etcd plus kube-apiserver on `https://<address>:6443`, serving a certificate signed by
 * `serverCa` (SANs: the address and `dnsNames`) and trusting `clientCaPem`, as k3s does with
 * CA files placed in its data directory. Resolves once `/readyz` answers.
 */
export async function startTenantApiServer(options: TenantApiServerOptions): Promise<TenantApiServer> {
  const clusterBinary = toolPath("cluster", options.toolsDir);
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
    const apiServer = await startKubeApiServer({
      clusterBinary,
      dir: teardown.dir,
      logsDir: teardown.dir,
      etcdUrl: etcd.url,
      address: options.address,
      port,
      servingCaPem: options.serverCa.certPem,
      serving,
      clientCaPem: options.clientCaPem,
      // Only the caller may hold the client CA's key, so readiness is probed anonymously
      // (RBAC's system:public-info-viewer allows /readyz).
      serviceAccountKeyPem: options.serviceAccountKeyPem,
      serviceClusterIpRange: "10.43.0.0/16",
      authorizationModes: ["Node", "RBAC"],
      ...(requestHeader === undefined ? {} : { requestHeader }),
    });
    teardown.add(apiServer.process);
    return {
      url: apiServer.url,
      logsDir: teardown.dir,
      stop: (stopOptions?: StopOptions) => teardown.stop(stopOptions),
    };
  });
}
