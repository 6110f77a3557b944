import { CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  startHostCluster,
  startNats,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type RunningService,
} from "../harness/index.js";

// tenantplane creates and deletes only what it created: every collision below must end in
// NameHeldByForeignObject, a Warning naming the object, no write to it, and a teardown that
// leaves it exactly as it was.

const failures = trackFailures();
let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
let provisioner: RunningService;
let isolation: RunningService;

type Tc = KubernetesObject & {
  status?: { phase?: string; conditions?: Array<{ type: string; status: string; reason: string; message: string }> };
};
const MANAGED = { "app.kubernetes.io/managed-by": "tenantplane" };

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

const apiVersionOf = (kind: string) =>
  kind === "StatefulSet" ? "apps/v1" : kind === "NetworkPolicy" ? "networking.k8s.io/v1" : "v1";
const readTc = (name: string) => read<Tc>("tenantplane.io/v1alpha1", "TenantCluster", name);

async function createTenant(name: string, spec: Record<string, unknown> = {}): Promise<string> {
  const tc = await apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name },
    spec,
  } as KubernetesObject);
  return tc.metadata!.uid!;
}

async function waitForCondition(tenant: string, type: string, status: string, reason: string) {
  return waitFor(
    async () => {
      const c = (await readTc(tenant))?.status?.conditions?.find((x) => x.type === type);
      return c && c.status === status && c.reason === reason ? c : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500, description: `${tenant} ${type}=${status} (${reason})` },
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

async function deleteTenantAndWait(name: string): Promise<void> {
  await objects.delete({ apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name } });
  await waitFor(async () => (await readTc(name)) === undefined, {
    timeoutMs: 90_000,
    intervalMs: 500,
    description: `TenantCluster ${name} gone`,
  });
}

// What "left exactly as it was" means for an object: same uid, same labels and annotations,
// and (for objects nothing else updates) the same resourceVersion.
function fingerprint(o: KubernetesObject | undefined, withVersion = true) {
  return o === undefined
    ? undefined
    : {
        uid: o.metadata?.uid,
        labels: o.metadata?.labels ?? {},
        annotations: o.metadata?.annotations ?? {},
        ...(withVersion ? { resourceVersion: o.metadata?.resourceVersion } : {}),
      };
}

async function createNamespace(name: string, labels?: Record<string, string>, annotations?: Record<string, string>) {
  await core.createNamespace({
    body: { metadata: { name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } },
  });
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "ownership" }), startNats()]);
  objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: {
      RESYNC_INTERVAL_SECONDS: "10",
      LEASE_DURATION_SECONDS: "6",
      POD_NAMESPACE: "tenantplane-system",
      // A binding in every tenant namespace, as the chart makes them, so a kept namespace shows it goes.
      TENANT_ROLE_BINDINGS: "tenantplane-test-tenant=tenantplane-system/provisioner",
    },
  });
  [, provisioner, isolation] = await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
  ]);
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("a namespace tenantplane did not create", () => {
  it("is neither adopted nor deleted, and its content is left alone", async () => {
    await createNamespace("tp-victim");
    const cm = await core.createNamespacedConfigMap({
      namespace: "tp-victim",
      body: { metadata: { name: "precious" }, data: { keep: "me" } },
    });
    const pod = await core.createNamespacedPod({
      namespace: "tp-victim",
      body: {
        metadata: { name: "app", labels: { app: "x" } },
        spec: { containers: [{ name: "c", image: "busybox" }] },
      },
    });
    const before = await read("v1", "Namespace", "tp-victim");

    await createTenant("victim");
    const c = await waitForCondition("victim", "ControlPlaneReady", "False", "NameHeldByForeignObject");
    expect(c.message).toContain("Namespace tp-victim already exists");
    await waitForWarning("victim", "NameHeldByForeignObject", "Namespace tp-victim");
    expect((await readTc("victim"))?.status?.phase).toBe("Failed");
    await waitForCondition("victim", "IsolationApplied", "False", "NameHeldByForeignObject");

    // Not a single write: no labels, no policies, no secrets, no control plane.
    expect(fingerprint(await read("v1", "Namespace", "tp-victim"))).toEqual(fingerprint(before));
    for (const [apiVersion, kind] of [
      ["networking.k8s.io/v1", "NetworkPolicy"],
      ["v1", "ResourceQuota"],
      ["v1", "LimitRange"],
      ["v1", "Secret"],
      ["v1", "Service"],
      ["apps/v1", "StatefulSet"],
    ] as const) {
      expect((await objects.list(apiVersion, kind, "tp-victim")).items, kind).toEqual([]);
    }

    await deleteTenantAndWait("victim");
    expect(fingerprint(await read("v1", "Namespace", "tp-victim"))).toEqual(fingerprint(before));
    expect(fingerprint(await read("v1", "ConfigMap", "precious", "tp-victim"))).toEqual(fingerprint(cm));
    expect(fingerprint(await read("v1", "Pod", "app", "tp-victim"), false)).toEqual(fingerprint(pod, false));
  });

  it("is foreign when it carries tenantplane's labels but an earlier TenantCluster's uid", async () => {
    await createNamespace(
      "tp-heir",
      { ...MANAGED, "tenantplane.io/tenant": "heir" },
      { "tenantplane.io/tenant-uid": "uid-of-an-earlier-tenant" },
    );
    const before = await read("v1", "Namespace", "tp-heir");
    await createTenant("heir");
    const c = await waitForCondition("heir", "ControlPlaneReady", "False", "NameHeldByForeignObject");
    expect(c.message).toContain("earlier TenantCluster");
    await waitForWarning("heir", "NameHeldByForeignObject", "Namespace tp-heir");
    await deleteTenantAndWait("heir");
    expect(fingerprint(await read("v1", "Namespace", "tp-heir"))).toEqual(fingerprint(before));
  });
});

describe("a foreign object in the place of one tenantplane needs", () => {
  // Each tenant's namespace is tenantplane's (labels and the TenantCluster's uid, as if the
  // provisioner had made it), but one name in it is held by an object someone else created.
  // The provisioner is stopped while the scene is set, so it cannot win any race.
  const cases = [
    { tenant: "kappa", kind: "Secret", name: "kappa-pki", condition: "ControlPlaneReady" },
    { tenant: "lam", kind: "Secret", name: "lam-kubeconfig", condition: "ControlPlaneReady" },
    { tenant: "mu", kind: "StatefulSet", name: "k3s", condition: "ControlPlaneReady" },
    { tenant: "nu", kind: "Service", name: "k3s", condition: "ControlPlaneReady" },
    { tenant: "xi", kind: "Service", name: "k3s-headless", condition: "ControlPlaneReady" },
    { tenant: "pi", kind: "NetworkPolicy", name: "tenantplane-default-deny", condition: "IsolationApplied" },
  ] as const;
  const before = new Map<string, KubernetesObject>();

  const foreignObject = (kind: string, name: string, namespace: string): KubernetesObject => {
    const metadata = { name, namespace, labels: { owner: "someone-else" } };
    switch (kind) {
      case "Secret":
        return {
          apiVersion: "v1",
          kind,
          metadata,
          data: { kubeconfig: Buffer.from("theirs").toString("base64") },
        } as KubernetesObject;
      case "Service":
        return {
          apiVersion: "v1",
          kind,
          metadata,
          spec: { selector: { app: "theirs" }, ports: [{ port: 80 }] },
        } as KubernetesObject;
      case "NetworkPolicy":
        return {
          apiVersion: "networking.k8s.io/v1",
          kind,
          metadata,
          spec: { podSelector: { matchLabels: { app: "theirs" } }, policyTypes: ["Ingress"] },
        } as KubernetesObject;
      default:
        return {
          apiVersion: "apps/v1",
          kind,
          metadata,
          spec: {
            replicas: 0,
            serviceName: "theirs",
            selector: { matchLabels: { app: "theirs" } },
            template: {
              metadata: { labels: { app: "theirs" } },
              spec: { containers: [{ name: "c", image: "busybox" }] },
            },
          },
        } as KubernetesObject;
    }
  };

  it("stops the tenant with NameHeldByForeignObject and a Warning naming it, and is never written", async () => {
    await Promise.all([provisioner.stop(), isolation.stop()]);
    for (const { tenant, kind, name } of cases) {
      const uid = await createTenant(tenant);
      await createNamespace(
        `tp-${tenant}`,
        { ...MANAGED, "tenantplane.io/tenant": tenant },
        { "tenantplane.io/tenant-uid": uid },
      );
      await objects.create(foreignObject(kind, name, `tp-${tenant}`));
      before.set(tenant, (await read(apiVersionOf(kind), kind, name, `tp-${tenant}`))!);
    }
    [provisioner, isolation] = await Promise.all([fleet.start("provisioner"), fleet.start("isolation")]);

    for (const { tenant, kind, name, condition } of cases) {
      const c = await waitForCondition(tenant, condition, "False", "NameHeldByForeignObject");
      expect(c.message).toContain(`${kind} ${name} in namespace tp-${tenant} already exists`);
      await waitForWarning(tenant, "NameHeldByForeignObject", `${kind} ${name}`);
      const now = await read(apiVersionOf(kind), kind, name, `tp-${tenant}`);
      // The StatefulSet controller writes a foreign StatefulSet's status; everything else stays put.
      const exact = kind !== "StatefulSet";
      expect(fingerprint(now, exact), `${tenant}: ${kind} ${name}`).toEqual(fingerprint(before.get(tenant), exact));
    }
    // Nothing that comes after the collision was created either.
    expect(await read("apps/v1", "StatefulSet", "k3s", "tp-kappa")).toBeUndefined();
    expect(await read("apps/v1", "StatefulSet", "k3s", "tp-lam")).toBeUndefined();
    const lamPki = await read("v1", "Secret", "lam-pki", "tp-lam");
    expect(lamPki?.metadata?.labels).toMatchObject({ ...MANAGED, "tenantplane.io/tenant": "lam" });
  });

  it("survives the tenant's deletion, while tenantplane's own objects beside it are removed", async () => {
    for (const { tenant } of cases) {
      await waitFor(
        () => read("rbac.authorization.k8s.io/v1", "RoleBinding", "tenantplane-test-tenant", `tp-${tenant}`),
        {
          description: `the services' RoleBinding in tp-${tenant}`,
        },
      );
    }
    for (const { tenant } of cases) {
      await objects.delete({
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "TenantCluster",
        metadata: { name: tenant },
      });
    }
    for (const { tenant, kind, name } of cases) {
      await waitFor(async () => (await readTc(tenant)) === undefined, {
        timeoutMs: 90_000,
        intervalMs: 500,
        description: `TenantCluster ${tenant} gone`,
      });
      const now = await read(apiVersionOf(kind), kind, name, `tp-${tenant}`);
      // The StatefulSet controller writes a foreign StatefulSet's status; everything else stays put.
      const exact = kind !== "StatefulSet";
      expect(fingerprint(now, exact), `${tenant}: ${kind} ${name}`).toEqual(fingerprint(before.get(tenant), exact));
      // The namespace is kept for the foreign object; what tenantplane made in it is gone.
      expect(await read("v1", "Namespace", `tp-${tenant}`)).toBeDefined();
      // The namespace's other managed objects are gone, and so are the services' rights in it.
      for (const [apiVersion, kind] of [
        ["v1", "Secret"],
        ["networking.k8s.io/v1", "NetworkPolicy"],
        ["rbac.authorization.k8s.io/v1", "RoleBinding"],
      ] as const) {
        const left = await objects.list(
          apiVersion,
          kind,
          `tp-${tenant}`,
          undefined,
          undefined,
          undefined,
          undefined,
          "app.kubernetes.io/managed-by=tenantplane",
        );
        expect(
          left.items.map((o) => o.metadata?.name),
          `${kind} in tp-${tenant}`,
        ).toEqual([]);
      }
    }
  });
});

describe("a tenant with nothing in its way", () => {
  it("is created with the uid annotation and its namespace is deleted with it", async () => {
    const uid = await createTenant("omicron");
    const ns = await waitFor(() => read("v1", "Namespace", "tp-omicron"), { description: "tp-omicron" });
    expect(ns.metadata?.annotations?.["tenantplane.io/tenant-uid"]).toBe(uid);
    await waitFor(() => read("v1", "Secret", "omicron-kubeconfig", "tp-omicron"), {
      timeoutMs: 60_000,
      description: "omicron kubeconfig",
    });
    await deleteTenantAndWait("omicron");
    expect(await read("v1", "Namespace", "tp-omicron")).toBeUndefined();
  });
});
