import { writeFileSync } from "node:fs";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import type { HostCluster } from "./host-cluster.js";

/**
 * A client for `cluster` authenticated with a fresh token of ServiceAccount
 * `namespace/name` (TokenRequest, 10 minutes), so a test acts with exactly that
 * account's permissions.
 */
export async function serviceAccountKubeConfig(
  cluster: HostCluster,
  namespace: string,
  name: string,
): Promise<KubeConfig> {
  const token = await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "host", server: cluster.server, caData: Buffer.from(cluster.caPem).toString("base64") }],
    users: [{ name, token: token.status?.token }],
    contexts: [{ name, cluster: "host", user: name }],
    currentContext: name,
  });
  return config;
}

/**
 * Writes a kubeconfig file at `path` with a fresh 10-minute token of ServiceAccount
 * `namespace/name` (see serviceAccountKubeConfig), for a service process started with
 * `KUBECONFIG=path` to run with exactly the rights its pod would have. Returns `path`.
 */
export async function serviceAccountKubeconfigFile(
  cluster: HostCluster,
  namespace: string,
  name: string,
  path: string,
): Promise<string> {
  const config = await serviceAccountKubeConfig(cluster, namespace, name);
  writeFileSync(path, config.exportConfig(), { mode: 0o600 });
  return path;
}
