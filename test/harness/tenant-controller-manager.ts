import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TENANT_CONTROLLERS } from "@tenantplane/provisioner/desired-objects";
import { kubeconfigYaml } from "./kubeconfig.js";
import { signLeaf, type KeyPairPem } from "./pki.js";
import { startProcess, type ManagedProcess } from "./process.js";

/** k3s's default pod range; no controller of {@link TENANT_CONTROLLERS} hands it out, but k3s passes it. */
const K3S_CLUSTER_CIDR = "10.42.0.0/16";

/** Inputs for {@link startTenantControllerManager}: the files k3s hands its controller manager. */
export interface TenantControllerManagerSpec {
  clusterBinary: string;
  /** Where its kubeconfig and PEM files are written. */
  dir: string;
  logsDir: string;
  /** The tenant API it controls. */
  apiServerUrl: string;
  /** k3s `server-ca`: verifies the API, becomes every namespace's `kube-root-ca.crt`, signs kubelet-serving CSRs. */
  serverCa: KeyPairPem;
  /** k3s `client-ca`: signs the controller manager's own client certificate and client CSRs. */
  clientCa: KeyPairPem;
  /** k3s `service.key`: signs the tokens of service-account token Secrets. */
  serviceAccountKeyPem: string;
  serviceClusterIpRange: string;
  /** The controllers to run; defaults to {@link TENANT_CONTROLLERS}, what k3s runs for a Shared or Dedicated tenant. */
  controllers?: readonly string[];
}

/**
 * Starts kube-controller-manager against a tenant API as k3s runs it: the controllers of
 * {@link TENANT_CONTROLLERS} (the provisioner's k3s argument, so both run the same set), a
 * `system:kube-controller-manager` client certificate signed by the client CA, one
 * service-account credential per controller, the server CA as root CA, and the tenant's
 * service-account key. Differs from k3s only where a test needs it: no leader election and
 * no serving port, so several stand-ins share a machine. Returns at once; the caller waits
 * for whatever it needs the controllers to have done, and stops the process.
 */
export async function startTenantControllerManager(spec: TenantControllerManagerSpec): Promise<ManagedProcess> {
  const pki = join(spec.dir, "controller-manager");
  mkdirSync(pki, { recursive: true });
  const file = (name: string, content: string) => {
    const path = join(pki, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };
  // The identity k3s gives it: RBAC's bootstrap policy binds this user to what it needs,
  // including minting each controller's service-account token.
  const client = await signLeaf(spec.clientCa, { commonName: "system:kube-controller-manager", usage: "client" });
  const kubeconfig = file(
    "kubeconfig",
    kubeconfigYaml({ server: spec.apiServerUrl, caPem: spec.serverCa.certPem, ...client, name: "tenant" }),
  );
  const serverCa = {
    cert: file("server-ca.crt", spec.serverCa.certPem),
    key: file("server-ca.key", spec.serverCa.keyPem),
  };
  const clientCa = {
    cert: file("client-ca.crt", spec.clientCa.certPem),
    key: file("client-ca.key", spec.clientCa.keyPem),
  };
  return startProcess({
    name: `kube-controller-manager ${spec.apiServerUrl}`,
    command: spec.clusterBinary,
    args: [
      "kube-controller-manager",
      `--kubeconfig=${kubeconfig}`,
      `--controllers=${(spec.controllers ?? TENANT_CONTROLLERS).join(",")}`,
      "--use-service-account-credentials=true",
      `--service-account-private-key-file=${file("service.key", spec.serviceAccountKeyPem)}`,
      `--root-ca-file=${serverCa.cert}`,
      `--service-cluster-ip-range=${spec.serviceClusterIpRange}`,
      "--allocate-node-cidrs=true",
      `--cluster-cidr=${K3S_CLUSTER_CIDR}`,
      `--cluster-signing-kube-apiserver-client-cert-file=${clientCa.cert}`,
      `--cluster-signing-kube-apiserver-client-key-file=${clientCa.key}`,
      `--cluster-signing-kubelet-client-cert-file=${clientCa.cert}`,
      `--cluster-signing-kubelet-client-key-file=${clientCa.key}`,
      `--cluster-signing-kubelet-serving-cert-file=${serverCa.cert}`,
      `--cluster-signing-kubelet-serving-key-file=${serverCa.key}`,
      `--cluster-signing-legacy-unknown-cert-file=${serverCa.cert}`,
      `--cluster-signing-legacy-unknown-key-file=${serverCa.key}`,
      "--profiling=false",
      "--leader-elect=false",
      "--secure-port=0",
      // Otherwise the controller manager creates /usr/libexec/kubernetes/... on the machine.
      `--flex-volume-plugin-dir=${join(spec.dir, "flexvolume")}`,
    ],
    logPath: join(spec.logsDir, "kube-controller-manager.log"),
  });
}
