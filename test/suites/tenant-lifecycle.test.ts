import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  VersionApi,
  type CoreV1Event,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Secret,
} from "@kubernetes/client-node";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { crdManifests } from "@tenantplane/api";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  toolPath,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type RunningService,
  type TenantApiServer,
} from "../harness/index.js";

const run = promisify(execFile);
const failures = trackFailures();
const example = (file: string) =>
  YAML.parse(readFileSync(new URL(`../../examples/${file}`, import.meta.url), "utf8")) as KubernetesObject;

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
let nc: NatsConnection;
const watchers: RunningService[] = [];
const services: Partial<Record<"provisioner" | "isolation" | "recorder", RunningService>> = {};
const tenantApis: TenantApiServer[] = [];

// Tests look into specs loosely; the services under test are what parse them strictly.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

type Tc = KubernetesObject & {
  spec?: Record<string, unknown>;
  status?: {
    phase?: string;
    externalEndpoint?: string;
    endpoint?: string;
    hostNamespace?: string;
    kubeconfigSecretRef?: { namespace: string; name: string; key: string };
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };
};

function tenantCluster(name: string, spec: Record<string, unknown>): KubernetesObject {
  return { apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name }, spec } as KubernetesObject;
}

async function apply(obj: KubernetesObject): Promise<KubernetesObject> {
  return objects.patch(obj, undefined, undefined, "e2e", true, PatchStrategy.ServerSideApply);
}

async function read<T extends KubernetesObject>(
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
): Promise<T | undefined> {
  try {
    return (await objects.read({ apiVersion, kind, metadata: { name, namespace } })) as T;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

const readTc = (name: string) => read<Tc>("tenantplane.io/v1alpha1", "TenantCluster", name);
const condition = (tc: Tc | undefined, type: string) => tc?.status?.conditions?.find((c) => c.type === type);

async function waitForCondition(tenant: string, type: string, status: string, reason?: string, timeoutMs = 90_000) {
  return waitFor(
    async () => {
      const c = condition(await readTc(tenant), type);
      return c && c.status === status && (!reason || c.reason === reason) ? c : undefined;
    },
    { timeoutMs, intervalMs: 500, description: `${tenant} ${type}=${status}${reason ? ` (${reason})` : ""}` },
  );
}

async function eventsFor(tenant: string): Promise<CoreV1Event[]> {
  const list = await core.listEventForAllNamespaces({
    fieldSelector: `involvedObject.kind=TenantCluster,involvedObject.name=${tenant}`,
  });
  return list.items;
}

async function waitForEvent(tenant: string, match: (e: CoreV1Event) => boolean, description: string) {
  return waitFor(async () => (await eventsFor(tenant)).find(match), {
    timeoutMs: 60_000,
    intervalMs: 500,
    description,
  });
}

async function startTenantApiFor(tenant: string, address: string): Promise<TenantApiServer> {
  const api = await startTenantStandIn(host.kubeConfig, tenant, address);
  tenantApis.push(api);
  return api;
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "lifecycle" }), startNats()]);
  objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  const started = await Promise.all([
    fleet.start("watcher"),
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    fleet.start("recorder"),
  ]);
  watchers.push(started[0], started[1]);
  [services.provisioner, services.isolation, services.recorder] = started.slice(2);
  nc = await connect({ servers: nats.url });
  await apply(example("isolationprofile.yaml"));
  await apply(example("syncpolicy.yaml"));
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  for (const api of tenantApis) await api.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("a TenantCluster becomes an isolated tenant with a reachable control plane", () => {
  const tenant = "alpha";
  const address = "127.0.0.11";
  const alphaSpec = (storage: Record<string, string> = {}, exposed = true) => ({
    isolationProfileRef: { name: "standard" },
    syncPolicyRef: { name: "workloads" },
    controlPlane: {
      storage: { size: "2Gi", ...storage },
      expose: {
        loadBalancer: exposed
          ? { enabled: true, annotations: { "lb.example.com/scheme": "internal" } }
          : { enabled: false },
      },
    },
  });

  it("provisions, isolates, exposes and explains the tenant", async () => {
    const started = Date.now();
    await apply(tenantCluster(tenant, alphaSpec()));

    // The host namespace carries the profile's Pod Security labels.
    const ns = await waitFor(
      async () => {
        const n = await read("v1", "Namespace", `tp-${tenant}`);
        return n?.metadata?.labels?.["pod-security.kubernetes.io/enforce"] ? n : undefined;
      },
      { timeoutMs: 60_000, description: "namespace with PSA labels" },
    );
    expect(ns.metadata?.labels).toMatchObject({
      "app.kubernetes.io/managed-by": "tenantplane",
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/audit": "restricted",
      "pod-security.kubernetes.io/warn": "restricted",
    });

    // Isolation objects, each marked as tenantplane's.
    const deny = await waitFor(
      () => read("networking.k8s.io/v1", "NetworkPolicy", "tenantplane-default-deny", `tp-${tenant}`),
      {
        description: "default-deny NetworkPolicy",
      },
    );
    expect(deny.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("tenantplane");
    expect((deny as unknown as { spec: { policyTypes: string[] } }).spec.policyTypes.sort()).toEqual([
      "Egress",
      "Ingress",
    ]);
    const quota = await waitFor(
      () =>
        read<KubernetesObject & { spec: { hard: Record<string, string> } }>(
          "v1",
          "ResourceQuota",
          "tenantplane-quota",
          `tp-${tenant}`,
        ),
      { description: "quota" },
    );
    // The profile's 50 plus the control plane's own two pods (k3s and DNS).
    expect(quota.spec.hard.pods).toBe("52");
    expect(quota.metadata?.labels?.["tenantplane.io/tenant"]).toBe(tenant);
    const limits = await waitFor(() => read("v1", "LimitRange", "tenantplane-limits", `tp-${tenant}`), {
      description: "limit range",
    });
    expect(limits.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("tenantplane");

    // The harness plays the cloud load balancer; the control plane waits for the address.
    await setLoadBalancerIngress(host.kubeConfig, `tp-${tenant}`, "k3s", address);

    // The k3s control plane as specified.
    const sts = await waitFor(
      () => read<KubernetesObject & { spec: Loose }>("apps/v1", "StatefulSet", "k3s", `tp-${tenant}`),
      { description: "StatefulSet" },
    );
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.podManagementPolicy).toBe("Parallel");
    const k3s = sts.spec.template.spec.containers.find((c: { name: string }) => c.name === "k3s");
    const args: string[] = [...(k3s.command ?? []), ...(k3s.args ?? [])];
    expect(args.join(" ")).toContain("server");
    expect(args).toContain("--disable-agent");
    expect(args.join(" ")).toMatch(/--disable[= ]traefik/);
    expect(sts.spec.template.metadata.labels["tenantplane.io/control-plane"]).toBe("true");
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("2Gi");
    const headless = await read<KubernetesObject & { spec: Loose }>("v1", "Service", "k3s-headless", `tp-${tenant}`);
    expect(headless?.spec.clusterIP).toBe("None");
    const apiSvc = await read<KubernetesObject & { spec: Loose }>("v1", "Service", "k3s", `tp-${tenant}`);
    expect(apiSvc?.spec.type).toBe("LoadBalancer");
    expect(apiSvc?.metadata?.annotations?.["lb.example.com/scheme"]).toBe("internal");

    // The harness plays k3s itself.
    await startTenantApiFor(tenant, address);

    await waitForCondition(tenant, "ControlPlaneReady", "True", undefined, 120_000);
    await waitForCondition(tenant, "IsolationApplied", "True");
    const tc = await waitFor(
      async () => {
        const t = await readTc(tenant);
        return t?.status?.phase === "Ready" ? t : undefined;
      },
      { timeoutMs: 60_000, description: "phase Ready" },
    );
    console.error(`[e2e] ${tenant}: apply to Ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    expect(tc.status?.externalEndpoint).toBe(`https://${address}:6443`);
    expect(tc.status?.hostNamespace).toBe(`tp-${tenant}`);
    expect(tc.status?.endpoint).toBe(`https://k3s.tp-${tenant}.svc:6443`);

    // The stored kubeconfig works from outside against the tenant API.
    const ref = tc.status!.kubeconfigSecretRef!;
    const secret = await read<V1Secret>("v1", "Secret", ref.name, ref.namespace);
    const kubeconfig = Buffer.from(secret!.data![ref.key]!, "base64").toString("utf8");
    const { KubeConfig } = await import("@kubernetes/client-node");
    const tenantKc = new KubeConfig();
    tenantKc.loadFromString(kubeconfig);
    expect(tenantKc.getCurrentCluster()?.server).toBe(`https://${address}:6443`);
    expect((await tenantKc.makeApiClient(VersionApi).getCode()).gitVersion).toMatch(/^v1\.34\./);
    const tenantNamespaces = await tenantKc.makeApiClient(CoreV1Api).listNamespace();
    expect(tenantNamespaces.items.map((n) => n.metadata?.name)).toContain("kube-system");

    // Every step is explained on the TenantCluster, visible to kubectl describe.
    for (const reason of [
      "CreateNamespace",
      "CreateStatefulSet",
      "CreateService",
      "CreateSecret",
      "CreateNetworkPolicy",
      "CreateResourceQuota",
      "CreateLimitRange",
    ]) {
      await waitForEvent(tenant, (e) => e.reason === reason, `event ${reason}`);
    }
    const described = await waitFor(
      async () => {
        const { stdout } = await run(toolPath("cluster"), [
          "kubectl",
          "--kubeconfig",
          host.kubeconfigPath,
          "describe",
          "tenantcluster",
          tenant,
        ]);
        return stdout.includes("CreateStatefulSet") ? stdout : undefined;
      },
      { timeoutMs: 30_000, description: "kubectl describe shows decisions" },
    );
    // What happened to which host object, reported by the service that decided it.
    expect(described).toMatch(/Normal\s+CreateStatefulSet\s+\S+\s+provisioner\s+created StatefulSet /);
    expect(described).toContain(`created StatefulSet tp-${tenant}/k3s`);
  });

  it("follows a profile change: updates, removes what the profile no longer produces, and explains both", async () => {
    const profile = example("isolationprofile.yaml") as KubernetesObject & { spec: Loose };
    profile.spec.resourceQuota.hard.pods = 20;
    // A limit the profile stops setting goes from the quota: the quota was created, not applied,
    // so this proves the create's fields were handed over to the apply that follows.
    delete profile.spec.resourceQuota.hard["limits.memory"];
    profile.spec.network.allow.namespaces = [];
    profile.spec.podSecurity.warn = "baseline";
    await apply(profile);

    await waitFor(
      async () =>
        (
          await read<KubernetesObject & { spec: { hard: Record<string, string> } }>(
            "v1",
            "ResourceQuota",
            "tenantplane-quota",
            `tp-${tenant}`,
          )
        )?.spec.hard.pods === "22",
      { timeoutMs: 60_000, description: "quota follows the profile" },
    );
    const quota = await read<KubernetesObject & { spec: { hard: Record<string, string> } }>(
      "v1",
      "ResourceQuota",
      "tenantplane-quota",
      `tp-${tenant}`,
    );
    expect(quota?.spec.hard).not.toHaveProperty("limits.memory");
    expect(quota?.spec.hard).toHaveProperty("limits.cpu");
    await waitFor(
      async () =>
        (await read("v1", "Namespace", `tp-${tenant}`))?.metadata?.labels?.["pod-security.kubernetes.io/warn"] ===
        "baseline",
      { description: "PSA warn label follows the profile" },
    );
    // Stale objects are removed after the profile's objects are applied, in the same pass.
    await waitFor(
      async () => {
        const policies = await objects.list("networking.k8s.io/v1", "NetworkPolicy", `tp-${tenant}`);
        return !policies.items.some((p) => p.metadata?.name === "tenantplane-allow-namespaces");
      },
      { description: "the NetworkPolicy the profile no longer produces to be deleted" },
    );
    await waitForEvent(tenant, (e) => e.reason === "UpdateResourceQuota", "UpdateResourceQuota event");
    const deleted = await waitForEvent(tenant, (e) => e.reason === "DeleteNetworkPolicy", "DeleteNetworkPolicy event");
    expect(deleted.type).toBe("Warning");
  });

  it("refuses a spec change it cannot apply in place, and recovers when it is reverted", async () => {
    await apply(tenantCluster(tenant, alphaSpec({ storageClassName: "other" })));
    const refused = await waitForCondition(tenant, "ControlPlaneReady", "False", "ImmutableFieldChanged");
    expect(refused.message).toContain("spec.controlPlane.storage.storageClassName");
    expect((await readTc(tenant))?.status?.phase).toBe("Failed");
    const warning = await waitForEvent(tenant, (e) => e.reason === "ImmutableFieldChanged", "refusal warning");
    expect(warning.type).toBe("Warning");

    await apply(tenantCluster(tenant, alphaSpec()));
    await waitForCondition(tenant, "ControlPlaneReady", "True");
  });

  it("terms a malformed message, says so on the tenant, and keeps serving", async () => {
    const js = (await import("@nats-io/jetstream")).jetstream(nc);
    await js.publish(`tenantplane.tenants.${tenant}.changed`, "{not json");
    await js.publish(`tenantplane.tenants.${tenant}.changed`, JSON.stringify({ tenant, reason: "Because" }));
    const warning = await waitForEvent(tenant, (e) => e.reason === "MessageRejected", "MessageRejected warning");
    expect(warning.type).toBe("Warning");
    expect(warning.message).toMatch(/invalid message/);
    for (const svc of [services.provisioner!, services.isolation!]) {
      expect(svc.process.running()).toBe(true);
      expect((await svc.probe("/readyz")).status).toBe(200);
      expect((await svc.probe("/metrics")).body).toMatch(
        /tenantplane_messages_total\{[^}]*outcome="term"[^}]*\} [1-9]/,
      );
    }
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => (await jsm.consumers.info("TENANTS", "provisioner")).num_ack_pending === 0 || undefined, {
      description: "nothing left pending after the rejected messages",
      timeoutMs: 30_000,
    });
  });
  it("reconciles an exposure change: the load balancer goes, and so do the external endpoint and its kubeconfig", async () => {
    await apply(tenantCluster(tenant, alphaSpec({}, false)));
    await waitFor(
      async () =>
        (await read<KubernetesObject & { spec: Loose }>("v1", "Service", "k3s", `tp-${tenant}`))?.spec.type ===
        "ClusterIP",
      {
        timeoutMs: 60_000,
        description: "API Service back to ClusterIP",
      },
    );
    const tc = await waitFor(
      async () => {
        const t = await readTc(tenant);
        return t && t.status?.externalEndpoint === undefined ? t : undefined;
      },
      { timeoutMs: 60_000, description: "externalEndpoint released" },
    );
    expect(tc?.status?.endpoint).toBe(`https://k3s.tp-${tenant}.svc:6443`);
    const secret = await waitFor(
      async () => {
        const s = await read<V1Secret>("v1", "Secret", `${tenant}-kubeconfig`, `tp-${tenant}`);
        const kc = s ? Buffer.from(s.data!.kubeconfig!, "base64").toString("utf8") : "";
        return kc.includes(`server: https://k3s.tp-${tenant}.svc:6443`) ? s : undefined;
      },
      { timeoutMs: 60_000, description: "kubeconfig points at the in-cluster endpoint" },
    );
    expect(secret).toBeDefined();
    await waitForEvent(
      tenant,
      (e) =>
        e.reason === "UpdateSecret" &&
        (e.message ?? "").includes(`admin kubeconfig for https://k3s.tp-${tenant}.svc:6443`),
      "kubeconfig update explained",
    );
  });
});

describe("self-healing", () => {
  it("an isolation object someone deleted is put back", async () => {
    const quota = await read("v1", "ResourceQuota", "tenantplane-quota", "tp-alpha");
    expect(quota).toBeDefined();
    await objects.delete({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "tenantplane-quota", namespace: "tp-alpha" },
    });
    // Nothing about the TenantCluster changes; at the latest the watcher's periodic
    // resync (30 s here) brings a pass that re-applies the profile.
    const restored = await waitFor(
      async () => {
        const q = await read("v1", "ResourceQuota", "tenantplane-quota", "tp-alpha");
        return q && q.metadata?.uid !== quota?.metadata?.uid ? q : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1000, description: "quota restored by resync" },
    );
    expect(restored.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("tenantplane");
  });
});

describe("bad input", () => {
  it("waits for a missing profile with a Warning, and proceeds as soon as it appears", async () => {
    await apply(tenantCluster("beta", { isolationProfileRef: { name: "late" } }));
    const c = await waitForCondition("beta", "IsolationApplied", "False", "ProfileNotFound");
    expect(c.message).toContain("spec.isolationProfileRef.name");
    const warning = await waitForEvent("beta", (e) => e.reason === "ProfileNotFound", "ProfileNotFound warning");
    expect(warning.type).toBe("Warning");

    const profile = example("isolationprofile.yaml");
    profile.metadata = { name: "late" };
    await apply(profile);
    await waitForCondition("beta", "IsolationApplied", "True");
    expect(await read("networking.k8s.io/v1", "NetworkPolicy", "tenantplane-default-deny", "tp-beta")).toBeDefined();
  });

  it("refuses to run on a damaged PKI Secret, naming the key, instead of silently replacing it", async () => {
    await apply(tenantCluster("zeta", {}));
    await waitFor(() => read<V1Secret>("v1", "Secret", "zeta-pki", "tp-zeta"), {
      timeoutMs: 60_000,
      description: "zeta PKI",
    });
    await objects.patch(
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "zeta-pki", namespace: "tp-zeta" },
        data: { "server-ca.key": null },
      } as unknown as KubernetesObject,
      undefined,
      undefined,
      "e2e",
      undefined,
      PatchStrategy.MergePatch,
    );
    const c = await waitForCondition("zeta", "ControlPlaneReady", "False", "InvalidPkiSecret");
    expect(c.message).toContain("server-ca.key");
    expect((await readTc("zeta"))?.status?.phase).toBe("Failed");
    const warning = await waitForEvent("zeta", (e) => e.reason === "InvalidPkiSecret", "InvalidPkiSecret warning");
    expect(warning.type).toBe("Warning");
    expect((await read<V1Secret>("v1", "Secret", "zeta-pki", "tp-zeta"))?.data?.["server-ca.key"]).toBeUndefined();
  });

  it("deleting a TenantCluster removes everything and then the finalizer", async () => {
    const before = await readTc("beta");
    expect(before?.metadata?.finalizers).toContain("tenantplane.io/teardown");
    await objects.delete({ apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name: "beta" } });
    await waitFor(async () => (await readTc("beta")) === undefined, {
      timeoutMs: 120_000,
      description: "TenantCluster gone",
    });
    expect(await read("v1", "Namespace", "tp-beta")).toBeUndefined();
  });
});

describe("resilience", () => {
  it("the standby watcher takes over when the leader dies", async () => {
    const lease = await waitFor(
      async () =>
        (
          await read<KubernetesObject & { spec: { holderIdentity?: string } }>(
            "coordination.k8s.io/v1",
            "Lease",
            "tenantplane-watcher",
            "tenantplane-system",
          )
        )?.spec.holderIdentity || undefined,
      { description: "a watcher leads" },
    );
    const leader = watchers.find((w) => w.name === lease)!;
    const standby = watchers.find((w) => w.name !== lease)!;
    await leader.kill();
    await waitFor(
      async () =>
        (
          await read<KubernetesObject & { spec: { holderIdentity?: string } }>(
            "coordination.k8s.io/v1",
            "Lease",
            "tenantplane-watcher",
            "tenantplane-system",
          )
        )?.spec.holderIdentity === standby.name,
      { timeoutMs: 30_000, description: "standby holds the lease" },
    );
    await apply(tenantCluster("gamma", {}));
    await waitForCondition("gamma", "IsolationApplied", "True");
    expect(await read("v1", "Namespace", "tp-gamma")).toBeDefined();
  });

  it("services reconnect after NATS restarts mid-flow and the tenant still converges", async () => {
    await apply(tenantCluster("delta", {}));
    await nats.restart();
    await waitForCondition("delta", "IsolationApplied", "True", undefined, 120_000);
    // In-cluster Service DNS does not resolve from the test process, so the provisioner
    // gets as far as probing the API: everything before that step was done.
    await waitForCondition("delta", "ControlPlaneReady", "False", "ApiServerUnreachable", 120_000);
    expect(await read("apps/v1", "StatefulSet", "k3s", "tp-delta")).toBeDefined();
    for (const svc of [services.provisioner!, services.isolation!, services.recorder!]) {
      await waitFor(async () => (await svc.probe("/readyz")).status === 200, {
        description: `${svc.name} ready again`,
      });
    }
  });

  it("a provisioner killed mid-reconcile is replaced by one that converges without duplicates", async () => {
    await apply(tenantCluster("epsilon", { controlPlane: { expose: { loadBalancer: { enabled: true } } } }));
    const pki = await waitFor(() => read<V1Secret>("v1", "Secret", "epsilon-pki", "tp-epsilon"), {
      timeoutMs: 60_000,
      description: "PKI created",
    });
    await services.provisioner!.kill();
    services.provisioner = await fleet.start("provisioner");
    await setLoadBalancerIngress(host.kubeConfig, "tp-epsilon", "k3s", "127.0.0.12");
    await startTenantApiFor("epsilon", "127.0.0.12");
    await waitForCondition("epsilon", "ControlPlaneReady", "True", undefined, 120_000);
    // The PKI was generated once: the restarted provisioner reused it.
    const after = await read<V1Secret>("v1", "Secret", "epsilon-pki", "tp-epsilon");
    expect(after?.metadata?.uid).toBe(pki.metadata?.uid);
    expect(after?.metadata?.resourceVersion).toBe(pki.metadata?.resourceVersion);
    const sets = await objects.list("apps/v1", "StatefulSet", "tp-epsilon");
    expect(sets.items).toHaveLength(1);
    const secrets = await objects.list("v1", "Secret", "tp-epsilon");
    expect(secrets.items.map((s) => s.metadata?.name).sort()).toEqual(["epsilon-kubeconfig", "epsilon-pki"]);
  });

  it("a provisioner that starts passes every tenant once, so what changed while it was down is mended with no message", async () => {
    // No watcher runs, so no tenant change reaches NATS: only the start-up pass can look.
    await Promise.all(
      watchers
        .splice(0)
        .filter((w) => w.process.running())
        .map((w) => w.kill()),
    );
    await services.provisioner!.kill();
    const before = await read<V1ConfigMap>("v1", "ConfigMap", "tenant-dns", "tp-epsilon");
    expect(before?.metadata?.uid).toBeDefined();
    await core.deleteNamespacedConfigMap({ name: "tenant-dns", namespace: "tp-epsilon" });
    const js = await jetstreamManager(nc);
    const delivered = (await js.consumers.info("TENANTS", "provisioner")).delivered.stream_seq;
    services.provisioner = await fleet.start("provisioner");
    const mended = await waitFor(
      async () => {
        const cm = await read<V1ConfigMap>("v1", "ConfigMap", "tenant-dns", "tp-epsilon");
        return cm && cm.metadata?.uid !== before?.metadata?.uid ? cm : undefined;
      },
      { timeoutMs: 60_000, description: "tenant-dns ConfigMap made again by the restarted provisioner" },
    );
    expect(mended.data).toEqual(before?.data);
    expect((await js.consumers.info("TENANTS", "provisioner")).delivered.stream_seq).toBe(delivered);
    watchers.push(...(await Promise.all([fleet.start("watcher"), fleet.start("watcher")])));
  });
});

describe("shutdown", () => {
  it("every service drains and exits 0 on SIGTERM", async () => {
    const running = [...watchers, services.provisioner!, services.isolation!, services.recorder!].filter((s) =>
      s.process.running(),
    );
    expect(running.length).toBeGreaterThanOrEqual(4);
    await Promise.all(running.map((s) => s.stop()));
    expect(await Promise.all(running.map((s) => s.process.exited))).toEqual(running.map(() => 0));
  });
});
