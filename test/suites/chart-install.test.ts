import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeConfig } from "@kubernetes/client-node";
import {
  ApiextensionsV1Api,
  AppsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig as Config,
  RbacAuthorizationV1Api,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  kubeConfigFrom,
  liveProcesses,
  ServiceFleet,
  setLoadBalancerIngress,
  signLeaf,
  startHostCluster,
  startNats,
  startTenantStandIn,
  toolPath,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type ServiceName,
  type TenantApiServer,
  serviceAccountKubeConfig,
  serviceAccountKubeconfigFile,
  requestOutcome,
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
  let nats: NatsServer | undefined;
  let fleet: ServiceFleet | undefined;
  let standIn: TenantApiServer | undefined;

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
    const keepLogs = failures.failed();
    await fleet?.stop({ keepLogs });
    await standIn?.stop({ keepLogs });
    await nats?.stop({ keepLogs });
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

  const outcome = requestOutcome;

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

    // A cluster admin (system:masters) and tenantplane's own ServiceAccount may write there, the
    // latter once its tenant role is bound in the namespace (RBAC, not the policy, says so before).
    await core.createNamespacedConfigMap({ namespace: "tp-guarded", body: configMap("by-admin") });
    const provisionerConfig = await serviceAccountConfig("provisioner");
    const provisioner = provisionerConfig.makeApiClient(CoreV1Api);
    const secret = { metadata: { name: "dev-kubeconfig" }, stringData: { k: "v" } };
    const unbound = await outcome(provisioner.createNamespacedSecret({ namespace: "tp-guarded", body: secret }));
    expect(unbound.code).toBe(403);
    expect(unbound.message).toContain(
      `cannot create resource \\"secrets\\" in API group \\"\\" in the namespace \\"tp-guarded\\"`,
    );
    const ownRole = `${release}-provisioner-tenant`;
    await provisionerConfig.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
      namespace: "tp-guarded",
      body: {
        metadata: { name: ownRole },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: ownRole },
        subjects: [{ kind: "ServiceAccount", name: `${release}-provisioner`, namespace }],
      },
    });
    await waitFor(
      async () =>
        (await outcome(provisioner.createNamespacedSecret({ namespace: "tp-guarded", body: secret }))).code === 200,
      { description: "the provisioner's bound role to let it write in tp-guarded", timeoutMs: 15_000, intervalMs: 200 },
    );
    const stored = await core.listNamespacedSecret({ namespace: "tp-guarded" });
    expect(stored.items.map((s) => s.metadata?.name)).toEqual(["dev-kubeconfig"]);
    await rbac.deleteNamespacedRoleBinding({ namespace: "tp-guarded", name: ownRole });
  });

  it("refuses tenantplane's ServiceAccounts any RoleBinding but its fixed tenant roles, for its own accounts, in managed namespaces", async () => {
    const rbac = kc().makeApiClient(RbacAuthorizationV1Api);
    // The provisioner holds every permission of an empty Role, so RBAC would let it bind one anywhere.
    for (const ns of ["team-a", "tp-guarded"]) {
      await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: "empty" }, rules: [] } });
    }
    const provisioner = (await serviceAccountConfig("provisioner")).makeApiClient(RbacAuthorizationV1Api);
    const account = (service: string) => ({ kind: "ServiceAccount", name: `${release}-${service}`, namespace });
    const clusterRole = (name: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name });
    const isolationRole = clusterRole(`${release}-isolation-tenant`);
    const create = (ns: string, name: string, roleRef: object, subjects: object[]) =>
      outcome(
        provisioner.createNamespacedRoleBinding({
          namespace: ns,
          body: { metadata: { name }, roleRef: roleRef as never, subjects: subjects as never },
        }),
      );
    const policy = `ValidatingAdmissionPolicy '${release}-rolebindings'`;
    // RBAC says yes to all of these; only the policy stands in the way.
    for (const ns of ["team-a", "kube-system"]) {
      const sar = await kc()
        .makeApiClient(AuthorizationV1Api)
        .createSubjectAccessReview({
          body: {
            spec: {
              user: `system:serviceaccount:${namespace}:${release}-provisioner`,
              groups: ["system:serviceaccounts", "system:authenticated"],
              resourceAttributes: {
                verb: "create",
                group: "rbac.authorization.k8s.io",
                resource: "rolebindings",
                namespace: ns,
              },
            },
          },
        });
      expect(sar.status?.allowed, ns).toBe(true);
      // Outside a managed namespace, even the fixed role for its own account is refused.
      const outside = await create(ns, "tenant-access", isolationRole, [account("isolation")]);
      expect(outside.code, ns).toBe(403);
      expect(outside.message).toContain(policy);
      expect(outside.message).toContain(
        `may create RoleBindings only in namespaces managed by tenantplane, not in ${ns}`,
      );
      expect((await outcome(rbac.readNamespacedRoleBinding({ namespace: ns, name: "tenant-access" }))).code).toBe(404);
    }
    // In a managed namespace: any other role,
    const otherRole = await create(
      "tp-guarded",
      "empty",
      { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "empty" },
      [account("isolation")],
    );
    expect(otherRole.code).toBe(403);
    expect(otherRole.message).toContain(policy);
    expect(otherRole.message).toContain(`may bind only the ClusterRoles ${release}-isolation-tenant, `);
    expect(otherRole.message).toContain("not Role empty");
    // a fixed role handed to a person or to another service,
    for (const subject of [
      { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "tenant" },
      account("sync-worker"),
    ]) {
      const other = await create("tp-guarded", "isolation-access", isolationRole, [subject]);
      expect(other.code, subject.name).toBe(403);
      expect(other.message).toContain(
        `may bind ClusterRole ${release}-isolation-tenant only to ServiceAccount ${namespace}/${release}-isolation`,
      );
    }
    // and a role it may not bind at all (RBAC's own escalation check) are refused.
    expect((await create("tp-guarded", "admin", clusterRole("admin"), [account("isolation")])).code).toBe(403);
    expect((await rbac.listNamespacedRoleBinding({ namespace: "tp-guarded" })).items).toEqual([]);

    // What the provisioner does for each tenant passes: each fixed role for its own account.
    expect(
      (await create("tp-guarded", `${release}-isolation-tenant`, isolationRole, [account("isolation")])).code,
    ).toBe(200);
    const own = clusterRole(`${release}-provisioner-tenant`);
    expect((await create("tp-guarded", own.name, own, [account("provisioner")])).code).toBe(200);
    // Re-pointing a binding it may now update is refused like creating it.
    const repoint = [{ op: "replace", path: "/subjects/0/name", value: `${release}-sync-worker` }];
    let updated = { code: 0, message: "" };
    await waitFor(
      async () => {
        updated = await outcome(
          provisioner.patchNamespacedRoleBinding({
            namespace: "tp-guarded",
            name: `${release}-isolation-tenant`,
            body: repoint,
          }),
        );
        // 403 from RBAC until the authorizer knows the provisioner's own binding; then the policy's.
        return updated.message.includes(policy) || updated.code === 200;
      },
      { description: "the provisioner's update to reach admission", timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(updated.code).toBe(403);
    expect(updated.message).toContain(`only to ServiceAccount ${namespace}/${release}-isolation`);
    const stored = await rbac.readNamespacedRoleBinding({
      namespace: "tp-guarded",
      name: `${release}-isolation-tenant`,
    });
    expect(stored.subjects?.map((x) => x.name)).toEqual([`${release}-isolation`]);
  });

  it("runs the services as the chart configures them, each with only its own token: a tenant comes up, syncs and goes away", async () => {
    nats = await startNats();
    const apps = kc().makeApiClient(AppsV1Api);
    // Each service's environment as its installed Deployment sets it, but for where NATS and
    // the HTTP port are in this test; KUBECONFIG holds the service's own token, as in its pod.
    const environment = async (service: ServiceName): Promise<NodeJS.ProcessEnv> => {
      const deployment = await apps.readNamespacedDeployment({ namespace, name: `${release}-${service}` });
      const env: NodeJS.ProcessEnv = { POD_NAMESPACE: namespace };
      for (const e of deployment.spec?.template.spec?.containers[0]?.env ?? []) {
        if (e.value !== undefined && !["NATS_URL", "HTTP_PORT", "LOG_LEVEL"].includes(e.name)) env[e.name] = e.value;
      }
      if (cluster === undefined) throw new Error("host cluster did not start");
      env.KUBECONFIG = await serviceAccountKubeconfigFile(
        cluster,
        namespace,
        `${release}-${service}`,
        join(work, `${service}.kubeconfig`),
      );
      return env;
    };
    const running: ServiceName[] = ["watcher", "provisioner", "isolation", "recorder", "sync-worker"];
    const envs = await Promise.all(running.map(environment));
    expect(envs[1]?.TENANT_ROLE_BINDINGS).toContain(
      `${release}-provisioner-tenant=${namespace}/${release}-provisioner`,
    );
    fleet = new ServiceFleet({ kubeconfigPath: "/nonexistent", natsUrl: nats.url });
    const started = await Promise.all(running.map((service, i) => fleet!.start(service, envs[i])));

    const custom = kc().makeApiClient(CustomObjectsApi);
    await custom.createClusterCustomObject({
      group: tp,
      version: "v1alpha1",
      plural: "tenantclusters",
      body: {
        apiVersion: `${tp}/v1alpha1`,
        kind: "TenantCluster",
        metadata: { name: "lp" },
        spec: { controlPlane: { expose: { loadBalancer: { enabled: true } } } },
      },
    });
    await setLoadBalancerIngress(kc(), "tp-lp", "k3s", "127.0.0.50");
    standIn = await startTenantStandIn(kc(), "lp", "127.0.0.50");
    type Tenant = { status?: { phase?: string; conditions?: { type: string; status: string; reason: string }[] } };
    const readTenant = async () =>
      (await custom.getClusterCustomObject({
        group: tp,
        version: "v1alpha1",
        plural: "tenantclusters",
        name: "lp",
      })) as Tenant;
    const phases = new Set<string>();
    await waitFor(
      async () => {
        const status = (await readTenant()).status;
        phases.add(status?.phase ?? "");
        return status?.phase === "Ready";
      },
      { description: "TenantCluster lp to be Ready", timeoutMs: 120_000, intervalMs: 500 },
    );
    expect([...phases]).not.toContain("Failed");

    // Every service's access came from the RoleBindings the provisioner made with the namespace.
    const core = kc().makeApiClient(CoreV1Api);
    const bindings = (
      await kc().makeApiClient(RbacAuthorizationV1Api).listNamespacedRoleBinding({ namespace: "tp-lp" })
    ).items;
    expect(bindings.map((b) => `${b.roleRef.name} ${b.subjects?.map((x) => x.name).join(",")}`).sort()).toEqual(
      ["isolation", "provisioner", "recorder", "sync-worker"].map((s) => `${release}-${s}-tenant ${release}-${s}`),
    );
    const refused = (await core.listNamespacedEvent({ namespace: "default" })).items.filter(
      (e) => e.reason === "RejectedByApiServer",
    );
    expect(refused.map((e) => e.message)).toEqual([]);

    // The sync worker, reading the kubeconfig Secret in tp-lp only, copies a tenant object there.
    const secret = await core.readNamespacedSecret({ namespace: "tp-lp", name: "lp-kubeconfig" });
    const tenantKc = new Config();
    tenantKc.loadFromString(Buffer.from(secret.data?.["kubeconfig"] ?? "", "base64").toString("utf8"));
    await tenantKc
      .makeApiClient(CoreV1Api)
      .createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "hello" }, data: { a: "1" } } });
    const copy = await waitFor(
      () => core.readNamespacedConfigMap({ namespace: "tp-lp", name: "hello-x-default-x-lp" }),
      {
        description: "the host copy of ConfigMap default/hello",
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
    expect(copy.data).toEqual({ a: "1" });

    // Teardown with the provisioner's rights: the namespace, and with it every binding, goes.
    await custom.deleteClusterCustomObject({ group: tp, version: "v1alpha1", plural: "tenantclusters", name: "lp" });
    await waitFor(
      async () =>
        (await outcome(readTenant())).code === 404 &&
        (await outcome(core.readNamespace({ name: "tp-lp" }))).code === 404,
      { description: "TenantCluster lp and namespace tp-lp to be gone", timeoutMs: 120_000, intervalMs: 1_000 },
    );
    for (const service of started) service.process.assertRunning();
    // The release is uninstalled below; its services stop first.
    await fleet.stop();
    fleet = undefined;
  }, 420_000);

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
