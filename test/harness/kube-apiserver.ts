import { createPublicKey } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { httpsGet } from "./https.js";
import type { KeyPairPem } from "./pki.js";
import { startProcess, type ManagedProcess } from "./process.js";
import { waitFor } from "./wait-for.js";

/** Inputs for {@link startKubeApiServer}; all PEM material is written under `dir/pki`. */
export interface KubeApiServerSpec {
  clusterBinary: string;
  dir: string;
  logsDir: string;
  etcdUrl: string;
  address: string;
  port: number;
  /** CA that signed `serving`; used to verify the readiness probe. */
  servingCaPem: string;
  serving: KeyPairPem;
  clientCaPem: string;
  /** Client certificate (signed by the client CA) for the readiness probe; anonymous when absent. */
  probeClient?: KeyPairPem;
  serviceAccountKeyPem: string;
  serviceClusterIpRange: string;
  authorizationModes: string[];
  admissionPlugins?: string[];
  /** Front-proxy (request-header) trust, plus the client certificate the aggregator presents. */
  requestHeader?: { caPem: string; proxyClient: KeyPairPem };
  /** Writes an audit log (Metadata level, every request once it completes) to this path. */
  auditLogPath?: string;
  /**
   * Authenticates bearer tokens of `bootstrap.kubernetes.io/token` Secrets in `kube-system`
   * (`--enable-bootstrap-token-auth`), as k3s's kube-apiserver does.
   */
  bootstrapTokenAuth?: boolean;
}

/** A running kube-apiserver that answered `/readyz`. */
export interface KubeApiServer {
  url: string;
  process: ManagedProcess;
}

/** Starts kube-apiserver from the `cluster` binary and waits until `/readyz` returns 200. */
export async function startKubeApiServer(spec: KubeApiServerSpec): Promise<KubeApiServer> {
  const pki = join(spec.dir, "pki");
  mkdirSync(pki, { recursive: true });
  const file = (name: string, content: string) => {
    const path = join(pki, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };
  const url = `https://${spec.address}:${spec.port}`;
  const args = [
    "kube-apiserver",
    `--etcd-servers=${spec.etcdUrl}`,
    `--bind-address=${spec.address}`,
    `--advertise-address=${spec.address}`,
    `--secure-port=${spec.port}`,
    `--cert-dir=${pki}`,
    `--tls-cert-file=${file("apiserver.crt", spec.serving.certPem)}`,
    `--tls-private-key-file=${file("apiserver.key", spec.serving.keyPem)}`,
    `--client-ca-file=${file("client-ca.crt", spec.clientCaPem)}`,
    // kube-apiserver reads verification keys as public keys only, so derive one from the signing key.
    `--service-account-key-file=${file("sa.pub", publicKeyPem(spec.serviceAccountKeyPem))}`,
    `--service-account-signing-key-file=${file("sa.key", spec.serviceAccountKeyPem)}`,
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-cluster-ip-range=${spec.serviceClusterIpRange}`,
    `--authorization-mode=${spec.authorizationModes.join(",")}`,
    "--allow-privileged=true",
    // Loopback addresses are not valid Endpoints, so the `kubernetes` Service gets none.
    "--endpoint-reconciler-type=none",
    // Flow control only costs CPU on a two-core test machine.
    "--enable-priority-and-fairness=false",
    "--profiling=false",
  ];
  if (spec.auditLogPath !== undefined) {
    args.push(
      `--audit-policy-file=${file("audit-policy.yaml", AUDIT_POLICY)}`,
      `--audit-log-path=${spec.auditLogPath}`,
      "--audit-log-format=json",
      "--audit-log-maxsize=0",
    );
  }
  if (spec.bootstrapTokenAuth === true) args.push("--enable-bootstrap-token-auth=true");
  if (spec.admissionPlugins !== undefined) args.push(`--enable-admission-plugins=${spec.admissionPlugins.join(",")}`);
  if (spec.requestHeader !== undefined) {
    args.push(
      `--requestheader-client-ca-file=${file("request-header-ca.crt", spec.requestHeader.caPem)}`,
      "--requestheader-username-headers=X-Remote-User",
      "--requestheader-group-headers=X-Remote-Group",
      "--requestheader-extra-headers-prefix=X-Remote-Extra-",
      `--proxy-client-cert-file=${file("front-proxy-client.crt", spec.requestHeader.proxyClient.certPem)}`,
      `--proxy-client-key-file=${file("front-proxy-client.key", spec.requestHeader.proxyClient.keyPem)}`,
    );
  }
  const proc = startProcess({
    name: `kube-apiserver ${url}`,
    command: spec.clusterBinary,
    args,
    logPath: join(spec.logsDir, "kube-apiserver.log"),
  });
  try {
    await waitFor(
      async () => {
        proc.assertRunning();
        const res = await httpsGet(`${url}/readyz`, {
          caPem: spec.servingCaPem,
          certPem: spec.probeClient?.certPem,
          keyPem: spec.probeClient?.keyPem,
        });
        if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 800)}`);
        return true;
      },
      { description: `kube-apiserver /readyz at ${url}`, timeoutMs: 120_000, intervalMs: 250 },
    );
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return { url, process: proc };
}

// Metadata only (who, what, when, answer code): enough to count requests by user agent and verb.
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
`;

function publicKeyPem(privateKeyPem: string): string {
  return createPublicKey(privateKeyPem).export({ format: "pem", type: "spki" }).toString();
}
