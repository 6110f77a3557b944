import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { CoreV1Api, KubeConfig, type V1Node } from "@kubernetes/client-node";
import { kwokNodeAnnotation, startKwok } from "./kwok.js";
import type { ManagedProcess } from "./process.js";
import type { TenantApiServer } from "./tenant-api-server.js";
import { tenantKubeconfig } from "./tenant-sync.js";
import { toolPath } from "./tools.js";
import { waitFor } from "./wait-for.js";

/**
 * Value of {@link kwokNodeAnnotation} on a tenant's private nodes. Distinct from the host's, so
 * a tenant's kwok never manages a Node the sync mirrored from the host, nor the host's kwok one
 * of the tenant's.
 */
export const PRIVATE_NODE_ANNOTATION_VALUE = "private";

/** kwok pointed at a tenant's API, simulating the machines that joined it as private nodes. */
export interface TenantKwok {
  process: ManagedProcess;
  /** The tenant API as kwok reaches it (the tenant's admin kubeconfig). */
  kubeConfig: KubeConfig;
  stop(): Promise<void>;
}

/**
 * Starts kwok against `tenant`'s stand-in with the same stages as the host's kwok (Pods on its
 * nodes become Running and Ready, deleted Pods go at once), managing only Nodes annotated
 * {@link PRIVATE_NODE_ANNOTATION_VALUE}. It signs in with the tenant's admin kubeconfig (the
 * provisioner's `<tenant>-kubeconfig` Secret): a real node would present the join token to
 * k3s's supervisor and get node certificates back, and the stand-in has no supervisor.
 */
export async function startTenantKwok(
  kc: KubeConfig,
  tenant: string,
  standIn: TenantApiServer,
  options: { toolsDir?: string } = {},
): Promise<TenantKwok> {
  const dir = join(standIn.logsDir, "kwok");
  mkdirSync(dir, { recursive: true });
  const kubeconfig = await tenantKubeconfig(kc, tenant);
  const kubeconfigPath = join(dir, "kubeconfig");
  writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfig);
  const proc = startKwok(toolPath("kwok", options.toolsDir), kubeconfigPath, dir, standIn.logsDir, {
    name: `kwok ${tenant}`,
    nodeAnnotationValue: PRIVATE_NODE_ANNOTATION_VALUE,
  });
  return { process: proc, kubeConfig, stop: () => proc.stop() };
}

/**
 * Registers private node `name` in the tenant API as a joined machine would (the standard
 * labels a kubelet sets, plus the operator's `labels`), managed by `kwok`, and waits until it is
 * Ready and carries no `node.kubernetes.io` taint.
 */
export async function createPrivateNode(
  kwok: TenantKwok,
  name: string,
  labels: Record<string, string> = {},
): Promise<V1Node> {
  const core = kwok.kubeConfig.makeApiClient(CoreV1Api);
  const resources = { cpu: "16", memory: "64Gi", pods: "110", "ephemeral-storage": "500Gi" };
  await core.createNode({
    body: {
      metadata: {
        name,
        annotations: {
          [kwokNodeAnnotation.key]: PRIVATE_NODE_ANNOTATION_VALUE,
          "node.alpha.kubernetes.io/ttl": "0",
        },
        labels: {
          "kubernetes.io/hostname": name,
          "kubernetes.io/os": "linux",
          "kubernetes.io/arch": "amd64",
          ...labels,
        },
      },
      status: { capacity: resources, allocatable: resources },
    },
  });
  return waitFor(
    async () => {
      kwok.process.assertRunning();
      const node = await core.readNode({ name });
      const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      const tainted = (node.spec?.taints ?? []).some((t) => t.key.startsWith("node.kubernetes.io/"));
      return ready && !tainted ? node : undefined;
    },
    { description: `private node ${name} Ready without node.kubernetes.io taints`, timeoutMs: 90_000 },
  );
}

/** A tenant's join credential as the provisioner stores it in the host Secret `<tenant>-join`. */
export interface JoinCredential {
  /** `K10<sha256 of the server CA>::<id>.<secret>`, k3s's full token format. */
  token: string;
  server: string;
  caPem: string;
  /** The hex digest the token pins (after `K10`). */
  caHash: string;
  /** `<id>.<secret>`: the bootstrap token the tenant API authenticates. */
  bootstrapToken: string;
  tokenId: string;
}

/** Reads `tp-<tenant>/<tenant>-join` and splits its token; throws naming what is malformed. */
export async function readJoinCredential(kc: KubeConfig, tenant: string): Promise<JoinCredential> {
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = `tp-${tenant}`;
  const secret = await core.readNamespacedSecret({ name: `${tenant}-join`, namespace });
  const value = (key: string) => {
    const encoded = secret.data?.[key];
    if (encoded === undefined) throw new Error(`Secret ${namespace}/${tenant}-join has no key ${key}`);
    return Buffer.from(encoded, "base64").toString("utf8");
  };
  const token = value("token");
  const match = /^K10([0-9a-f]{64})::(([a-z0-9]{6})\.[a-z0-9]{16})$/.exec(token);
  if (match === null) {
    throw new Error(
      `Secret ${namespace}/${tenant}-join key token is not K10<sha256 hex>::<6-char id>.<16-char secret>`,
    );
  }
  return {
    token,
    server: value("server"),
    caPem: value("ca.crt"),
    caHash: match[1]!,
    bootstrapToken: match[2]!,
    tokenId: match[3]!,
  };
}

/** The hex sha256 of `pem` as k3s hashes its CA bundle for a token's `K10` prefix. */
export function caHashOf(pem: string): string {
  return createHash("sha256").update(pem).digest("hex");
}

/** The user a tenant API says a bearer token is, from a SelfSubjectReview. */
export interface ReviewedUser {
  status: number;
  username?: string;
  groups?: string[];
}

/** POSTs a SelfSubjectReview to `url` with `token` as bearer, trusting only `caPem`. */
export async function selfSubjectReview(url: string, caPem: string, token: string): Promise<ReviewedUser> {
  const body = JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      `${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      {
        method: "POST",
        ca: caPem,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        timeout: 5_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`SelfSubjectReview at ${url} timed out`)));
    req.on("error", reject);
    req.end(body);
  });
  if (res.status !== 201 && res.status !== 200) return { status: res.status };
  const review = JSON.parse(res.body) as { status?: { userInfo?: { username?: string; groups?: string[] } } };
  return {
    status: res.status,
    ...(review.status?.userInfo?.username === undefined ? {} : { username: review.status.userInfo.username }),
    ...(review.status?.userInfo?.groups === undefined ? {} : { groups: review.status.userInfo.groups }),
  };
}
