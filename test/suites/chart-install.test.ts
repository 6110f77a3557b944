import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeConfig } from "@kubernetes/client-node";
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  kubeConfigFrom,
  liveProcesses,
  signLeaf,
  startHostCluster,
  toolPath,
  trackFailures,
  waitFor,
  type HostCluster,
  serviceAccountKubeConfig,
} from "../harness/index.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const chartDir = join(repoRoot, "charts/tenantplane");
const release = "tenantplane";
const namespace = "tenantplane-system";
const managed = { "app.kubernetes.io/managed-by": "tenantplane" };
const tp = "tenantplane.io";

/**
 * `helm install` and `helm upgrade` against a real API server: the CRDs the chart renders
 * from templates/ upgrade, and the admission policies guard tenantplane's namespaces.
 */
describe("chart installed by helm", () => {
  let cluster: HostCluster | undefined;
  const failures = trackFailures();
  const work = mkdtempSync(join(tmpdir(), "tenantplane-chart-install-"));
  let installOutput = "";

  async function helm(args: string[]): Promise<string> {
    if (cluster === undefined) throw new Error("host cluster did not start");
    const env = {
      ...process.env,
      HELM_CACHE_HOME: join(work, "cache"),
      HELM_CONFIG_HOME: join(work, "config"),
      HELM_DATA_HOME: join(work, "data"),
    };
    const full = [...args, "--kubeconfig", cluster.kubeconfigPath];
    return new Promise((resolve, reject) => {
      execFile(toolPath("helm"), full, { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`helm ${args.join(" ")} failed: ${stderr || error.message}`));
        else resolve(stdout);
      });
    });
  }

  function kc(): KubeConfig {
    if (cluster === undefined) throw new Error("host cluster did not start");
    return cluster.kubeConfig;
  }

  beforeAll(async () => {
    cluster = await startHostCluster({ name: "chart-install" });
    installOutput = await helm([
      "install",
      release,
      chartDir,
      "--namespace",
      namespace,
      "--create-namespace",
      // --set splits on commas, so a cluster's URL list escapes them.
      "--set",
      "nats.url=nats://nats-0.nats:4222\\,nats://nats-1.nats:4222",
    ]);
  });

  afterAll(async () => {
    await cluster?.stop({ keepLogs: failures.failed() });
    rmSync(work, { recursive: true, force: true });
    expect(liveProcesses()).toEqual([]);
  });

  async function readCrd(name: string): Promise<V1CustomResourceDefinition> {
    return kc().makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name });
  }

  it("installs the CRDs from templates/, kept on uninstall, and prints how to use the release", async () => {
    for (const plural of ["tenantclusters", "isolationprofiles", "syncpolicies"]) {
      const crd = await readCrd(`${plural}.${tp}`);
      expect(crd.metadata?.annotations?.["helm.sh/resource-policy"]).toBe("keep");
      expect(crd.metadata?.annotations?.["meta.helm.sh/release-name"]).toBe(release);
      const source = YAML.parse(readFileSync(join(repoRoot, "libs/api/crds", `${plural}.yaml`), "utf8")) as {
        spec: { versions: { name: string }[] };
      };
      expect(crd.spec.versions.map((v) => v.name)).toEqual(source.spec.versions.map((v) => v.name));
    }
    expect(installOutput).toContain("kubectl get tenantclusters");
    expect(installOutput).toContain(".status.kubeconfigSecretRef");
    expect(installOutput).toContain("tenantplane.decisions.>");
    expect(installOutput).toContain("Events land in namespace default");
    expect(installOutput).toContain(`${release}-managed-namespaces`);

    // A misspelt value fails the install itself, naming the path, and installs nothing.
    const typo = await helm([
      "install",
      "typo",
      chartDir,
      "--namespace",
      "typo",
      "--create-namespace",
      "--set",
      "nats.url=nats://nats:4222",
      "--set",
      "services.provisoner.replicas=1",
    ]).then(
      () => "installed",
      (e: unknown) => (e as Error).message,
    );
    expect(typo).toContain("at '/services': additional properties 'provisoner' not allowed");
    expect(await helm(["list", "--all-namespaces", "--short"])).toBe(`${release}\n`);
  });

  /** A client authenticated as `user` (not in system:masters) with a certificate from the cluster CA. */
  async function userConfig(user: string): Promise<KubeConfig> {
    if (cluster === undefined) throw new Error("host cluster did not start");
    const leaf = await signLeaf(cluster.ca, { commonName: user, usage: "client" });
    return kubeConfigFrom({ server: cluster.server, caPem: cluster.caPem, ...leaf, name: user });
  }

  async function serviceAccountConfig(service: string): Promise<KubeConfig> {
    if (cluster === undefined) throw new Error("host cluster did not start");
    return serviceAccountKubeConfig(cluster, namespace, `${release}-${service}`);
  }

  /** Resolves to 200 on success, else the HTTP status and the server's message. */
  async function outcome(request: Promise<unknown>): Promise<{ code: number; message: string }> {
    try {
      await request;
      return { code: 200, message: "" };
    } catch (error) {
      const e = error as { code?: number; body?: unknown };
      const body = typeof e.body === "string" ? e.body : JSON.stringify(e.body ?? String(error));
      return { code: e.code ?? 0, message: body };
    }
  }

  it("refuses a non-admin user with RBAC every write in a managed namespace and the label's removal; tenantplane's own token may write", async () => {
    const core = kc().makeApiClient(CoreV1Api);
    const rbac = kc().makeApiClient(RbacAuthorizationV1Api);
    await core.createNamespace({ body: { metadata: { name: "tp-guarded", labels: managed } } });
    await core.createNamespace({ body: { metadata: { name: "team-a" } } });
    // alice may write ConfigMaps and Secrets anywhere and edit namespaces: RBAC says yes.
    await rbac.createClusterRole({
      body: {
        metadata: { name: "alice-writer" },
        rules: [
          { apiGroups: [""], resources: ["configmaps", "secrets"], verbs: ["create", "update", "patch", "delete"] },
          { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "patch", "update", "delete"] },
        ],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: "alice-writer" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "alice-writer" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "alice" }],
      },
    });
    const alice = (await userConfig("alice")).makeApiClient(CoreV1Api);
    const configMap = (name: string) => ({ metadata: { name }, data: { a: "1" } });

    // Policies take effect once the API server's policy informer has compiled them.
    let refused = { code: 0, message: "" };
    await waitFor(
      async () => {
        refused = await outcome(
          alice.createNamespacedConfigMap({ namespace: "tp-guarded", body: configMap("probe"), dryRun: "All" }),
        );
        return refused.code !== 200;
      },
      { description: "the managed-namespaces policy to refuse alice", timeoutMs: 30_000 },
    );
    expect(refused.code).toBe(403);
    expect(refused.message).toContain(`ValidatingAdmissionPolicy '${release}-managed-namespaces'`);
    expect(refused.message).toContain("namespace tp-guarded is managed by tenantplane");

    expect(
      (await outcome(alice.createNamespacedConfigMap({ namespace: "team-a", body: configMap("mine") }))).code,
    ).toBe(200);
    expect(
      (await outcome(alice.createNamespacedSecret({ namespace: "tp-guarded", body: { metadata: { name: "s" } } })))
        .code,
    ).toBe(403);
    expect((await core.listNamespacedSecret({ namespace: "tp-guarded" })).items.map((s) => s.metadata?.name)).toEqual(
      [],
    );

    // Removing or changing the label is refused, for alice and for a cluster admin alike.
    const dropLabel = [{ op: "remove", path: "/metadata/labels/app.kubernetes.io~1managed-by" }];
    const aliceDrop = await outcome(alice.patchNamespace({ name: "tp-guarded", body: dropLabel }));
    expect(aliceDrop.code).toBe(403);
    expect(aliceDrop.message).toContain(`ValidatingAdmissionPolicy '${release}-managed-label'`);
    expect((await outcome(core.patchNamespace({ name: "tp-guarded", body: dropLabel }))).code).toBe(403);
    const relabel = [{ op: "replace", path: "/metadata/labels/app.kubernetes.io~1managed-by", value: "someone" }];
    expect((await outcome(alice.patchNamespace({ name: "tp-guarded", body: relabel }))).code).toBe(403);
    expect((await core.readNamespace({ name: "tp-guarded" })).metadata?.labels).toMatchObject(managed);
    // The namespace itself is tenantplane's too: its Pod Security labels are the tenant's isolation.
    const privileged = [
      { op: "add", path: "/metadata/labels/pod-security.kubernetes.io~1enforce", value: "privileged" },
    ];
    const weaken = await outcome(alice.patchNamespace({ name: "tp-guarded", body: privileged }));
    expect(weaken.code).toBe(403);
    expect(weaken.message).toContain(`ValidatingAdmissionPolicy '${release}-managed-namespaces'`);
    expect(weaken.message).toContain("namespace tp-guarded is managed by tenantplane");
    const aliceDelete = await outcome(alice.deleteNamespace({ name: "tp-guarded" }));
    expect(aliceDelete.code).toBe(403);
    expect((await core.readNamespace({ name: "tp-guarded" })).metadata).toMatchObject({ labels: managed });
    expect((await core.readNamespace({ name: "tp-guarded" })).metadata?.deletionTimestamp).toBeUndefined();
    // A cluster admin may still change other labels.
    const addLabel = [{ op: "add", path: "/metadata/labels/team", value: "a" }];
    expect((await outcome(core.patchNamespace({ name: "tp-guarded", body: addLabel }))).code).toBe(200);

    // A cluster admin (system:masters) and tenantplane's own ServiceAccount may write there.
    await core.createNamespacedConfigMap({ namespace: "tp-guarded", body: configMap("by-admin") });
    const provisioner = (await serviceAccountConfig("provisioner")).makeApiClient(CoreV1Api);
    await provisioner.createNamespacedSecret({
      namespace: "tp-guarded",
      body: { metadata: { name: "dev-kubeconfig" }, stringData: { k: "v" } },
    });
    const stored = await core.listNamespacedSecret({ namespace: "tp-guarded" });
    expect(stored.items.map((s) => s.metadata?.name)).toEqual(["dev-kubeconfig"]);
  });

  it("refuses tenantplane's ServiceAccounts RoleBindings outside managed namespaces, even where RBAC allows them", async () => {
    const rbac = kc().makeApiClient(RbacAuthorizationV1Api);
    const account = `${release}-provisioner`;
    // RBAC lets the provisioner bind an empty Role in both namespaces, so only the policy decides.
    for (const ns of ["team-a", "tp-guarded"]) {
      await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: "empty" }, rules: [] } });
      await rbac.createNamespacedRole({
        namespace: ns,
        body: {
          metadata: { name: "bind-rolebindings" },
          rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: ["create"] }],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: ns,
        body: {
          metadata: { name: "bind-rolebindings" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "bind-rolebindings" },
          subjects: [{ kind: "ServiceAccount", name: account, namespace }],
        },
      });
    }
    const provisioner = (await serviceAccountConfig("provisioner")).makeApiClient(RbacAuthorizationV1Api);
    const binding = {
      metadata: { name: "tenant-access" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "empty" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "tenant" }],
    };
    const outside = await outcome(provisioner.createNamespacedRoleBinding({ namespace: "team-a", body: binding }));
    expect(outside.code).toBe(403);
    expect(outside.message).toContain(`ValidatingAdmissionPolicy '${release}-rolebindings'`);
    expect((await outcome(rbac.readNamespacedRoleBinding({ namespace: "team-a", name: "tenant-access" }))).code).toBe(
      404,
    );
    await provisioner.createNamespacedRoleBinding({ namespace: "tp-guarded", body: binding });
    expect(
      (await rbac.readNamespacedRoleBinding({ namespace: "tp-guarded", name: "tenant-access" })).roleRef.name,
    ).toBe("empty");
  });

  it("upgrades a CRD's schema with helm upgrade, and keeps the CRDs on uninstall", async () => {
    const copy = join(work, "chart");
    cpSync(chartDir, copy, { recursive: true });
    const crdFile = join(copy, "files/crds/tenantclusters.yaml");
    const crd = YAML.parse(readFileSync(crdFile, "utf8")) as {
      spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: object } } } } }[] };
    };
    const version = crd.spec.versions[0];
    if (version === undefined) throw new Error("the TenantCluster CRD has no version");
    version.schema.openAPIV3Schema.properties.spec.properties = {
      ...version.schema.openAPIV3Schema.properties.spec.properties,
      upgradeMarker: { type: "string", maxLength: 16, description: "Added by the upgrade test." },
    };
    writeFileSync(crdFile, YAML.stringify(crd));

    const custom = kc().makeApiClient(CustomObjectsApi);
    const tenant = (name: string) => ({
      apiVersion: `${tp}/v1alpha1`,
      kind: "TenantCluster",
      metadata: { name },
      spec: { upgradeMarker: "v2" },
    });
    // Before the upgrade the API server prunes the unknown field.
    const before = (await custom.createClusterCustomObject({
      group: tp,
      version: "v1alpha1",
      plural: "tenantclusters",
      body: tenant("before"),
    })) as { spec: Record<string, unknown> };
    expect(before.spec.upgradeMarker).toBeUndefined();

    await helm(["upgrade", release, copy, "--namespace", namespace, "--reuse-values"]);
    const upgraded = await readCrd(`tenantclusters.${tp}`);
    const specSchema = upgraded.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec;
    expect(specSchema?.properties?.upgradeMarker).toMatchObject({ type: "string", maxLength: 16 });
    expect(upgraded.metadata?.annotations?.["helm.sh/resource-policy"]).toBe("keep");

    // The new schema is live: the field is stored, and its limit enforced.
    let stored: { spec?: Record<string, unknown> } = {};
    await waitFor(
      async () => {
        const name = `after-${Date.now()}`;
        stored = (await custom.createClusterCustomObject({
          group: tp,
          version: "v1alpha1",
          plural: "tenantclusters",
          body: tenant(name),
        })) as typeof stored;
        return stored.spec?.upgradeMarker === "v2";
      },
      { description: "the upgraded TenantCluster schema to keep spec.upgradeMarker", timeoutMs: 30_000 },
    );
    const tooLong = await outcome(
      custom.createClusterCustomObject({
        group: tp,
        version: "v1alpha1",
        plural: "tenantclusters",
        body: { ...tenant("too-long"), spec: { upgradeMarker: "x".repeat(17) } },
      }),
    );
    expect(tooLong.code).toBe(422);
    expect(tooLong.message).toContain("spec.upgradeMarker");

    await helm(["uninstall", release, "--namespace", namespace, "--wait"]);
    for (const plural of ["tenantclusters", "isolationprofiles", "syncpolicies"]) {
      expect((await readCrd(`${plural}.${tp}`)).metadata?.deletionTimestamp).toBeUndefined();
    }
    const left = (await custom.getClusterCustomObject({
      group: tp,
      version: "v1alpha1",
      plural: "tenantclusters",
      name: "before",
    })) as { metadata: { name: string } };
    expect(left.metadata.name).toBe("before");
  });
});
