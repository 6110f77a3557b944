import { KubeConfig } from "@kubernetes/client-node";
import YAML from "yaml";

/** Everything a client-certificate kubeconfig needs. */
export interface KubeconfigParams {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  /** Cluster, user and context name; defaults to "default". */
  name?: string;
}

/** Renders a single-context kubeconfig with embedded CA, client certificate and key. */
export function kubeconfigYaml(params: KubeconfigParams): string {
  const name = params.name ?? "default";
  const b64 = (pem: string) => Buffer.from(pem).toString("base64");
  return YAML.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: params.server, "certificate-authority-data": b64(params.caPem) } }],
    users: [{ name, user: { "client-certificate-data": b64(params.certPem), "client-key-data": b64(params.keyPem) } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
  });
}

/** A @kubernetes/client-node KubeConfig for the same parameters as {@link kubeconfigYaml}. */
export function kubeConfigFrom(params: KubeconfigParams): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(params));
  return kc;
}
