import { CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { startTenantApiServer, type TenantApiServer } from "./tenant-api-server.js";
import { waitFor } from "./wait-for.js";

/**
 * Plays k3s for one tenant, as it would boot on its data volume: waits for the
 * provisioner's `<tenant>-pki` Secret in `tp-<tenant>` and starts the stand-in
 * API server and controller manager on `address` with exactly those CAs and
 * service-account key.
 */
export async function startTenantStandIn(
  kc: KubeConfig,
  tenant: string,
  address: string,
  options: { toolsDir?: string; timeoutMs?: number; auditLog?: boolean } = {},
): Promise<TenantApiServer> {
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = `tp-${tenant}`;
  const secret = await waitFor<V1Secret>(() => core.readNamespacedSecret({ name: `${tenant}-pki`, namespace }), {
    timeoutMs: options.timeoutMs ?? 90_000,
    intervalMs: 100,
    description: `Secret ${namespace}/${tenant}-pki`,
  });
  const file = (key: string) => Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8");
  return startTenantApiServer({
    ...(options.toolsDir ? { toolsDir: options.toolsDir } : {}),
    ...(options.auditLog ? { auditLog: true } : {}),
    address,
    serverCa: { certPem: file("server-ca.crt"), keyPem: file("server-ca.key") },
    clientCa: { certPem: file("client-ca.crt"), keyPem: file("client-ca.key") },
    requestHeaderCa: { certPem: file("request-header-ca.crt"), keyPem: file("request-header-ca.key") },
    serviceAccountKeyPem: file("service.key"),
    dnsNames: [`k3s.${namespace}.svc`],
  });
}
