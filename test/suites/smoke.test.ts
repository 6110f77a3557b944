import { AppsV1Api, AuthenticationV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { AckPolicy, jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect, nanos } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  generateCa,
  generatePrivateKeyPem,
  httpsGet,
  installCrds,
  kubeConfigFrom,
  liveProcesses,
  setLoadBalancerIngress,
  signLeaf,
  startHostCluster,
  startNats,
  startTenantApiServer,
  trackFailures,
  testProvisionerName,
  waitFor,
  type HostCluster,
  type NatsServer,
} from "../harness/index.js";

let cluster: HostCluster | undefined;
let nats: NatsServer | undefined;
const failures = trackFailures();

beforeAll(async () => {
  const started = Date.now();
  cluster = await startHostCluster({ name: "smoke" });
  const clusterMs = Date.now() - started;
  nats = await startNats();
  console.log(`[smoke] host cluster ready in ${clusterMs}ms, NATS in ${Date.now() - started - clusterMs}ms`);
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await nats?.stop({ keepLogs });
  await cluster?.stop({ keepLogs });
  expect(liveProcesses()).toEqual([]);
});

function host(): { kc: KubeConfig; core: CoreV1Api } {
  if (cluster === undefined) throw new Error("host cluster did not start");
  return { kc: cluster.kubeConfig, core: cluster.kubeConfig.makeApiClient(CoreV1Api) };
}

/** The API server's Status message of a rejected request (client-node keeps it as a JSON string body). */
async function rejection(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (error) {
    const { code, body } = error as { code?: number; body?: unknown };
    const status = (typeof body === "string" ? JSON.parse(body) : body) as { message?: string };
    return { code: code ?? 0, message: status.message ?? String(body) };
  }
  throw new Error("expected the API server to reject the request, but it was accepted");
}

async function isGone(read: Promise<unknown>): Promise<boolean> {
  try {
    await read;
    return false;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return true;
    throw error;
  }
}

describe("host cluster", () => {
  it("installs the tenantplane CRDs and rejects a TenantCluster whose name is too long, naming the field", async () => {
    const { kc } = host();
    const names = await installCrds(kc, crdManifests());
    expect(names).toEqual([
      "tenantclusters.tenantplane.io",
      "isolationprofiles.tenantplane.io",
      "syncpolicies.tenantplane.io",
    ]);

    const custom = kc.makeApiClient(CustomObjectsApi);
    const tenantCluster = (name: string) => ({
      group: "tenantplane.io",
      version: "v1alpha1",
      plural: "tenantclusters",
      body: { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name }, spec: {} },
    });
    const longest = "a".repeat(60);
    await custom.createClusterCustomObject(tenantCluster(longest));
    await custom.deleteClusterCustomObject({
      group: "tenantplane.io",
      version: "v1alpha1",
      plural: "tenantclusters",
      name: longest,
    });

    const rejected = await rejection(custom.createClusterCustomObject(tenantCluster("a".repeat(61))));
    expect(rejected.code).toBe(422);
    expect(rejected.message).toContain("metadata.name");
    expect(rejected.message).toContain("at most 60 characters");
  });

  it("runs a StatefulSet with a volumeClaimTemplate to a Running, Ready pod on a kwok node with a bound volume", async () => {
    const { kc, core } = host();
    const apps = kc.makeApiClient(AppsV1Api);
    const namespace = "smoke-sts";
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const labels = { app: "db" };
    await core.createNamespacedService({
      namespace,
      body: { metadata: { name: "db" }, spec: { clusterIP: "None", selector: labels, ports: [{ port: 6443 }] } },
    });
    await apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name: "db" },
        spec: {
          serviceName: "db",
          replicas: 1,
          podManagementPolicy: "Parallel",
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                { name: "db", image: "registry.invalid/db:1", volumeMounts: [{ name: "data", mountPath: "/data" }] },
              ],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: "data" },
              spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "2Gi" } } },
            },
          ],
        },
      },
    });

    const statefulSet = await waitFor(
      async () => {
        const sts = await apps.readNamespacedStatefulSet({ namespace, name: "db" });
        return sts.status?.readyReplicas === 1 && sts;
      },
      { description: "StatefulSet smoke-sts/db to report one ready replica", timeoutMs: 90_000 },
    );
    expect(statefulSet.status?.availableReplicas).toBe(1);

    const pod = await core.readNamespacedPod({ namespace, name: "db-0" });
    expect(pod.spec?.nodeName).toBe("kwok-node-0");
    expect(pod.status?.phase).toBe("Running");
    expect(pod.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");

    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: "data-db-0" });
    expect(claim.status?.phase).toBe("Bound");
    expect(claim.spec?.storageClassName).toBe("standard");
    const volume = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? "" });
    expect(volume.metadata?.annotations?.["pv.kubernetes.io/provisioned-by"]).toBe(testProvisionerName);
    expect(volume.spec?.claimRef?.uid).toBe(claim.metadata?.uid);
  });

  it("completes namespace deletion (pods, claims and the released volume included)", async () => {
    const { core } = host();
    const namespace = "smoke-sts";
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: "data-db-0" });
    await core.deleteNamespace({ name: namespace });
    await waitFor(() => isGone(core.readNamespace({ name: namespace })), {
      description: `namespace ${namespace} to be deleted`,
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    await waitFor(() => isGone(core.readPersistentVolume({ name: claim.spec?.volumeName ?? "" })), {
      description: "the released volume to be reclaimed",
      timeoutMs: 60_000,
    });
  });

  it("garbage-collects dependents when their owner is deleted", async () => {
    const { core } = host();
    const namespace = "smoke-gc";
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "owner" } } });
    const ownerReferences = [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata?.uid ?? "" }];
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: "dependent", ownerReferences } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "bystander" } } });

    await core.deleteNamespacedConfigMap({ namespace, name: "owner" });
    await waitFor(() => isGone(core.readNamespacedSecret({ namespace, name: "dependent" })), {
      description: "the garbage collector to delete the owned Secret",
      timeoutMs: 60_000,
    });
    expect(await isGone(core.readNamespacedConfigMap({ namespace, name: "bystander" }))).toBe(false);
    await core.deleteNamespace({ name: namespace });
  });

  it("enforces Pod Security Admission restricted and ResourceQuota", async () => {
    const { core } = host();
    const namespace = "smoke-policy";
    await core.createNamespace({
      body: { metadata: { name: namespace, labels: { "pod-security.kubernetes.io/enforce": "restricted" } } },
    });
    const privileged = rejection(
      core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: "privileged" },
          spec: { containers: [{ name: "c", image: "registry.invalid/c:1", securityContext: { privileged: true } }] },
        },
      }),
    );
    const denied = await privileged;
    expect(denied.code).toBe(403);
    expect(denied.message).toContain('violates PodSecurity "restricted:latest"');
    expect(denied.message).toContain("privileged");

    await core.createNamespacedResourceQuota({
      namespace,
      body: { metadata: { name: "secrets" }, spec: { hard: { "count/secrets": "1" } } },
    });
    // Admission only enforces a quota once the controller has published its status.
    await waitFor(
      async () =>
        (await core.readNamespacedResourceQuota({ namespace, name: "secrets" })).status?.hard?.["count/secrets"] ===
        "1",
      { description: "the resource quota controller to publish status.hard", timeoutMs: 60_000 },
    );
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: "first" } } });
    const overQuota = await rejection(
      core.createNamespacedSecret({ namespace, body: { metadata: { name: "second" } } }),
    );
    expect(overQuota.code).toBe(403);
    expect(overQuota.message).toContain("exceeded quota: secrets");
    await core.deleteNamespace({ name: namespace });
  });
});

describe("harness as cloud load-balancer controller", () => {
  it("publishes an ingress address in a LoadBalancer Service's status, which stays put", async () => {
    const { kc, core } = host();
    const namespace = "smoke-lb";
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedService({
      namespace,
      body: {
        metadata: { name: "api" },
        spec: { type: "LoadBalancer", selector: { app: "api" }, ports: [{ port: 6443 }] },
      },
    });
    const updated = await setLoadBalancerIngress(kc, namespace, "api", "127.0.0.43");
    expect(updated.status?.loadBalancer?.ingress).toEqual([{ ip: "127.0.0.43", ipMode: "VIP" }]);
    const read = await core.readNamespacedService({ namespace, name: "api" });
    expect(read.status?.loadBalancer?.ingress?.map((i) => i.ip)).toEqual(["127.0.0.43"]);
    await core.deleteNamespace({ name: namespace });
  });
});

describe("tenant API server", () => {
  it("authenticates a kubeconfig built from caller-supplied CAs and refuses a foreign client CA", async () => {
    const serverCa = await generateCa("tenant-server-ca");
    const clientCa = await generateCa("tenant-client-ca");
    const requestHeaderCa = await generateCa("tenant-request-header-ca");
    const tenant = await startTenantApiServer({
      address: "127.0.0.42",
      serverCa,
      clientCaPem: clientCa.certPem,
      requestHeaderCa,
      serviceAccountKeyPem: await generatePrivateKeyPem(),
      dnsNames: ["smoke.tp-smoke.svc"],
    });
    let failed = true;
    try {
      expect(tenant.url).toBe("https://127.0.0.42:6443");
      const admin = await signLeaf(clientCa, {
        commonName: "tenant-admin",
        organizations: ["system:masters"],
        usage: "client",
      });
      const kc = kubeConfigFrom({ server: tenant.url, caPem: serverCa.certPem, ...admin });
      const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
      expect(review.status?.userInfo?.username).toBe("tenant-admin");
      expect(review.status?.userInfo?.groups).toContain("system:masters");
      const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
      expect(namespaces.items.map((n) => n.metadata?.name)).toContain("kube-system");

      // Front-proxy authentication: the identity comes from headers, vouched for by the request-header CA.
      const proxy = await signLeaf(requestHeaderCa, { commonName: "front-proxy-client", usage: "client" });
      const proxied = (headers: Record<string, string>) =>
        httpsGet(`${tenant.url}/api/v1/namespaces`, { caPem: serverCa.certPem, ...proxy }, { headers });
      const alice = await proxied({ "X-Remote-User": "alice" });
      expect(alice.status).toBe(403);
      expect((JSON.parse(alice.body) as { message: string }).message).toContain(
        'User "alice" cannot list resource "namespaces"',
      );
      expect((await proxied({ "X-Remote-User": "alice", "X-Remote-Group": "system:masters" })).status).toBe(200);

      const foreign = await signLeaf(await generateCa("foreign-ca"), {
        commonName: "intruder",
        organizations: ["system:masters"],
        usage: "client",
      });
      const intruder = kubeConfigFrom({ server: tenant.url, caPem: serverCa.certPem, ...foreign });
      await expect(intruder.makeApiClient(CoreV1Api).listNamespace()).rejects.toThrow();
      failed = false;
    } finally {
      await tenant.stop({ keepLogs: failed });
    }
  });
});

describe("NATS", () => {
  it("keeps a JetStream stream across a restart and redelivers ack-pending messages to the durable consumer", async () => {
    if (nats === undefined) throw new Error("NATS did not start");
    const nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: "SMOKE", subjects: ["smoke.>"], storage: StorageType.File });
      await jsm.consumers.add("SMOKE", {
        durable_name: "worker",
        ack_policy: AckPolicy.Explicit,
        ack_wait: nanos(1_500),
      });
      const js = jetstream(nc);
      for (let i = 1; i <= 6; i++) await js.publish(`smoke.${i}`, `message ${i}`);

      const consumer = await js.consumers.get("SMOKE", "worker");
      const firstBatch = await consumer.fetch({ max_messages: 4, expires: 2_000 });
      const firstSeqs: number[] = [];
      for await (const m of firstBatch) {
        firstSeqs.push(m.seq);
        // Acknowledge the first two for certain; leave the next two pending across the restart.
        if (m.seq <= 2) await m.ackAck();
      }
      expect(firstSeqs).toEqual([1, 2, 3, 4]);
      const before = await consumer.info();
      expect(before.num_ack_pending).toBe(2);

      await nats.restart();

      const info = await waitFor(async () => (await jsm.streams.info("SMOKE")).state, {
        description: "the client to reconnect and the stream to be readable",
        timeoutMs: 30_000,
      });
      expect(info.messages).toBe(6);

      const redelivered = new Map<number, number>();
      await waitFor(
        async () => {
          const m = await consumer.next({ expires: 1_000 });
          if (m !== null) {
            redelivered.set(m.seq, m.info.deliveryCount);
            await m.ackAck();
          }
          return redelivered.size >= 4;
        },
        { description: "messages 3-6 to be delivered after the restart", timeoutMs: 30_000, intervalMs: 0 },
      );
      expect([...redelivered.keys()].sort()).toEqual([3, 4, 5, 6]);
      expect(redelivered.get(3)).toBeGreaterThanOrEqual(2);
      expect(redelivered.get(4)).toBeGreaterThanOrEqual(2);
      expect(redelivered.get(5)).toBe(1);
      const after = await consumer.info();
      expect(after.num_ack_pending).toBe(0);
      expect(after.num_pending).toBe(0);
    } finally {
      await nc.close();
    }
  });
});
