import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { JsonClient, resourcePath } from "@tenantplane/kube";
import { setLoadBalancerIngress } from "./load-balancer.js";
import { startTenantStandIn } from "./tenant-stand-in.js";
import type { TenantApiServer } from "./tenant-api-server.js";
import { waitFor } from "./wait-for.js";

/** A tenant of a sync test: its TenantCluster name and the 127.0.0.N its API stand-in listens on. */
export interface SyncTenant {
  name: string;
  address: string;
}

/** The Synced condition and `status.sync` of a TenantCluster. */
export interface SyncedState {
  condition: { type: string; status: string; reason: string; message: string } | undefined;
  sync: { inSync: number; skipped: number; failed: number; lastFullPass?: string } | undefined;
}

/**
 * Provisions a tenant whose API is exposed through a load balancer (the harness writes
 * `tenant.address` as its ingress) and starts its API stand-in from the provisioner's PKI,
 * as k3s would boot. `spec` is merged into the TenantCluster's spec.
 */
export async function provisionTenant(
  kc: KubeConfig,
  tenant: SyncTenant,
  spec: Record<string, unknown> = {},
  options: { toolsDir?: string; auditLog?: boolean } = {},
): Promise<TenantApiServer> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  await objects.patch(
    {
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: tenant.name },
      spec: { controlPlane: { expose: { loadBalancer: { enabled: true } } }, ...spec },
    } as KubernetesObject,
    undefined,
    undefined,
    "e2e",
    true,
    PatchStrategy.ServerSideApply,
  );
  await setLoadBalancerIngress(kc, `tp-${tenant.name}`, "k3s", tenant.address);
  return startTenantStandIn(kc, tenant.name, tenant.address, options);
}

/** The tenant's admin kubeconfig, as the provisioner stored it in `<tenant>-kubeconfig`. */
export async function tenantKubeconfig(kc: KubeConfig, tenant: string): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const secret = await core.readNamespacedSecret({ name: `${tenant}-kubeconfig`, namespace: `tp-${tenant}` });
  const key = Object.keys(secret.data ?? {})[0]!;
  return Buffer.from(secret.data![key]!, "base64").toString("utf8");
}

/** A raw JSON client on the tenant API with the tenant admin's kubeconfig. */
export async function tenantJsonClient(kc: KubeConfig, tenant: string): Promise<JsonClient> {
  const tenantKc = new KubeConfig();
  tenantKc.loadFromString(await tenantKubeconfig(kc, tenant));
  return new JsonClient(tenantKc);
}

/** The tenant's Synced condition and sync counts as the sync worker last wrote them. */
export async function syncedState(kc: KubeConfig, tenant: string): Promise<SyncedState> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const tc = (await objects.read({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: tenant },
  })) as KubernetesObject & { status?: { conditions?: SyncedState["condition"][]; sync?: SyncedState["sync"] } };
  return { condition: tc.status?.conditions?.find((c) => c?.type === "Synced"), sync: tc.status?.sync };
}

/** Waits until the sync worker reports the tenant Synced=True. */
export async function waitForSynced(kc: KubeConfig, tenant: string, timeoutMs = 150_000): Promise<void> {
  await waitFor(async () => (await syncedState(kc, tenant)).condition?.status === "True" || undefined, {
    timeoutMs,
    intervalMs: 500,
    description: `${tenant} Synced=True`,
  });
}

/**
 * Waits until ServiceAccount `name` exists in the tenant's `namespace`. The stand-in's
 * controller manager makes `default` moments after the namespace, and until then the API
 * refuses a Pod that runs as it, as a k3s tenant would.
 */
export async function waitForTenantServiceAccount(
  tenant: JsonClient,
  namespace: string,
  name = "default",
): Promise<void> {
  await waitFor(() => tenant.request("GET", resourcePath("v1", "serviceaccounts", namespace, name)).then(() => true), {
    timeoutMs: 30_000,
    intervalMs: 100,
    description: `tenant ServiceAccount ${namespace}/${name}`,
  });
}
