import {
  AuthenticationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  VersionApi,
  type KubernetesObject,
  type V1Pod,
  type V1Secret,
  type V1StatefulSet,
} from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import YAML from "yaml";
import { X509Certificate, createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  type RunningService,
  installCrds,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type TenantApiServer,
} from "../harness/index.js";

// The control plane never runs before isolation, is admitted under every Pod Security level,
// says which profile rule blocks it, renews its admin credential and recovers from a new PKI.

const failures = trackFailures();
let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let provisioner: RunningService;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
const tenantApis: TenantApiServer[] = [];

type Tc = KubernetesObject & {
  status?: {
    phase?: string;
    kubeconfigExpiresAt?: string;
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };
};

async function apply(obj: KubernetesObject): Promise<KubernetesObject> {
  return objects.patch(obj, undefined, undefined, "e2e", true, PatchStrategy.ServerSideApply);
}

async function read<T extends KubernetesObject>(apiVersion: string, kind: string, name: string, namespace?: string) {
  try {
    return (await objects.read({ apiVersion, kind, metadata: { name, namespace } })) as T;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

const readTc = (name: string) => read<Tc>("tenantplane.io/v1alpha1", "TenantCluster", name);
const condition = (tc: Tc | undefined, type: string) => tc?.status?.conditions?.find((c) => c.type === type);

async function createTenant(name: string, spec: Record<string, unknown>): Promise<void> {
  await apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name },
    spec,
  } as KubernetesObject);
}

async function profile(name: string, spec: Record<string, unknown>): Promise<void> {
  await apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "IsolationProfile",
    metadata: { name },
    spec,
  } as KubernetesObject);
}

async function waitForCondition(tenant: string, type: string, status: string, reason?: string, timeoutMs = 90_000) {
  return waitFor(
    async () => {
      const c = condition(await readTc(tenant), type);
      return c && c.status === status && (!reason || c.reason === reason) ? c : undefined;
    },
    { timeoutMs, intervalMs: 500, description: `${tenant} ${type}=${status}${reason ? ` (${reason})` : ""}` },
  );
}

async function waitForWarning(tenant: string, reason: string, text: string) {
  return waitFor(
    async () => {
      const list = await core.listEventForAllNamespaces({
        fieldSelector: `involvedObject.kind=TenantCluster,involvedObject.name=${tenant}`,
      });
      return list.items.find((e) => e.type === "Warning" && e.reason === reason && (e.message ?? "").includes(text));
    },
    { timeoutMs: 60_000, intervalMs: 500, description: `${tenant} Warning ${reason} mentioning ${text}` },
  );
}

// Tenants whose API never answers here are polled for as long as they exist; each test removes
// its own when done so the provisioner's attention stays on the tests that follow.
async function deleteTenants(...names: string[]): Promise<void> {
  for (const name of names) {
    await objects.delete({ apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name } });
  }
}

const readSts = (tenant: string) =>
  read<V1StatefulSet & KubernetesObject>("apps/v1", "StatefulSet", "k3s", `tp-${tenant}`);
const readPod = (tenant: string) => read<V1Pod & KubernetesObject>("v1", "Pod", "k3s-0", `tp-${tenant}`);

// The StatefulSet's current revision runs and is ready: its pod was admitted by Pod Security,
// quota and LimitRange, and kwok started it.
async function waitForControlPlanePod(tenant: string, description: string): Promise<V1Pod> {
  return waitFor(
    async () => {
      const sts = await readSts(tenant);
      const pod = await readPod(tenant);
      const current =
        sts?.status?.updateRevision !== undefined &&
        pod?.metadata?.labels?.["controller-revision-hash"] === sts.status.updateRevision;
      return current && (sts?.status?.readyReplicas ?? 0) >= 1 && pod?.status?.phase === "Running" ? pod : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500, description: `${tenant}: ${description}` },
  );
}

async function kubeconfigOf(tenant: string): Promise<string> {
  const secret = await read<V1Secret & KubernetesObject>("v1", "Secret", `${tenant}-kubeconfig`, `tp-${tenant}`);
  return Buffer.from(secret?.data?.["kubeconfig"] ?? "", "base64").toString("utf8");
}

function certificateOf(kubeconfig: string): X509Certificate {
  const user = (YAML.parse(kubeconfig) as { users: Array<{ user: Record<string, string> }> }).users[0]!.user;
  return new X509Certificate(Buffer.from(user["client-certificate-data"]!, "base64"));
}

async function versionThrough(kubeconfig: string): Promise<string> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return (await kc.makeApiClient(VersionApi).getCode()).gitVersion;
}

// A one-minute admin certificate, so renewal (after two thirds) happens within the suite.
const startProvisioner = () => fleet.start("provisioner", { ADMIN_CERT_LIFETIME: "60s" });

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "control-plane" }), startNats()]);
  objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "10", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  [, provisioner] = await Promise.all([fleet.start("watcher"), startProvisioner(), fleet.start("isolation")]);
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  for (const api of tenantApis) await api.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("isolation comes first", () => {
  it("a tenant whose profile is missing is locked down, gets no control plane and is not Ready", async () => {
    await createTenant("lock", { isolationProfileRef: { name: "arrives-later" } });

    const isolation = await waitForCondition("lock", "IsolationApplied", "False", "ProfileNotFound");
    expect(isolation.message).toContain("locked down");
    const ns = await read("v1", "Namespace", "tp-lock");
    expect(ns?.metadata?.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    // The labels were there from the namespace's creation, set by the provisioner's create.
    const created = ns?.metadata?.managedFields?.find((f) => f.manager === "tenantplane-provisioner");
    expect(JSON.stringify(created?.fieldsV1)).toContain("f:pod-security.kubernetes.io/enforce");
    const deny = await waitFor(
      () => read("networking.k8s.io/v1", "NetworkPolicy", "tenantplane-default-deny", "tp-lock"),
      { description: "lockdown default-deny" },
    );
    expect(deny.metadata?.annotations?.["tenantplane.io/isolation-profile"]).toBe("(lockdown)");
    expect(await read("networking.k8s.io/v1", "NetworkPolicy", "tenantplane-allow-dns", "tp-lock")).toBeUndefined();

    // The provisioner looks again while it waits, so its message follows the isolation report.
    await waitFor(
      async () => {
        const c = condition(await readTc("lock"), "ControlPlaneReady");
        return c?.reason === "WaitingForIsolation" && c.message.includes("ProfileNotFound");
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "lock waits for isolation, naming ProfileNotFound" },
    );
    expect((await readTc("lock"))?.status?.phase).toBe("Provisioning");
    expect(await readSts("lock")).toBeUndefined();
    expect((await core.listNamespacedPod({ namespace: "tp-lock" })).items).toEqual([]);

    await profile("arrives-later", {
      podSecurity: { enforce: "restricted", audit: "restricted", warn: "restricted" },
    });
    await waitForCondition("lock", "IsolationApplied", "True");
    const pod = await waitForControlPlanePod("lock", "control plane admitted under restricted");
    expect(pod.spec?.securityContext?.runAsNonRoot).toBe(true);
    await waitForCondition("lock", "ControlPlaneReady", "False", "ApiServerUnreachable");
    await deleteTenants("lock");
  });
});

describe("the control plane is admitted under every Pod Security level", () => {
  const levels = ["restricted", "baseline", "privileged"] as const;
  const addresses: Record<string, string> = {
    restricted: "127.0.0.121",
    baseline: "127.0.0.122",
    privileged: "127.0.0.123",
  };

  it.each(levels)("%s, without a load balancer and with one whose address it waits for", async (level) => {
    await profile(`psa-${level}`, { podSecurity: { enforce: level, audit: level, warn: level } });
    const plain = `${level.slice(0, 4)}-plain`;
    const exposed = `${level.slice(0, 4)}-lb`;
    await createTenant(plain, { isolationProfileRef: { name: `psa-${level}` } });
    await createTenant(exposed, {
      isolationProfileRef: { name: `psa-${level}` },
      controlPlane: { expose: { loadBalancer: { enabled: true } } },
    });

    await waitForControlPlanePod(plain, `control plane admitted under ${level}`);
    await waitForCondition(plain, "ControlPlaneReady", "False", "ApiServerUnreachable");
    expect(
      (await read("v1", "Namespace", `tp-${plain}`))?.metadata?.labels?.["pod-security.kubernetes.io/enforce"],
    ).toBe(level);

    // The exposed control plane waits for its address, so the certificate names it from the start.
    await waitForCondition(exposed, "ControlPlaneReady", "False", "WaitingForLoadBalancer");
    expect(await readSts(exposed)).toBeUndefined();
    await setLoadBalancerIngress(host.kubeConfig, `tp-${exposed}`, "k3s", addresses[level]!);
    const pod = await waitForControlPlanePod(exposed, `control plane admitted under ${level} with its address`);
    expect(pod.spec?.containers[0]?.args).toContain(`--tls-san=${addresses[level]}`);
    expect((await readSts(exposed))?.metadata?.generation).toBe(1);
    await waitForCondition(exposed, "ControlPlaneReady", "False", "ApiServerUnreachable");
    await deleteTenants(plain, exposed);
  });
});

describe("a profile that would refuse the control plane", () => {
  it.each([
    [
      "no-cpu-limit",
      {
        resourceQuota: { hard: { "limits.cpu": "4" } },
        limitRange: { container: { default: { memory: "512Mi" }, defaultRequest: {}, max: {} } },
      },
      "resourceQuota.hard[limits.cpu] is set but the control plane's pod has no cpu limit",
    ],
    [
      "tiny-memory",
      {
        resourceQuota: { hard: {} },
        limitRange: { container: { default: {}, defaultRequest: {}, max: { memory: "128Mi" } } },
      },
      "limitRange.container.max[memory]",
    ],
  ])("%s: names the blocking rule and creates no control plane", async (name, spec, rule) => {
    await profile(name, spec);
    await createTenant(name, { isolationProfileRef: { name } });
    const c = await waitForCondition(name, "ControlPlaneReady", "False", "BlockedByIsolationProfile");
    expect(c.message).toContain(rule);
    await waitForWarning(name, "BlockedByIsolationProfile", rule);
    expect((await readTc(name))?.status?.phase).toBe("Failed");
    expect(await readSts(name)).toBeUndefined();
  });
});

describe("the quota is the tenant's: tenantplane's own pods, volume and objects come on top", () => {
  it("leaves the profile's numbers untouched by a running control plane, and still refuses the tenant's excess", async () => {
    // Every number the tenant may use is zero or next to it: any object of tenantplane's that the
    // share leaves out would be refused, and the control plane would never run.
    const hard = {
      pods: "0",
      "requests.cpu": "0",
      "requests.memory": "0",
      "limits.cpu": "0",
      "limits.memory": "0",
      persistentvolumeclaims: "0",
      "requests.storage": "0",
      services: "0",
      secrets: "0",
      configmaps: "0",
      "count/deployments.apps": "0",
      "count/statefulsets.apps": "0",
    };
    await profile("all-for-tenantplane", { resourceQuota: { hard } });
    await createTenant("quota", { isolationProfileRef: { name: "all-for-tenantplane" } });
    await waitForControlPlanePod("quota", "control plane admitted under a quota of zero for the tenant");
    type Quota = KubernetesObject & {
      spec: { hard: Record<string, string> };
      status?: { hard?: Record<string, string>; used?: Record<string, string> };
    };
    // Counted by the host's quota controller once the DNS pod runs beside k3s.
    const quota = await waitFor(
      async () => {
        const q = await read<Quota>("v1", "ResourceQuota", "tenantplane-quota", "tp-quota");
        const dns = await core.listNamespacedPod({
          namespace: "tp-quota",
          labelSelector: "tenantplane.io/dns-of=quota",
        });
        if (q?.status?.used?.["pods"] === "2" && dns.items.length === 1) return q;
        // Thrown, so a timeout quotes what was there instead of "undefined".
        const pods = await core.listNamespacedPod({ namespace: "tp-quota" });
        const warnings = (await core.listNamespacedEvent({ namespace: "tp-quota" })).items.filter(
          (e) => e.type === "Warning",
        );
        throw new Error(
          `quota ${q ? `used ${JSON.stringify(q.status?.used)} hard ${JSON.stringify(q.status?.hard)}` : "missing"}; ` +
            `pods ${JSON.stringify(pods.items.map((p) => `${p.metadata?.name} ${p.status?.phase}`))}; ` +
            `warnings ${JSON.stringify(warnings.slice(-5).map((e) => `${e.involvedObject.name} ${e.reason}: ${e.message}`))}`,
        );
      },
      { timeoutMs: 90_000, intervalMs: 500, description: "tp-quota counting the k3s and DNS pods" },
    );
    const share = JSON.parse(quota.metadata?.annotations?.["tenantplane.io/control-plane-share"] ?? "{}") as Record<
      string,
      string
    >;
    const value = (q: string | undefined) => {
      const m = /^(\d+)(m|Mi|Gi)?$/.exec(q ?? "");
      if (!m) throw new Error(`unexpected quantity ${q}`);
      return Number(m[1]) * ({ m: 0.001, Mi: 2 ** 20, Gi: 2 ** 30 }[m[2] ?? ""] ?? 1);
    };
    for (const key of Object.keys(hard)) {
      // The host enforces exactly the profile's number plus tenantplane's share...
      expect(value(quota.status?.hard?.[key]), `hard ${key}`).toBe(value(share[key]));
      // ...and what tenantplane runs uses no more than that share: the tenant's part is all its own.
      expect(value(quota.status?.used?.[key]), `used ${key}`).toBeLessThanOrEqual(value(share[key]));
    }
    // The pods and their resources are counted to the last unit: the share is not a guess.
    for (const key of ["pods", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"]) {
      expect(quota.status?.used?.[key], `used ${key}`).toBe(quota.status?.hard?.[key]);
    }
    expect(quota.status?.used?.["requests.storage"]).toBe("5Gi");

    // The tenant's own Pod (as the sync worker would copy it) is refused, and the refusal names the numbers.
    const refused = await core
      .createNamespacedPod({
        namespace: "tp-quota",
        body: { metadata: { name: "tenant-pod" }, spec: { containers: [{ name: "c", image: "nginx:1.27" }] } },
      })
      .then(
        () => "admitted",
        (err: unknown) => String((err as { body?: string }).body ?? err),
      );
    expect(refused).toMatch(
      /exceeded quota: tenantplane-quota, requested: .*pods=1.*used: .*pods=2.*limited: .*pods=2/,
    );
    await deleteTenants("quota");
  });
});

describe("what tenantplane stops asking for", () => {
  it("disappears from the cluster: a load-balancer annotation, a limit, the load balancer itself", async () => {
    const spec = (annotations: Record<string, string>, limits: Record<string, string>, enabled = true) => ({
      controlPlane: {
        resources: Object.keys(limits).length > 0 ? { limits } : {},
        expose: { loadBalancer: { enabled, annotations } },
      },
    });
    await createTenant("tau", spec({ "lb.example.com/a": "1", "lb.example.com/b": "2" }, { memory: "1Gi" }));
    // The exposed control plane is created once its load balancer has an address.
    await setLoadBalancerIngress(host.kubeConfig, "tp-tau", "k3s", "127.0.0.69");
    await waitFor(
      async () => (await readSts("tau"))?.spec?.template.spec?.containers[0]?.resources?.limits?.["memory"] === "1Gi",
      { timeoutMs: 60_000, intervalMs: 500, description: "tau StatefulSet with its memory limit" },
    );
    // Created with one write each: the create's own entry stays until an apply has something
    // to change, so an object that never changes never costs a second write.
    const dns = await waitFor(() => read("apps/v1", "Deployment", "tenant-dns", "tp-tau"), {
      timeoutMs: 30_000,
      description: "tau's DNS Deployment",
    });
    const operations = (obj: KubernetesObject | undefined) =>
      (obj?.metadata?.managedFields ?? [])
        .filter((f) => f.manager === "tenantplane-provisioner" && !f.subresource)
        .map((f) => f.operation);
    expect(operations(dns)).toEqual(["Update"]);
    expect(operations(await read("v1", "Service", "k3s", "tp-tau"))).toEqual(["Update"]);

    // The spec drops an annotation and a limit, and the provisioner restarts meanwhile: its
    // next pass hands the fields over before applying, so what it stops sending disappears.
    await provisioner.stop();
    await createTenant("tau", spec({ "lb.example.com/a": "1" }, {}));
    provisioner = await startProvisioner();
    await waitFor(
      async () => {
        const svc = await read("v1", "Service", "k3s", "tp-tau");
        const sts = await readSts("tau");
        return (
          svc?.metadata?.annotations?.["lb.example.com/b"] === undefined &&
          svc?.metadata?.annotations?.["lb.example.com/a"] === "1" &&
          sts?.spec?.template.spec?.containers[0]?.resources?.limits === undefined
        );
      },
      { timeoutMs: 60_000, intervalMs: 500, description: "the dropped annotation and limit removed" },
    );
    expect(operations(await read("v1", "Service", "k3s", "tp-tau"))).toEqual(["Apply"]);

    await createTenant("tau", spec({}, {}, false));
    await waitFor(
      async () => {
        const svc = await read<KubernetesObject & { spec?: { type?: string } }>("v1", "Service", "k3s", "tp-tau");
        // tenantplane's own bookkeeping annotations (the applied hash) stay; the spec's are gone.
        const foreign = Object.keys(svc?.metadata?.annotations ?? {}).filter((k) => !k.startsWith("tenantplane.io/"));
        return svc?.spec?.type === "ClusterIP" && foreign.length === 0;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        description: "a plain ClusterIP Service without load-balancer annotations",
      },
    );
    await deleteTenants("tau");
  });
});

describe("the admin kubeconfig", () => {
  let rho: TenantApiServer;

  it("is renewed after two thirds of its lifetime, and its expiry is in the status", async () => {
    await createTenant("rho", { controlPlane: { expose: { loadBalancer: { enabled: true } } } });
    await setLoadBalancerIngress(host.kubeConfig, "tp-rho", "k3s", "127.0.0.130");
    rho = await startTenantStandIn(host.kubeConfig, "rho", "127.0.0.130");
    tenantApis.push(rho);
    await waitForCondition("rho", "ControlPlaneReady", "True", undefined, 120_000);

    const first = await kubeconfigOf("rho");
    const firstExpiry = (await readTc("rho"))?.status?.kubeconfigExpiresAt;
    expect(firstExpiry).toBeDefined();
    expect(new Date(firstExpiry!).getTime()).toBe(new Date(certificateOf(first).validTo).getTime());
    expect(new Date(firstExpiry!).getTime() - Date.now()).toBeLessThanOrEqual(60_000);

    const renewed = await waitFor(
      async () => {
        const expiry = (await readTc("rho"))?.status?.kubeconfigExpiresAt;
        return expiry && expiry !== firstExpiry ? expiry : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1_000, description: "kubeconfigExpiresAt to move on" },
    );
    // Renewed before the old one expired, and the new credential works.
    expect(Date.now()).toBeLessThan(new Date(firstExpiry!).getTime());
    const second = await kubeconfigOf("rho");
    expect(second).not.toBe(first);
    expect(new Date(certificateOf(second).validTo).getTime()).toBe(new Date(renewed).getTime());
    expect(await versionThrough(second)).toMatch(/^v1\.34\./);
  });
});

describe("a Ready tenant whose profile disappears", () => {
  it("is locked down and leaves Ready at once, and returns when the profile is back", async () => {
    await profile("rho-profile", {});
    await createTenant("rho", {
      isolationProfileRef: { name: "rho-profile" },
      controlPlane: { expose: { loadBalancer: { enabled: true } } },
    });
    const phase = async () => (await readTc("rho"))?.status?.phase;
    await waitFor(async () => (await phase()) === "Ready", {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: "rho Ready with its profile",
    });

    await objects.delete({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "IsolationProfile",
      metadata: { name: "rho-profile" },
    });
    await waitForCondition("rho", "IsolationApplied", "False", "ProfileNotFound");
    // The isolation service announces its change, so the phase follows within a pass, not a resync.
    await waitFor(async () => (await phase()) === "Provisioning", {
      timeoutMs: 5_000,
      intervalMs: 200,
      description: "rho's phase to leave Ready",
    });
    expect(condition(await readTc("rho"), "ControlPlaneReady")?.status).toBe("True");
    expect((await read("v1", "Namespace", "tp-rho"))?.metadata?.labels?.["pod-security.kubernetes.io/enforce"]).toBe(
      "restricted",
    );

    await profile("rho-profile", {});
    await waitFor(async () => (await phase()) === "Ready", {
      timeoutMs: 30_000,
      intervalMs: 500,
      description: "rho Ready again once the profile is back",
    });
  });
});

describe("PKI recovery", () => {
  it("deleting the PKI Secret issues a new PKI, re-signs the kubeconfig and rolls the control plane", async () => {
    await createTenant("sigma", { controlPlane: { expose: { loadBalancer: { enabled: true } } } });
    await setLoadBalancerIngress(host.kubeConfig, "tp-sigma", "k3s", "127.0.0.131");
    const old = await startTenantStandIn(host.kubeConfig, "sigma", "127.0.0.131");
    tenantApis.push(old);
    await waitForCondition("sigma", "ControlPlaneReady", "True", undefined, 120_000);
    const pki = await read<V1Secret & KubernetesObject>("v1", "Secret", "sigma-pki", "tp-sigma");
    const rolledFrom = (await readSts("sigma"))?.spec?.template.metadata?.annotations?.[
      "tenantplane.io/pki-fingerprint"
    ];
    expect(rolledFrom).toBeDefined();

    await core.deleteNamespacedSecret({ name: "sigma-pki", namespace: "tp-sigma" });

    const fresh = await waitFor(
      async () => {
        const s = await read<V1Secret & KubernetesObject>("v1", "Secret", "sigma-pki", "tp-sigma");
        return s && s.metadata?.uid !== pki?.metadata?.uid ? s : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, description: "a new PKI Secret" },
    );
    const newServerCa = Buffer.from(fresh.data!["server-ca.crt"]!, "base64").toString("utf8");
    await waitFor(
      async () =>
        (await readSts("sigma"))?.spec?.template.metadata?.annotations?.["tenantplane.io/pki-fingerprint"] !==
        rolledFrom,
      { timeoutMs: 60_000, intervalMs: 500, description: "the pod template to carry the new PKI's fingerprint" },
    );
    const kubeconfig = await waitFor(
      async () => {
        const kc = await kubeconfigOf("sigma");
        const ca = (YAML.parse(kc) as { clusters: Array<{ cluster: Record<string, string> }> }).clusters[0]!.cluster[
          "certificate-authority-data"
        ]!;
        return Buffer.from(ca, "base64").toString("utf8") === newServerCa ? kc : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, description: "the kubeconfig to trust the new server CA" },
    );
    const clientCa = new X509Certificate(Buffer.from(fresh.data!["client-ca.crt"]!, "base64"));
    expect(certificateOf(kubeconfig).checkIssued(clientCa)).toBe(true);

    // The control plane restarts on the new CAs (the stand-in plays k3s's init container).
    await old.stop();
    tenantApis.push(await startTenantStandIn(host.kubeConfig, "sigma", "127.0.0.131"));
    await waitForCondition("sigma", "ControlPlaneReady", "True", undefined, 120_000);
    expect(await versionThrough(await kubeconfigOf("sigma"))).toMatch(/^v1\.34\./);
  });
});

describe("Private mode", () => {
  const args = async (tenant: string) =>
    (await readSts(tenant))?.spec?.template.spec?.containers.find((c) => c.name === "k3s")?.args ?? [];
  const joinSecretOf = (tenant: string) =>
    read<V1Secret & KubernetesObject>("v1", "Secret", `${tenant}-join`, `tp-${tenant}`);
  const text = (secret: V1Secret | undefined, key: string) =>
    Buffer.from(secret?.data?.[key] ?? "", "base64").toString("utf8");
  const spec = (mode: string) => ({
    controlPlane: { expose: { loadBalancer: { enabled: true } } },
    isolation: { mode },
  });

  it("runs the tenant's scheduler and issues a join credential the tenant API accepts; back to Shared, both are gone", async () => {
    await createTenant("tau", spec("Shared"));
    await setLoadBalancerIngress(host.kubeConfig, "tp-tau", "k3s", "127.0.0.132");
    tenantApis.push(await startTenantStandIn(host.kubeConfig, "tau", "127.0.0.132"));
    await waitForCondition("tau", "ControlPlaneReady", "True", undefined, 120_000);
    expect(await args("tau")).toContain("--disable-scheduler");
    const claim = await read<KubernetesObject>("v1", "PersistentVolumeClaim", "data-k3s-0", "tp-tau");
    expect(claim?.metadata?.uid).toBeDefined();
    const claimTemplates = (await readSts("tau"))?.spec?.volumeClaimTemplates;
    expect(await joinSecretOf("tau")).toBeUndefined();

    await createTenant("tau", spec("Private"));
    await waitFor(async () => !(await args("tau")).includes("--disable-scheduler"), {
      timeoutMs: 30_000,
      intervalMs: 500,
      description: "tau's k3s args without --disable-scheduler",
    });
    expect(await args("tau")).toContain("--disable-agent");
    // Only the args changed: the same claim template and the same claim hold the datastore.
    expect((await readSts("tau"))?.spec?.volumeClaimTemplates).toEqual(claimTemplates);
    await waitForControlPlanePod("tau", "the control plane rolled to Private's args");

    const secret = await waitFor(() => joinSecretOf("tau"), {
      timeoutMs: 90_000,
      intervalMs: 500,
      description: "host Secret tp-tau/tau-join",
    });
    expect(secret.metadata?.labels).toMatchObject({
      "app.kubernetes.io/managed-by": "tenantplane",
      "tenantplane.io/tenant": "tau",
    });
    const pki = await read<V1Secret & KubernetesObject>("v1", "Secret", "tau-pki", "tp-tau");
    const serverCa = text(pki, "server-ca.crt");
    expect(text(secret, "ca.crt")).toBe(serverCa);
    expect(text(secret, "server")).toBe("https://127.0.0.132:6443");
    const hash = createHash("sha256").update(serverCa).digest("hex");
    const match = /^K10([0-9a-f]{64})::([a-z0-9]{6})\.([a-z0-9]{16})$/.exec(text(secret, "token"));
    expect(match?.[1]).toBe(hash);
    const [, , id, tokenSecret] = match!;

    const tenantCore = tenantClient(await kubeconfigOf("tau")).makeApiClient(CoreV1Api);
    const token = await waitFor(
      () => tenantCore.readNamespacedSecret({ name: `bootstrap-token-${id}`, namespace: "kube-system" }),
      { timeoutMs: 30_000, intervalMs: 500, description: `bootstrap-token-${id} in tau's API` },
    );
    expect(token.type).toBe("bootstrap.kubernetes.io/token");
    expect(text(token, "token-secret")).toBe(tokenSecret);
    expect(text(token, "auth-extra-groups")).toBe("system:bootstrappers:k3s:default-node-token");
    expect(new Date(text(token, "expiration")).getTime() - Date.now()).toBeGreaterThan(6.9 * 24 * 3600_000);
    // The tenant API authenticates a joining node by it, in k3s's node group.
    const nodeKc = new KubeConfig();
    nodeKc.loadFromOptions({
      clusters: [{ name: "tau", server: "https://127.0.0.132:6443", caData: Buffer.from(serverCa).toString("base64") }],
      users: [{ name: "node", token: `${id}.${tokenSecret}` }],
      contexts: [{ name: "tau", cluster: "tau", user: "node" }],
      currentContext: "tau",
    });
    const review = await nodeKc
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview({ body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } });
    expect(review.status?.userInfo?.username).toBe(`system:bootstrap:${id}`);
    expect(review.status?.userInfo?.groups).toContain("system:bootstrappers:k3s:default-node-token");

    await createTenant("tau", spec("Shared"));
    await waitFor(async () => (await args("tau")).includes("--disable-scheduler"), {
      timeoutMs: 30_000,
      intervalMs: 500,
      description: "tau's k3s args with --disable-scheduler again",
    });
    await waitForControlPlanePod("tau", "the control plane rolled back to Shared's args");
    await waitFor(async () => (await joinSecretOf("tau")) === undefined, {
      timeoutMs: 90_000,
      intervalMs: 500,
      description: "host Secret tp-tau/tau-join to be deleted",
    });
    const left = await tenantCore.listNamespacedSecret({
      namespace: "kube-system",
      fieldSelector: "type=bootstrap.kubernetes.io/token",
    });
    expect(left.items.map((s) => s.metadata?.name)).toEqual([]);
    // The datastore's claim outlived both rollouts.
    const after = await read<KubernetesObject>("v1", "PersistentVolumeClaim", "data-k3s-0", "tp-tau");
    expect(after?.metadata?.uid).toBe(claim?.metadata?.uid);
    await deleteTenants("tau");
  });
});

function tenantClient(kubeconfig: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return kc;
}
