import { CoreV1Api } from "@kubernetes/client-node";
import { JsonClient, resourcePath, type RawObject } from "@tenantplane/kube";
import { generateTenantPki, pkiSecret } from "@tenantplane/provisioner/desired-objects";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  kubeConfigFrom,
  liveProcesses,
  signLeaf,
  startHostCluster,
  startTenantStandIn,
  trackFailures,
  waitFor,
  type HostCluster,
  type TenantApiServer,
} from "../harness/index.js";

// The tenant stand-in runs kube-controller-manager as k3s does, and the host's kwok completes
// the host copies of Job Pods. Tenant API stand-ins of this suite live on 127.0.0.30-39.
const TENANT = "ctl";
const ADDRESS = "127.0.0.30";
const NS = "team";
const failures = trackFailures();

type Obj = RawObject & {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & { phase?: string };
  data?: Record<string, string>;
};
type List = { items: Obj[] };

let host: HostCluster;
let standIn: TenantApiServer;
let tenant: JsonClient;
let hostApi: JsonClient;
let serverCaPem: string;

async function get(client: JsonClient, path: string): Promise<Obj | undefined> {
  try {
    return await client.request<Obj>("GET", path);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

const ownerOf = (obj: Obj) =>
  ((obj.metadata["ownerReferences"] ?? []) as { kind: string; name: string }[]).map((o) => `${o.kind}/${o.name}`);

beforeAll(async () => {
  host = await startHostCluster({ name: "tenant-controllers" });
  hostApi = new JsonClient(host.kubeConfig);
  // The provisioner's own PKI, in the Secret the stand-in boots from as k3s would.
  const pki = await generateTenantPki(TENANT);
  const core = host.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: `tp-${TENANT}` } } });
  await core.createNamespacedSecret({ namespace: `tp-${TENANT}`, body: pkiSecret(TENANT, pki) });
  standIn = await startTenantStandIn(host.kubeConfig, TENANT, ADDRESS);
  serverCaPem = pki.serverCa.certPem;
  const admin = await signLeaf(pki.clientCa, {
    commonName: "tenant-admin",
    organizations: ["system:masters"],
    usage: "client",
  });
  tenant = new JsonClient(kubeConfigFrom({ server: standIn.url, caPem: serverCaPem, ...admin }));
  await tenant.request("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
  });
}, 300_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  await standIn?.stop({ keepLogs });
  await host?.stop({ keepLogs });
  expect(liveProcesses()).toEqual([]);
});

describe("the tenant stand-in's controller manager", () => {
  it("gives a new namespace its default ServiceAccount and the server CA as kube-root-ca.crt", async () => {
    const sa = await waitFor(() => get(tenant, resourcePath("v1", "serviceaccounts", NS, "default")), {
      timeoutMs: 30_000,
      description: `ServiceAccount ${NS}/default`,
    });
    expect(sa.metadata.name).toBe("default");
    const rootCa = await waitFor(() => get(tenant, resourcePath("v1", "configmaps", NS, "kube-root-ca.crt")), {
      timeoutMs: 30_000,
      description: `ConfigMap ${NS}/kube-root-ca.crt`,
    });
    expect(rootCa.data?.["ca.crt"]?.trim()).toBe(serverCaPem.trim());
  });

  it("fills a service-account token Secret with a token the tenant API accepts, signed with the tenant's key", async () => {
    await tenant.request("POST", resourcePath("v1", "secrets", NS), {
      body: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: "default-token",
          namespace: NS,
          annotations: { "kubernetes.io/service-account.name": "default" },
        },
        type: "kubernetes.io/service-account-token",
      },
    });
    const secret = await waitFor(
      async () => {
        const s = await get(tenant, resourcePath("v1", "secrets", NS, "default-token"));
        return s?.data?.["token"] === undefined ? undefined : s;
      },
      { timeoutMs: 30_000, description: "the token controller to fill Secret default-token" },
    );
    expect(Buffer.from(secret.data!["ca.crt"]!, "base64").toString("utf8").trim()).toBe(serverCaPem.trim());
    const token = Buffer.from(secret.data!["token"]!, "base64").toString("utf8");
    const review = await tenant.request<Obj>("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
    });
    expect(review.status?.["authenticated"]).toBe(true);
    expect((review.status?.["user"] as { username: string }).username).toBe(`system:serviceaccount:${NS}:default`);
  });

  it("makes a Deployment's ReplicaSet and Pods and an EndpointSlice for its Service, and collects them when it is deleted", async () => {
    const labels = { app: "web" };
    await tenant.request("POST", `/apis/apps/v1/namespaces/${NS}/deployments`, {
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: NS },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: "web", image: "nginx:1.27" }] } },
        },
      },
    });
    await tenant.request("POST", resourcePath("v1", "services", NS), {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: NS },
        spec: { selector: labels, ports: [{ port: 80 }] },
      },
    });
    const replicaSets = await waitFor(
      async () => {
        const list = await tenant.request<List>("GET", `/apis/apps/v1/namespaces/${NS}/replicasets`, {
          query: { labelSelector: "app=web" },
        });
        return list.items.length === 1 ? list.items : undefined;
      },
      { timeoutMs: 30_000, description: "the ReplicaSet of Deployment web" },
    );
    expect(ownerOf(replicaSets[0]!)).toEqual(["Deployment/web"]);
    const pods = await waitFor(
      async () => {
        const list = await tenant.request<List>("GET", resourcePath("v1", "pods", NS), {
          query: { labelSelector: "app=web" },
        });
        return list.items.length === 2 ? list.items : undefined;
      },
      { timeoutMs: 30_000, description: "the 2 Pods of Deployment web" },
    );
    for (const pod of pods) expect(ownerOf(pod)).toEqual([`ReplicaSet/${replicaSets[0]!.metadata.name}`]);
    const slices = await waitFor(
      async () => {
        const list = await tenant.request<List>("GET", `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
          query: { labelSelector: "kubernetes.io/service-name=web" },
        });
        return list.items.length > 0 ? list.items : undefined;
      },
      { timeoutMs: 30_000, description: "the EndpointSlice of Service web" },
    );
    expect(ownerOf(slices[0]!)).toEqual(["Service/web"]);

    await tenant.request("DELETE", `/apis/apps/v1/namespaces/${NS}/deployments/web`);
    await waitFor(
      async () => {
        const rs = await tenant.request<List>("GET", `/apis/apps/v1/namespaces/${NS}/replicasets`, {
          query: { labelSelector: "app=web" },
        });
        const left = await tenant.request<List>("GET", resourcePath("v1", "pods", NS), {
          query: { labelSelector: "app=web" },
        });
        return rs.items.length === 0 && left.items.length === 0;
      },
      { timeoutMs: 60_000, description: "the garbage collector to delete the ReplicaSet and Pods of Deployment web" },
    );
  });

  it("leaves a virtual Node's spec alone: no node lifecycle or node IPAM controller runs", async () => {
    // A virtual Node as back-sync makes it for a Ready host node. On create, admission taints
    // it node.kubernetes.io/not-ready; a node lifecycle controller would lift that taint
    // within a pass, and node IPAM would give the Node a pod CIDR at once.
    const now = new Date().toISOString();
    const created = await tenant.request<Obj>("POST", "/api/v1/nodes", {
      body: {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "virtual-0", labels: { "tenantplane.io/virtual-node": "true" } },
        spec: { taints: [{ key: "tenantplane.io/virtual-node", value: "true", effect: "NoSchedule" }] },
        status: {
          conditions: [
            {
              type: "Ready",
              status: "True",
              reason: "KubeletReady",
              message: "mirrored from the host node",
              lastHeartbeatTime: now,
              lastTransitionTime: now,
            },
          ],
        },
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    const node = (await get(tenant, "/api/v1/nodes/virtual-0"))!;
    expect(node.spec).toEqual(created.spec);
    expect(node.spec?.["podCIDR"]).toBeUndefined();
    await tenant.request("DELETE", "/api/v1/nodes/virtual-0");
  });
});

describe("the host's kwok", () => {
  it("completes the host copy of a Job's Pod (labelled as the Job controller labels it), and only that", async () => {
    // The tenant's Job controller labels its Pod; the sync copies the labels, not the owner.
    await tenant.request("POST", `/apis/batch/v1/namespaces/${NS}/jobs`, {
      body: {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "once", namespace: NS },
        spec: {
          template: { spec: { restartPolicy: "Never", containers: [{ name: "work", image: "busybox:1.36" }] } },
        },
      },
    });
    const tenantPod = await waitFor(
      async () =>
        (
          await tenant.request<List>("GET", resourcePath("v1", "pods", NS), {
            query: { labelSelector: "batch.kubernetes.io/job-name=once" },
          })
        ).items[0],
      { timeoutMs: 30_000, description: "the Pod of Job once" },
    );
    const hostPod = (name: string, labels: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default", labels },
      spec: {
        restartPolicy: "Never",
        nodeName: host.nodeNames[0],
        containers: [{ name: "work", image: "busybox:1.36" }],
      },
    });
    await hostApi.request("POST", resourcePath("v1", "pods", "default"), {
      body: hostPod("once-copy", { ...tenantPod.metadata.labels }),
    });
    await hostApi.request("POST", resourcePath("v1", "pods", "default"), {
      body: hostPod("server-copy", { app: "server" }),
    });
    const done = await waitFor(
      async () => {
        const pod = await get(hostApi, resourcePath("v1", "pods", "default", "once-copy"));
        return pod?.status?.phase === "Succeeded" ? pod : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "host Pod once-copy Succeeded" },
    );
    const [status] = done.status!["containerStatuses"] as { state: { terminated?: Record<string, unknown> } }[];
    expect(status?.state.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
    const server = await get(hostApi, resourcePath("v1", "pods", "default", "server-copy"));
    expect(server?.status?.phase).toBe("Running");

    // The host copy's status as back-sync mirrors it: the tenant's Job controller counts the Pod.
    const mirrored: Record<string, unknown> = {};
    for (const field of ["phase", "conditions", "containerStatuses", "startTime", "podIP", "podIPs", "hostIP"]) {
      mirrored[field] = done.status![field];
    }
    await tenant.request("PATCH", `${resourcePath("v1", "pods", NS, tenantPod.metadata.name)}/status`, {
      body: { status: mirrored },
      contentType: "application/merge-patch+json",
    });
    const job = await waitFor(
      async () => {
        const j = await get(tenant, `/apis/batch/v1/namespaces/${NS}/jobs/once`);
        const complete = ((j?.status?.["conditions"] ?? []) as { type: string; status: string }[]).some(
          (c) => c.type === "Complete" && c.status === "True",
        );
        return complete ? j : undefined;
      },
      { timeoutMs: 30_000, description: "tenant Job once Complete" },
    );
    expect(job.status?.["succeeded"]).toBe(1);
  });
});
