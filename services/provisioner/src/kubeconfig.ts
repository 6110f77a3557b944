import type { V1Secret } from "@kubernetes/client-node";
import { hostNamespaceFor } from "@tenantplane/mapping";
import YAML from "yaml";
import { KUBECONFIG_KEY, kubeconfigSecretName, tenantLabels } from "./control-plane.js";
import { encodeSecretData } from "./secret-data.js";

/** What an admin kubeconfig for one tenant is made of; all PEM material is embedded. */
export interface KubeconfigInput {
  tenant: string;
  /** URL of the tenant API, e.g. from endpointFor() or externalEndpointFrom(). */
  server: string;
  /** The tenant's server CA certificate, which signs k3s's serving certificate. */
  caPem: string;
  /** Client certificate and key signed by the tenant's client CA. */
  certPem: string;
  keyPem: string;
}

/**
 * A self-contained kubeconfig (certificates inline as base64 data, no exec plugin, no file
 * paths) whose cluster, user and context are all named after the tenant.
 */
export function buildKubeconfig(input: KubeconfigInput): string {
  const name = input.tenant;
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: input.server, "certificate-authority-data": base64(input.caPem) } }],
    users: [
      {
        name,
        user: {
          "client-certificate-data": base64(input.certPem),
          "client-key-data": base64(input.keyPem),
        },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
    preferences: {},
  };
  return YAML.stringify(config);
}

/** Where the admin kubeconfig lives, in the shape of `status.kubeconfigSecretRef`. */
export interface KubeconfigSecretRef {
  namespace: string;
  name: string;
  key: string;
}

/** The reference to a tenant's kubeconfig Secret as published in `status.kubeconfigSecretRef`. */
export function kubeconfigSecretRef(tenant: string): KubeconfigSecretRef {
  return { namespace: hostNamespaceFor(tenant), name: kubeconfigSecretName(tenant), key: KUBECONFIG_KEY };
}

/**
 * Secret `<tenant>-kubeconfig` (type Opaque, managed labels) holding the kubeconfig under
 * {@link KUBECONFIG_KEY}. Uses `data`, not `stringData`, so server-side apply sees no drift.
 */
export function kubeconfigSecret(input: { tenant: string; namespace?: string; kubeconfig: string }): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: kubeconfigSecretName(input.tenant),
      namespace: input.namespace ?? hostNamespaceFor(input.tenant),
      labels: tenantLabels(input.tenant),
    },
    type: "Opaque",
    data: encodeSecretData({ [KUBECONFIG_KEY]: input.kubeconfig }),
  };
}

function base64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}
