import { existsSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";

const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * Loads the host cluster's configuration: an explicit kubeconfig path wins,
 * then the in-cluster service account, then the usual default locations.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else if (process.env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/** Parses a kubeconfig document (e.g. a tenant's, read from a Secret). */
export function kubeConfigFromString(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
}
