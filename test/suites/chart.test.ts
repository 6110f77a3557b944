import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeConfig } from "@kubernetes/client-node";
import {
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  dumpYaml,
  RbacAuthorizationV1Api,
  KubernetesObjectApi,
  loadYaml,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1Deployment,
  type V1EnvVar,
} from "@kubernetes/client-node";
import { JsonClient, Objects, resourcePath } from "@tenantplane/kube";
import type { PlannedDecision } from "@tenantplane/messaging";
import { ensureRoleBindings, parseTenantRoleGrants } from "@tenantplane/provisioner/role-bindings";
import { accessDenialOf, tenantDecider } from "@tenantplane/service";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentOf,
  consumersSettled,
  describeRequests,
  installCrds,
  isWrite,
  liveProcesses,
  readAudit,
  requestsOfResync,
  ServiceFleet,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  StopWaiting,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type ServiceName,
  type TenantApiServer,
  serviceAccountKubeConfig,
  serviceAccountKubeconfigFile,
} from "../harness/index.js";
import {
  chartDir,
  helm,
  KUBE_VERSION as kubeVersion,
  POLICY_API as policyApi,
  removeHelmHome,
  renderChart,
} from "../harness/helm.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const release = "tenantplane";
const namespace = "tenantplane-system";
const natsUrl = "nats://nats.nats.svc:4222";
const services = ["isolation", "provisioner", "recorder", "sync-worker", "watcher"] as const;
const fieldManager = "tenantplane-chart-test";
const tp = "tenantplane.io";
/** Services that act inside tenant namespaces, each through its fixed `<release>-<service>-tenant` ClusterRole. */
const tenantServices = ["isolation", "provisioner", "recorder", "sync-worker"];
const tenantRole = (service: string) => `${release}-${service}-tenant`;

/** Renders the chart as the release would be installed; `values` are --set pairs and values files. */
async function render(
  options: { set?: string[]; valuesFiles?: string[]; apiVersions?: string[] } = {},
): Promise<KubernetesObject[]> {
  return renderChart({ release, namespace, ...options, set: ["nats.url=" + natsUrl, ...(options.set ?? [])] });
}

function describeObject(o: KubernetesObject): string {
  return `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name}`;
}

function find<T extends KubernetesObject>(objects: KubernetesObject[], kind: string, name: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among: ${objects.map(describeObject).join(", ")}`);
  return found as T;
}

function container(objects: KubernetesObject[], service: string) {
  const deployment = find<V1Deployment>(objects, "Deployment", `${release}-${service}`);
  const first = deployment.spec?.template.spec?.containers[0];
  if (!first) throw new Error(`Deployment of ${service} has no container`);
  return { deployment, container: first, env: new Map((first.env ?? []).map((e: V1EnvVar) => [e.name, e])) };
}

function chartCrdFiles(): string[] {
  return readdirSync(join(chartDir, "files/crds"))
    .filter((f) => f.endsWith(".yaml"))
    .sort();
}

afterAll(removeHelmHome);

const clusterScopedKinds = new Set(["ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Namespace"]);

describe("chart rendering", () => {
  it("passes helm lint --strict", async () => {
    const out = await helm([
      "lint",
      "--strict",
      chartDir,
      "--kube-version",
      kubeVersion,
      "--set",
      `nats.url=${natsUrl}`,
    ]);
    expect(out).toContain("1 chart(s) linted, 0 chart(s) failed");
  });

  it("refuses to render without nats.url, naming the value and how to set it", async () => {
    const error = await helm(["template", release, chartDir, "--kube-version", kubeVersion]).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain("nats.url is required");
    expect(error?.message).toContain("--set nats.url=nats://");
    expect(error?.message).toContain("2.11 or newer");
  });

  it("renders a Deployment, ServiceAccount, metrics Service and RBAC per service, namespaced objects in the release namespace", async () => {
    const objects = await render();
    for (const service of services) {
      for (const kind of ["Deployment", "ServiceAccount", "Service", "ClusterRole", "ClusterRoleBinding"]) {
        expect(find(objects, kind, `${release}-${service}`).metadata?.labels?.["tenantplane.io/component"]).toBe(
          service,
        );
      }
    }
    // In the release namespace only the watcher needs a permission (its Lease); Events
    // are written only in events.namespace ("default"), by the services that explain.
    const roles = (ns: string) =>
      objects.filter((o) => o.kind === "Role" && o.metadata?.namespace === ns).map((o) => o.metadata?.name);
    expect(roles(namespace)).toEqual([`${release}-watcher`]);
    expect(roles("default").sort()).toEqual([
      `${release}-isolation-events`,
      `${release}-provisioner-events`,
      `${release}-recorder-events`,
      `${release}-sync-worker-events`,
    ]);
    for (const o of objects) {
      const eventsRbac = (o.kind === "Role" || o.kind === "RoleBinding") && o.metadata?.name?.endsWith("-events");
      if (clusterScopedKinds.has(o.kind ?? "")) expect(o.metadata?.namespace, describeObject(o)).toBeUndefined();
      else expect(o.metadata?.namespace, describeObject(o)).toBe(eventsRbac ? "default" : namespace);
    }
    expect(objects.some((o) => o.kind === "ServiceMonitor")).toBe(false);
  });

  type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[] };
  type Role = KubernetesObject & { rules: Rule[] };
  type Binding = KubernetesObject & { roleRef: { kind: string; name: string } };

  it("grants nothing cluster-wide in tenant namespaces: those rights are fixed ClusterRoles the provisioner alone may bind", async () => {
    const objects = await render();
    const bound = new Set(
      objects.filter((o) => o.kind === "ClusterRoleBinding").map((o) => (o as Binding).roleRef.name),
    );
    // What the services write in tp-* namespaces; none of it may be granted cluster-wide.
    const tenantKinds = new Set([
      "secrets",
      "statefulsets",
      "services",
      "pods",
      "configmaps",
      "serviceaccounts",
      "persistentvolumeclaims",
      "networkpolicies",
      "resourcequotas",
      "limitranges",
      "events",
      "deployments",
      "*",
    ]);
    const clusterWide: string[] = [];
    for (const role of objects.filter(
      (o): o is Role => o.kind === "ClusterRole" && bound.has(o.metadata?.name ?? ""),
    )) {
      for (const rule of role.rules) {
        expect(rule.verbs, `${role.metadata?.name}: no wildcard verbs`).not.toContain("*");
        expect(rule.verbs, `${role.metadata?.name}: no escalate`).not.toContain("escalate");
        for (const resource of rule.resources ?? []) {
          if (tenantKinds.has(resource)) clusterWide.push(`${role.metadata?.name} ${resource} ${rule.verbs.join(",")}`);
        }
      }
    }
    expect(clusterWide).toEqual([]);

    // One tenant ClusterRole per service that acts in tenant namespaces, bound by nothing in the chart.
    const tenantRoles = objects
      .filter((o) => o.kind === "ClusterRole" && o.metadata?.name?.endsWith("-tenant"))
      .map((o) => o.metadata?.name);
    expect(tenantRoles.sort()).toEqual(tenantServices.map(tenantRole));
    for (const name of tenantRoles) expect(bound.has(name ?? "")).toBe(false);
    expect(find<Role>(objects, "ClusterRole", tenantRole("recorder")).rules).toEqual([
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    ]);

    // The provisioner may create RoleBindings and bind exactly those roles, nothing else of RBAC.
    const provisioner = find<Role>(objects, "ClusterRole", `${release}-provisioner`);
    const rbacRules = provisioner.rules.filter((r) => r.apiGroups?.includes("rbac.authorization.k8s.io"));
    expect(rbacRules).toEqual([
      { apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: ["create"] },
      {
        apiGroups: ["rbac.authorization.k8s.io"],
        resources: ["clusterroles"],
        verbs: ["bind"],
        resourceNames: ["provisioner", "isolation", "recorder", "sync-worker"].map(tenantRole),
      },
    ]);
    // It learns the same pairs from its environment, its own first.
    expect(container(objects, "provisioner").env.get("TENANT_ROLE_BINDINGS")?.value).toBe(
      ["provisioner", "isolation", "recorder", "sync-worker"]
        .map((s) => `${tenantRole(s)}=${namespace}/${release}-${s}`)
        .join(","),
    );
    for (const service of services.filter((s) => s !== "provisioner")) {
      expect(container(objects, service).env.has("TENANT_ROLE_BINDINGS"), service).toBe(false);
    }

    // A disabled service's role is neither rendered nor bindable; no tenantRules at all binds nothing.
    const withoutRecorder = await render({ set: ["services.recorder.enabled=false"] });
    expect(withoutRecorder.some((o) => o.metadata?.name === tenantRole("recorder"))).toBe(false);
    const bind = find<Role>(withoutRecorder, "ClusterRole", `${release}-provisioner`).rules.find((r) =>
      r.verbs.includes("bind"),
    );
    expect(bind?.resourceNames).not.toContain(tenantRole("recorder"));
    const none = await render({
      set: tenantServices.map((s) => `services.${s}.tenantRules=null`),
    });
    expect(find<Role>(none, "ClusterRole", `${release}-provisioner`).rules.some((r) => r.verbs.includes("bind"))).toBe(
      false,
    );
    expect(container(none, "provisioner").env.has("TENANT_ROLE_BINDINGS")).toBe(false);
  });

  it("runs every service from the one image with a command naming a built workspace, hardened and probed", async () => {
    const objects = await render();
    const appVersion = (YAML.parse(readFileSync(join(chartDir, "Chart.yaml"), "utf8")) as { appVersion: string })
      .appVersion;
    for (const service of services) {
      const { deployment, container: c, env } = container(objects, service);
      const pod = deployment.spec?.template;
      expect(deployment.spec?.replicas, service).toBe(service === "watcher" || service === "sync-worker" ? 2 : 1);
      expect(pod?.metadata?.labels?.["tenantplane.io/component"]).toBe(service);
      expect(c.image).toBe(`ghcr.io/tenantplane/tenantplane:${appVersion}`);
      expect(c.command).toEqual(["node", `services/${service}/dist/bundle/main.js`]);
      const manifest = JSON.parse(readFileSync(join(repoRoot, "services", service, "package.json"), "utf8")) as {
        main?: string;
      };
      expect(manifest.main, `services/${service}/package.json main`).toBe("./dist/bundle/main.js");

      expect(pod?.spec?.terminationGracePeriodSeconds).toBe(30);
      expect(pod?.spec?.serviceAccountName).toBe(`${release}-${service}`);
      expect(pod?.spec?.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 10001,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(c.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
      });
      expect(c.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "http" });
      expect(c.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "http" });
      expect(c.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
      expect(c.resources?.limits?.memory).toBeDefined();

      expect(env.get("NATS_URL")?.value).toBe(natsUrl);
      expect(env.get("HTTP_PORT")?.value).toBe("8080");
      expect(env.get("LOG_LEVEL")?.value).toBe("info");
      expect(env.get("POD_NAME")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.name");
      expect(env.get("POD_NAMESPACE")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.namespace");
      expect(env.has("KUBECONFIG"), "in-cluster configuration needs KUBECONFIG unset").toBe(false);
      expect(env.has("NATS_USER")).toBe(false);

      const metrics = find<KubernetesObject & { spec: { ports: unknown[]; selector: unknown } }>(
        objects,
        "Service",
        `${release}-${service}`,
      );
      expect(metrics.spec.ports).toEqual([{ name: "metrics", port: 8080, targetPort: "http", protocol: "TCP" }]);
      expect(metrics.spec.selector).toEqual(deployment.spec?.selector.matchLabels);
    }
    expect(container(objects, "watcher").env.get("LEASE_NAME")?.value).toBe("tenantplane-watcher");
    expect(container(objects, "recorder").env.get("EVENTS_NAMESPACE")?.value).toBe("default");
    // Two watchers prefer different nodes; single replicas get no spread constraint.
    expect(
      container(objects, "watcher").deployment.spec?.template.spec?.topologySpreadConstraints?.[0]?.topologyKey,
    ).toBe("kubernetes.io/hostname");
    expect(container(objects, "recorder").deployment.spec?.template.spec?.topologySpreadConstraints).toBeUndefined();
  });

  it("caps each service's V8 heap at 3/4 of its memory limit, unless its env sets NODE_OPTIONS", async () => {
    const heapOf = (objects: KubernetesObject[], service: string) =>
      container(objects, service).env.get("NODE_OPTIONS")?.value;
    const defaults = await render();
    expect(heapOf(defaults, "sync-worker")).toBe("--max-old-space-size=576"); // 768Mi
    expect(heapOf(defaults, "watcher")).toBe("--max-old-space-size=192"); // 256Mi
    const set = await render({
      set: [
        "services.sync-worker.resources.limits.memory=1.5Gi",
        "services.recorder.resources.limits.memory=536870912",
        "services.isolation.resources.limits.memory=1e9",
        "services.watcher.env.NODE_OPTIONS=--max-old-space-size=100",
      ],
    });
    expect(heapOf(set, "sync-worker")).toBe("--max-old-space-size=1152");
    expect(heapOf(set, "recorder")).toBe("--max-old-space-size=384");
    expect(heapOf(set, "isolation")).toBe("--max-old-space-size=714"); // 953 MiB
    const watcherEnv = container(set, "watcher").container.env ?? [];
    expect(watcherEnv.filter((e: V1EnvVar) => e.name === "NODE_OPTIONS").map((e: V1EnvVar) => e.value)).toEqual([
      "--max-old-space-size=100",
    ]);
    // Valid for Kubernetes, but a thousandth of a byte is no limit to size a heap by.
    const error = await render({ set: ["services.recorder.resources.limits.memory=100m"] }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain('services.recorder.resources.limits.memory "100m" is not a memory quantity');
  });

  it("reads NATS credentials from an existing Secret and mounts a credentials file where NATS_CREDS_FILE points", async () => {
    const objects = await render({ set: ["nats.existingSecret=nats-auth", "nats.credsFile.enabled=true"] });
    for (const service of services) {
      const { deployment, container: c, env } = container(objects, service);
      for (const [variable, key] of [
        ["NATS_USER", "user"],
        ["NATS_PASSWORD", "password"],
        ["NATS_TOKEN", "token"],
      ] as const) {
        expect(env.get(variable)?.valueFrom?.secretKeyRef).toEqual({ name: "nats-auth", key, optional: true });
      }
      const credsFile = env.get("NATS_CREDS_FILE")?.value ?? "";
      const mount = c.volumeMounts?.find((m) => credsFile.startsWith(`${m.mountPath}/`));
      expect(mount?.readOnly).toBe(true);
      const volume = deployment.spec?.template.spec?.volumes?.find((v) => v.name === mount?.name);
      expect(volume?.secret?.secretName).toBe("nats-auth");
      expect(volume?.secret?.items).toEqual([
        { key: "creds", path: credsFile.slice((mount?.mountPath.length ?? 0) + 1) },
      ]);
    }
    await expect(render({ set: ["nats.credsFile.enabled=true"] })).rejects.toThrow(
      "nats.credsFile.enabled needs nats.existingSecret",
    );
  });

  it("honours image.tag and creates a ServiceMonitor only when asked", async () => {
    const objects = await render({
      set: ["image.tag=1.2.3", "metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prom"],
    });
    expect(container(objects, "isolation").container.image).toBe("ghcr.io/tenantplane/tenantplane:1.2.3");
    const monitor = find<KubernetesObject & { spec: Record<string, unknown> }>(objects, "ServiceMonitor", release);
    expect(monitor.metadata?.labels?.release).toBe("prom");
    expect(monitor.spec.endpoints).toEqual([
      { port: "metrics", path: "/metrics", interval: "30s", scrapeTimeout: "10s" },
    ]);
    const selector = (monitor.spec.selector as { matchLabels: Record<string, string> }).matchLabels;
    for (const service of services) {
      const labels = find(objects, "Service", `${release}-${service}`).metadata?.labels ?? {};
      expect(labels).toMatchObject(selector);
    }
  });

  it("adds a service from one values entry: Deployment, command, RBAC and spread come from the generic templates", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tenantplane-values-"));
    try {
      const file = join(dir, "values.yaml");
      const rules = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }];
      writeFileSync(
        file,
        YAML.stringify({
          services: {
            "sync-worker": {
              enabled: true,
              replicas: 3,
              resources: { requests: { cpu: "100m", memory: "128Mi" } },
              env: { PARTITIONS: 128 },
              clusterRules: rules,
            },
          },
        }),
      );
      const objects = await render({ valuesFiles: [file], set: ["services.recorder.enabled=false"] });
      const { deployment, container: c, env } = container(objects, "sync-worker");
      expect(deployment.spec?.replicas).toBe(3);
      expect(c.command).toEqual(["node", "services/sync-worker/dist/bundle/main.js"]);
      expect(env.get("PARTITIONS")?.value).toBe("128");
      expect(deployment.spec?.template.spec?.topologySpreadConstraints).toHaveLength(1);
      expect(
        find<KubernetesObject & { rules: unknown }>(objects, "ClusterRole", `${release}-sync-worker`).rules,
      ).toEqual(rules);
      expect(objects.some((o) => o.metadata?.name === `${release}-recorder`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses values outside the schema, naming the path, before rendering anything", async () => {
    const refusals: [set: string, path: string][] = [
      ["services.provisoner.replicas=1", "at '/services': additional properties 'provisoner' not allowed"],
      ["services.provisioner.replicas=2", "at '/services/provisioner/replicas': maximum: got 2, want 1"],
      ["services.isolation.replicas=2", "at '/services/isolation/replicas': maximum: got 2, want 1"],
      ["services.recorder.replicas=3", "at '/services/recorder/replicas': maximum: got 3, want 1"],
      ["services.watcher.replicas=0", "at '/services/watcher/replicas'"],
      ["services.watcher.resources.requests.cpu=null", "at '/services/watcher/resources/requests'"],
      ["services.watcher.replica=2", "at '/services/watcher': additional properties 'replica' not allowed"],
      ["nats.password=secret", "at '/nats': additional properties 'password' not allowed"],
      ["nats.token=secret", "at '/nats': additional properties 'token' not allowed"],
      ["nats.tls.insecure=true", "at '/nats/tls/insecure'"],
      ["nats.streams.replicas=2", "at '/nats/streams/replicas'"],
      ["nats.streams.decisionsMaxBytes=0", "at '/nats/streams/decisionsMaxBytes'"],
      ["nats.url=http://nats:4222", "at '/nats/url'"],
      ["securityContext.allowPrivilegeEscalation=true", "at '/securityContext/allowPrivilegeEscalation'"],
      ["podSecurityContext.runAsNonRoot=false", "at '/podSecurityContext/runAsNonRoot'"],
      ["crds.instal=true", "at '/crds': additional properties 'instal' not allowed"],
      ["logLevel=loud", "at '/logLevel'"],
    ];
    const answers = await Promise.all(
      refusals.map(([set]) =>
        render({ set: [set] }).then(
          () => `${set}: accepted`,
          (e: unknown) => `${set}: ${(e as Error).message}`,
        ),
      ),
    );
    for (const [i, [set, path]] of refusals.entries()) {
      expect(answers[i]).toContain(`${set}: helm template`);
      expect(answers[i]).toContain(path);
    }
    // The schema says why the single-replica services stop at one.
    type Replicas = { properties?: { replicas?: { description?: string } } };
    const schema = JSON.parse(readFileSync(join(chartDir, "values.schema.json"), "utf8")) as {
      properties: { services: { properties: Record<string, { allOf: Replicas[] }> } };
    };
    for (const service of ["provisioner", "isolation", "recorder"]) {
      const replicas = schema.properties.services.properties[service]?.allOf.find((s) => s.properties?.replicas);
      expect(replicas?.properties?.replicas?.description).toMatch(/^At most 1: .+ not be safe yet\.$/);
    }
  });

  it("gives every service with more than one replica a PodDisruptionBudget over its own pods", async () => {
    const pdbs = (objects: KubernetesObject[]) =>
      objects
        .filter((o) => o.kind === "PodDisruptionBudget")
        .map((o) => o as KubernetesObject & { spec: Record<string, unknown> });
    const defaults = await render();
    expect(pdbs(defaults).map((p) => [p.metadata?.name, p.spec.maxUnavailable])).toEqual([
      [`${release}-sync-worker`, 1],
      [`${release}-watcher`, 1],
    ]);
    const watcherPdb = pdbs(defaults).find((p) => p.metadata?.name === `${release}-watcher`);
    expect(watcherPdb?.spec.selector).toEqual(container(defaults, "watcher").deployment.spec?.selector);

    const dir = mkdtempSync(join(tmpdir(), "tenantplane-values-"));
    try {
      const file = join(dir, "values.yaml");
      writeFileSync(
        file,
        YAML.stringify({
          services: {
            watcher: { replicas: 3 },
            "sync-worker": {
              enabled: true,
              replicas: 4,
              podDisruptionBudget: { minAvailable: 2 },
              resources: { requests: { cpu: "100m", memory: "192Mi" } },
            },
          },
        }),
      );
      const scaled = await render({ valuesFiles: [file] });
      expect(pdbs(scaled).map((p) => [p.metadata?.name, p.spec.maxUnavailable, p.spec.minAvailable])).toEqual([
        [`${release}-sync-worker`, undefined, 2],
        [`${release}-watcher`, 1, undefined],
      ]);
      const worker = container(scaled, "sync-worker").deployment;
      expect(pdbs(scaled)[0]?.spec.selector).toEqual(worker.spec?.selector);
      expect(worker.spec?.replicas).toBe(4);
      expect(worker.spec?.template.spec?.topologySpreadConstraints?.[0]).toMatchObject({
        topologyKey: "kubernetes.io/hostname",
        labelSelector: worker.spec?.selector,
      });
      expect(container(scaled, "sync-worker").container.resources?.requests).toEqual({
        cpu: "100m",
        memory: "192Mi",
      });
      await expect(
        render({ valuesFiles: [file], set: ["services.sync-worker.podDisruptionBudget.maxUnavailable=1"] }),
      ).rejects.toThrow("at '/services/sync-worker/podDisruptionBudget'");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Every default service asks for what it needs, so the scheduler reserves it.
    for (const service of services) {
      const requests = container(defaults, service).container.resources?.requests;
      expect(requests?.cpu, service).toBeDefined();
      expect(requests?.memory, service).toBeDefined();
    }
  });

  it("wires NATS TLS from a Secret or ConfigMap, the client certificate from a Secret, and the stream settings", async () => {
    const objects = await render({
      set: [
        "nats.url=tls://nats-0.nats:4222\\,tls://nats-1.nats:4222\\,tls://nats-2.nats:4222",
        "nats.tls.ca.configMapName=nats-ca",
        "nats.tls.clientCert.secretName=nats-client",
        "nats.streams.replicas=3",
        "nats.streams.tenantsMaxAgeSeconds=86400",
        "nats.streams.decisionsMaxAgeSeconds=604800",
        "nats.streams.decisionsMaxBytes=10737418240",
      ],
    });
    for (const service of services) {
      const { deployment, container: c, env } = container(objects, service);
      expect(env.get("NATS_URL")?.value).toBe("tls://nats-0.nats:4222,tls://nats-1.nats:4222,tls://nats-2.nats:4222");
      expect(env.get("NATS_TLS")?.value).toBe("true");
      expect(env.get("NATS_STREAM_REPLICAS")?.value).toBe("3");
      expect(env.get("NATS_TENANTS_MAX_AGE_SECONDS")?.value).toBe("86400");
      expect(env.get("NATS_DECISIONS_MAX_AGE_SECONDS")?.value).toBe("604800");
      expect(env.get("NATS_DECISIONS_MAX_BYTES")?.value).toBe("10737418240");
      const volumes = deployment.spec?.template.spec?.volumes ?? [];
      const fileOf = (variable: string) => {
        const path = env.get(variable)?.value ?? "";
        const mount = c.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
        expect(mount?.readOnly, variable).toBe(true);
        return {
          volume: volumes.find((v) => v.name === mount?.name),
          file: path.slice((mount?.mountPath.length ?? 0) + 1),
        };
      };
      const ca = fileOf("NATS_TLS_CA_FILE");
      expect(ca.volume?.configMap).toEqual({ name: "nats-ca", items: [{ key: "ca.crt", path: ca.file }] });
      const cert = fileOf("NATS_TLS_CERT_FILE");
      const key = fileOf("NATS_TLS_KEY_FILE");
      expect(cert.volume?.secret?.secretName).toBe("nats-client");
      expect(cert.volume?.secret?.items).toEqual([
        { key: "tls.crt", path: cert.file },
        { key: "tls.key", path: key.file },
      ]);
    }

    const fromSecret = await render({ set: ["nats.tls.ca.secretName=nats-ca", "nats.tls.ca.key=bundle.pem"] });
    const { deployment, env } = container(fromSecret, "watcher");
    expect(env.get("NATS_TLS_CA_FILE")?.value).toMatch(/\/bundle\.pem$/);
    expect(env.has("NATS_TLS_CERT_FILE")).toBe(false);
    expect(deployment.spec?.template.spec?.volumes?.find((v) => v.secret?.secretName === "nats-ca")).toBeDefined();

    // Defaults: plain NATS, one stream replica, limits left to the services.
    const plain = container(await render(), "provisioner").env;
    expect([...plain.keys()].filter((k) => k.startsWith("NATS_"))).toEqual(["NATS_URL", "NATS_STREAM_REPLICAS"]);
    expect(plain.get("NATS_STREAM_REPLICAS")?.value).toBe("1");
    expect(container(await render({ set: ["nats.tls.enabled=true"] }), "provisioner").env.get("NATS_TLS")?.value).toBe(
      "true",
    );
    await expect(render({ set: ["nats.tls.ca.secretName=a", "nats.tls.ca.configMapName=b"] })).rejects.toThrow(
      "nats.tls.ca: name either secretName or configMapName, not both",
    );
  });

  it("renders the CRDs from files/crds unchanged but for Helm's labels and the keep policy, unless crds.install=false", async () => {
    const objects = await render();
    const crds = objects.filter((o) => o.kind === "CustomResourceDefinition");
    expect(crds.map((c) => `${c.metadata?.name}`).sort()).toEqual(
      chartCrdFiles().map((f) => `${f.replace(/\.yaml$/, "")}.tenantplane.io`),
    );
    for (const crd of crds) {
      const plural = crd.metadata?.name?.split(".")[0] ?? "";
      const source = YAML.parse(
        readFileSync(join(repoRoot, "libs/api/crds", `${plural}.yaml`), "utf8"),
      ) as KubernetesObject;
      expect(crd.metadata?.annotations).toEqual({ "helm.sh/resource-policy": "keep" });
      expect(crd.metadata?.labels).toMatchObject({ ...source.metadata?.labels, "app.kubernetes.io/instance": release });
      const strip = (o: KubernetesObject) => ({ ...o, metadata: { name: o.metadata?.name } });
      expect(strip(crd)).toEqual(strip(source));
    }
    expect((await render({ set: ["crds.install=false"] })).some((o) => o.kind === "CustomResourceDefinition")).toBe(
      false,
    );
  });

  it("adds the admission policies only where the API server serves them, exempting exactly the release's ServiceAccounts", async () => {
    const kinds = (objects: KubernetesObject[]) =>
      objects
        .filter((o) => o.kind?.startsWith("ValidatingAdmissionPolicy"))
        .map((o) => `${o.kind} ${o.metadata?.name}`);
    expect(kinds(await render())).toEqual([]);
    expect(kinds(await render({ apiVersions: [policyApi], set: ["admissionPolicy.enabled=false"] }))).toEqual([]);
    const objects = await render({ apiVersions: [policyApi], set: ["services.recorder.enabled=false"] });
    const names = [
      "dedicated-nodes",
      "managed-label",
      "managed-namespaces",
      "rolebindings",
      "storage-class-copies",
    ].map((n) => `${release}-${n}`);
    expect(kinds(objects).sort()).toEqual(
      names.flatMap((n) => [`ValidatingAdmissionPolicy ${n}`, `ValidatingAdmissionPolicyBinding ${n}`]).sort(),
    );
    const writes = find<KubernetesObject & { spec: { matchConditions: { expression: string }[] } }>(
      objects,
      "ValidatingAdmissionPolicy",
      `${release}-managed-namespaces`,
    );
    // The sync worker writes tenant copies into managed namespaces, so it is exempt too.
    const accounts = ["isolation", "provisioner", "sync-worker", "watcher"].map(
      (s) => `system:serviceaccount:${namespace}:${release}-${s}`,
    );
    expect(writes.spec.matchConditions[0]?.expression).toContain(
      `request.userInfo.username in ${JSON.stringify(accounts)}`,
    );
    // RoleBindings by those accounts: each fixed tenant ClusterRole, for its own ServiceAccount only.
    const bindings = find<KubernetesObject & { spec: { variables: { name: string; expression: string }[] } }>(
      objects,
      "ValidatingAdmissionPolicy",
      `${release}-rolebindings`,
    );
    const grants = bindings.spec.variables.find((v) => v.name === "grants")?.expression ?? "";
    expect(JSON.parse(grants)).toEqual({
      [`${release}-isolation-tenant`]: `${release}-isolation`,
      [`${release}-provisioner-tenant`]: `${release}-provisioner`,
      [`${release}-sync-worker-tenant`]: `${release}-sync-worker`,
    });
  });

  it("keeps a sync worker through voluntary disruptions with a PodDisruptionBudget on its own pods", async () => {
    const objects = await render();
    const pdbs = objects.filter((o) => o.kind === "PodDisruptionBudget");
    expect(pdbs.map((o) => o.metadata?.name)).toContain(`${release}-sync-worker`);
    const pdb = pdbs.find((o) => o.metadata?.name === `${release}-sync-worker`) as KubernetesObject & {
      spec: { maxUnavailable: number; selector: unknown };
    };
    expect(pdb.spec.maxUnavailable).toBe(1);
    const { deployment } = container(objects, "sync-worker");
    expect(pdb.spec.selector).toEqual(deployment.spec?.selector);
    expect(deployment.spec?.replicas).toBe(2);
    expect(deployment.spec?.template.spec?.containers[0]?.command).toEqual([
      "node",
      "services/sync-worker/dist/bundle/main.js",
    ]);
  });

  it("ships CRDs byte-identical to libs/api/crds (run charts/tenantplane/sync-crds.sh after a CRD change)", () => {
    const source = join(repoRoot, "libs/api/crds");
    const sourceFiles = readdirSync(source)
      .filter((f) => f.endsWith(".yaml"))
      .sort();
    expect(chartCrdFiles()).toEqual(sourceFiles);
    for (const file of sourceFiles) {
      const same = readFileSync(join(chartDir, "files/crds", file)).equals(readFileSync(join(source, file)));
      expect(
        same,
        `charts/tenantplane/files/crds/${file} differs from libs/api/crds/${file}: run charts/tenantplane/sync-crds.sh`,
      ).toBe(true);
    }
  });
});

describe("chart against a real API server", () => {
  let cluster: HostCluster | undefined;
  const failures = trackFailures();

  beforeAll(async () => {
    cluster = await startHostCluster({ name: "chart" });
    const crds = chartCrdFiles().map(
      (f) => YAML.parse(readFileSync(join(chartDir, "files/crds", f), "utf8")) as object,
    );
    await installCrds(cluster.kubeConfig, crds);
    // Pods of the release must pass the strictest Pod Security level.
    await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({
      body: { metadata: { name: namespace, labels: { "pod-security.kubernetes.io/enforce": "restricted" } } },
    });
  });

  afterAll(async () => {
    await cluster?.stop({ keepLogs: failures.failed() });
    expect(liveProcesses()).toEqual([]);
  });

  function kc(): KubeConfig {
    if (cluster === undefined) throw new Error("host cluster did not start");
    return cluster.kubeConfig;
  }

  /**
   * client-node sends built-in kinds through its typed models, which silently drop fields they
   * do not know (a misspelt key would never reach the server). Asserting a lossless round trip
   * first means the API server judges exactly what Helm rendered.
   */
  function typed(object: KubernetesObject): KubernetesObject {
    const model = loadYaml<KubernetesObject>(JSON.stringify(object));
    expect(YAML.parse(dumpYaml(model)), `${describeObject(object)} has a field client-node does not know`).toEqual(
      object,
    );
    return model;
  }

  async function apply(objects: KubernetesObject[], dryRun: boolean): Promise<void> {
    const api = KubernetesObjectApi.makeApiClient(kc());
    for (const object of objects) {
      const model = typed(object);
      try {
        await api.patch(
          model,
          undefined,
          dryRun ? "All" : undefined,
          fieldManager,
          true,
          PatchStrategy.ServerSideApply,
        );
      } catch (error) {
        const body = (error as { body?: unknown }).body;
        throw new Error(
          `the API server rejected ${describeObject(object)}: ${typeof body === "string" ? body : String(error)}`,
        );
      }
    }
  }

  it("accepts every rendered object, default and with NATS credentials, TLS and admission policies, in a server-side apply dry run", async () => {
    await apply(await render(), true);
    await apply(
      await render({
        apiVersions: [policyApi],
        set: [
          "nats.existingSecret=nats-auth",
          "nats.credsFile.enabled=true",
          "image.tag=1.2.3",
          "nats.tls.ca.secretName=nats-ca",
          "nats.tls.clientCert.secretName=nats-client",
          "nats.streams.replicas=3",
          "nats.streams.decisionsMaxBytes=1073741824",
        ],
      }),
      true,
    );
  });

  it("installs the release and every Deployment becomes available under Pod Security 'restricted'", async () => {
    const objects = await render();
    await apply(objects, false);
    const apps = kc().makeApiClient(AppsV1Api);
    for (const service of services) {
      const name = `${release}-${service}`;
      await waitFor(
        async () => {
          const d = await apps.readNamespacedDeployment({ namespace, name });
          // A pod the API server refuses (Pod Security, quota, a missing ServiceAccount) surfaces here.
          const failure = d.status?.conditions?.find((c) => c.type === "ReplicaFailure" && c.status === "True");
          if (failure) throw new StopWaiting(`Deployment ${name} cannot create pods: ${failure.message}`);
          return d.status?.availableReplicas === d.spec?.replicas && (d.status?.observedGeneration ?? 0) >= 1;
        },
        { description: `Deployment ${namespace}/${name} to be available`, timeoutMs: 60_000 },
      );
    }
  });

  /** Answers "may this ServiceAccount do that?" as the API server's authorizer sees it. */
  async function allowed(
    service: string,
    verb: string,
    resource: string,
    opts: { group?: string; subresource?: string; namespace?: string; name?: string } = {},
  ): Promise<boolean> {
    const review = await kc()
      .makeApiClient(AuthorizationV1Api)
      .createSubjectAccessReview({
        body: {
          spec: {
            user: `system:serviceaccount:${namespace}:${release}-${service}`,
            groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
            resourceAttributes: {
              verb,
              resource,
              group: opts.group ?? "",
              subresource: opts.subresource,
              namespace: opts.namespace,
              name: opts.name,
            },
          },
        },
      });
    return review.status?.allowed ?? false;
  }

  /** A kubeconfig holding a bound token of the release's ServiceAccount for `service`, as the pod would. */
  async function serviceAccountConfig(service: string): Promise<KubeConfig> {
    if (cluster === undefined) throw new Error("host cluster did not start");
    return serviceAccountKubeConfig(cluster, namespace, `${release}-${service}`);
  }

  /**
   * Creates tenant `tenant`'s host namespace and runs the provisioner's own RoleBinding step in
   * it, both with the provisioner's token and the TENANT_ROLE_BINDINGS the chart gives it; waits
   * until the authorizer lets every bound service act there. Returns the Decisions it published.
   */
  async function provisionTenantAccess(tenant: string): Promise<PlannedDecision[]> {
    const value = container(await render(), "provisioner").env.get("TENANT_ROLE_BINDINGS")?.value ?? "";
    const grants = parseTenantRoleGrants(value);
    if (typeof grants === "string") throw new Error(grants);
    const objects = new Objects(await serviceAccountConfig("provisioner"), "tenantplane-provisioner");
    const hostNamespace = `tp-${tenant}`;
    if (!(await objects.get("v1", "Namespace", hostNamespace))) {
      await objects.create({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: hostNamespace,
          labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": tenant },
        },
      });
    }
    const tc = await objects.get(`${tp}/v1alpha1`, "TenantCluster", tenant);
    if (!tc) throw new Error(`TenantCluster ${tenant} does not exist`);
    // By id: a pass cut short re-publishes a Decision under the same id, as the service does.
    const decisions = new Map<string, PlannedDecision>();
    const deps = {
      objects,
      decide: tenantDecider(tenant, async (d) => {
        decisions.set(d.id ?? String(decisions.size), d);
      }),
      tenant,
      tenantCluster: tc,
      grants,
    };
    // Like the service, retry while the authorizer has not seen the provisioner's own binding yet.
    const foreign = await waitFor(
      () =>
        ensureRoleBindings(deps).then(
          (result) => ({ result }),
          (err: unknown) => {
            if (accessDenialOf(err)?.namespace === hostNamespace) return undefined;
            throw new StopWaiting(String(err));
          },
        ),
      { description: `the RoleBindings in ${hostNamespace}`, timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(foreign.result).toBeUndefined();
    // RBAC's authorizer learns new bindings through an informer: wait until it has them.
    await waitFor(
      async () => {
        const probes = await Promise.all([
          allowed("provisioner", "get", "secrets", { namespace: hostNamespace }),
          allowed("isolation", "create", "networkpolicies", { group: "networking.k8s.io", namespace: hostNamespace }),
          allowed("recorder", "create", "events", { namespace: hostNamespace }),
          allowed("sync-worker", "watch", "pods", { namespace: hostNamespace }),
        ]);
        return probes.every(Boolean);
      },
      { description: `every service to be allowed in ${hostNamespace}`, timeoutMs: 15_000, intervalMs: 100 },
    );
    return [...decisions.values()];
  }

  it("lets nothing act in a new tenant namespace until the provisioner, with its own token, binds each service's fixed role there", async () => {
    await kc()
      .makeApiClient(CustomObjectsApi)
      .createClusterCustomObject({
        group: tp,
        version: "v1alpha1",
        plural: "tenantclusters",
        body: { apiVersion: `${tp}/v1alpha1`, kind: "TenantCluster", metadata: { name: "dev" }, spec: {} },
      });
    // A service's own rights say nothing about tenant namespaces.
    expect(await allowed("provisioner", "get", "secrets", { namespace: "tp-dev" })).toBe(false);
    expect(await allowed("sync-worker", "get", "secrets", { namespace: "tp-dev" })).toBe(false);

    const decisions = await provisionTenantAccess("dev");
    expect(decisions.map((d) => `${d.action} ${d.kind} ${d.hostRef.namespace}/${d.hostRef.name}`).sort()).toEqual(
      tenantServices.map((s) => `Create RoleBinding tp-dev/${tenantRole(s)}`),
    );
    expect(decisions[0]?.reason).toMatch(
      /^lets ServiceAccount tenantplane-system\/tenantplane-\S+ act in tp-dev as ClusterRole /,
    );
    const rbac = kc().makeApiClient(RbacAuthorizationV1Api);
    const stored = (await rbac.listNamespacedRoleBinding({ namespace: "tp-dev" })).items;
    expect(
      stored
        .map((b) => [
          b.metadata?.name,
          b.roleRef.kind,
          b.roleRef.name,
          b.subjects?.map((x) => `${x.kind} ${x.namespace}/${x.name}`),
        ])
        .sort(),
    ).toEqual(
      tenantServices.map((s) => [
        tenantRole(s),
        "ClusterRole",
        tenantRole(s),
        [`ServiceAccount ${namespace}/${release}-${s}`],
      ]),
    );
    for (const binding of stored) {
      expect(binding.metadata?.labels).toMatchObject({
        "app.kubernetes.io/managed-by": "tenantplane",
        "tenantplane.io/tenant": "dev",
      });
      // The Decision was published and the record it travelled in is gone.
      expect(
        Object.keys(binding.metadata?.annotations ?? {}).filter((k) => k.startsWith("tenantplane.io/pending")),
      ).toEqual([]);
    }
    // A second pass finds everything in place: no write, no Decision.
    expect(await provisionTenantAccess("dev")).toEqual([]);
    expect(
      (await rbac.listNamespacedRoleBinding({ namespace: "tp-dev" })).items.map((b) => b.metadata?.resourceVersion),
    ).toEqual(stored.map((b) => b.metadata?.resourceVersion));
  });

  const grants: [
    service: string,
    verb: string,
    resource: string,
    opts: { group?: string; subresource?: string; namespace?: string; name?: string },
    expected: boolean,
  ][] = [
    ["watcher", "watch", "tenantclusters", { group: tp }, true],
    ["watcher", "list", "isolationprofiles", { group: tp }, true],
    ["watcher", "list", "syncpolicies", { group: tp }, true],
    ["watcher", "update", "leases", { group: "coordination.k8s.io", namespace }, true],
    ["watcher", "create", "leases", { group: "coordination.k8s.io", namespace }, true],
    ["watcher", "create", "leases", { group: "coordination.k8s.io", namespace: "kube-system" }, false],
    ["watcher", "patch", "tenantclusters", { group: tp, subresource: "status" }, false],
    ["watcher", "patch", "tenantclusters", { group: tp }, false],
    ["watcher", "create", "events", { namespace: "default" }, false],
    ["provisioner", "patch", "tenantclusters", { group: tp }, true],
    ["provisioner", "patch", "tenantclusters", { group: tp, subresource: "status" }, true],
    ["provisioner", "create", "namespaces", {}, true],
    ["provisioner", "delete", "namespaces", {}, true],
    ["provisioner", "create", "secrets", { namespace: "tp-dev" }, true],
    ["provisioner", "patch", "statefulsets", { group: "apps", namespace: "tp-dev" }, true],
    ["provisioner", "patch", "services", { namespace: "tp-dev" }, true],
    ["provisioner", "create", "events", { namespace: "default" }, true],
    ["provisioner", "delete", "tenantclusters", { group: tp }, false],
    ["provisioner", "delete", "secrets", { namespace: "tp-dev" }, true],
    ["provisioner", "list", "pods", { namespace: "tp-dev" }, true],
    ["provisioner", "watch", "pods", { namespace: "tp-dev" }, true],
    ["provisioner", "watch", "pods", { namespace: "kube-system" }, false],
    ["provisioner", "update", "secrets", { namespace: "tp-dev" }, false],
    ["provisioner", "get", "isolationprofiles", { group: tp }, true],
    ["provisioner", "patch", "isolationprofiles", { group: tp }, false],
    ["provisioner", "create", "pods", { namespace: "tp-dev" }, false],
    ["provisioner", "watch", "namespaces", {}, true],
    ["provisioner", "create", "deployments", { group: "apps", namespace: "tp-dev" }, true],
    ["provisioner", "patch", "configmaps", { namespace: "tp-dev" }, true],
    ["isolation", "get", "tenantclusters", { group: tp }, true],
    ["isolation", "get", "isolationprofiles", { group: tp }, true],
    ["isolation", "patch", "tenantclusters", { group: tp, subresource: "status" }, true],
    ["isolation", "patch", "namespaces", {}, true],
    ["isolation", "delete", "networkpolicies", { group: "networking.k8s.io", namespace: "tp-dev" }, true],
    ["isolation", "create", "resourcequotas", { namespace: "tp-dev" }, true],
    ["isolation", "list", "limitranges", { namespace: "tp-dev" }, true],
    ["isolation", "delete", "namespaces", {}, false],
    ["isolation", "create", "namespaces", {}, false],
    ["isolation", "patch", "tenantclusters", { group: tp }, false],
    ["isolation", "get", "secrets", { namespace: "tp-dev" }, false],
    ["isolation", "watch", "tenantclusters", { group: tp }, true],
    ["recorder", "watch", "tenantclusters", { group: tp }, true],
    ["recorder", "get", "tenantclusters", { group: tp }, true],
    ["recorder", "create", "events", { namespace: "default" }, true],
    ["recorder", "patch", "events", { namespace: "default" }, true],
    ["recorder", "create", "secrets", { namespace: "default" }, false],
    ["recorder", "patch", "tenantclusters", { group: tp, subresource: "status" }, false],
    ["recorder", "delete", "events", { namespace: "default" }, false],
    // Events in events.namespace, and the recorder's on host objects in bound tenant namespaces.
    ["recorder", "create", "events", { namespace: "tp-dev" }, true],
    ["recorder", "create", "events", { namespace: "kube-system" }, false],
    ["recorder", "create", "events", { namespace: "tp-unbound" }, false],
    ["provisioner", "create", "events", { namespace: "kube-system" }, false],
    ["isolation", "create", "events", { namespace: "default" }, true],
    ["sync-worker", "watch", "tenantclusters", { group: tp }, true],
    ["sync-worker", "list", "syncpolicies", { group: tp }, true],
    ["sync-worker", "patch", "tenantclusters", { group: tp, subresource: "status" }, true],
    ["sync-worker", "get", "secrets", { namespace: "tp-dev" }, true],
    ["sync-worker", "watch", "configmaps", { namespace: "tp-dev" }, true],
    ["sync-worker", "watch", "resourcequotas", { namespace: "tp-dev" }, true],
    ["sync-worker", "create", "resourcequotas", { namespace: "tp-dev" }, false],
    ["sync-worker", "create", "pods", { namespace: "tp-dev" }, true],
    ["sync-worker", "update", "services", { namespace: "tp-dev" }, true],
    ["sync-worker", "delete", "persistentvolumeclaims", { namespace: "tp-dev" }, true],
    ["sync-worker", "patch", "serviceaccounts", { namespace: "tp-dev" }, true],
    ["sync-worker", "create", "events", { namespace: "default" }, true],
    ["sync-worker", "create", "events", { namespace: "tp-dev" }, false],
    ["sync-worker", "patch", "tenantclusters", { group: tp }, false],
    ["sync-worker", "watch", "isolationprofiles", { group: tp }, true],
    ["sync-worker", "patch", "isolationprofiles", { group: tp }, false],
    ["sync-worker", "delete", "namespaces", {}, false],
    ["sync-worker", "create", "networkpolicies", { group: "networking.k8s.io", namespace: "tp-dev" }, false],
    ["sync-worker", "create", "statefulsets", { group: "apps", namespace: "tp-dev" }, false],
    ["sync-worker", "create", "rolebindings", { group: "rbac.authorization.k8s.io", namespace: "tp-dev" }, false],
    ["isolation", "create", "events", { namespace: "tp-dev" }, false],
    // One step outside what the provisioner bound: another namespace, the cluster scope.
    ["provisioner", "get", "secrets", { namespace: "tp-unbound" }, false],
    ["provisioner", "create", "secrets", { namespace: "kube-system" }, false],
    ["provisioner", "list", "secrets", {}, false],
    ["provisioner", "patch", "statefulsets", { group: "apps", namespace: "default" }, false],
    ["provisioner", "delete", "services", { namespace: "kube-system" }, false],
    ["provisioner", "list", "rolebindings", { group: "rbac.authorization.k8s.io", namespace: "tp-dev" }, true],
    // Its read caches: list and watch of what it writes, in tenant namespaces only.
    ["provisioner", "watch", "rolebindings", { group: "rbac.authorization.k8s.io", namespace: "tp-dev" }, true],
    ["provisioner", "watch", "rolebindings", { group: "rbac.authorization.k8s.io" }, false],
    ["provisioner", "watch", "secrets", { namespace: "tp-dev" }, true],
    ["provisioner", "watch", "statefulsets", { group: "apps", namespace: "tp-dev" }, true],
    ["provisioner", "watch", "secrets", {}, false],
    ["provisioner", "delete", "rolebindings", { group: "rbac.authorization.k8s.io", namespace: "tp-dev" }, true],
    ["provisioner", "delete", "rolebindings", { group: "rbac.authorization.k8s.io", namespace: "kube-system" }, false],
    ["provisioner", "update", "rolebindings", { group: "rbac.authorization.k8s.io", namespace: "tp-dev" }, false],
    // Creating RoleBindings is cluster-wide for RBAC (namespaces come and go); the admission
    // policy confines it to managed namespaces, fixed roles and the release's own accounts.
    ["provisioner", "create", "rolebindings", { group: "rbac.authorization.k8s.io", namespace: "kube-system" }, true],
    ["provisioner", "create", "clusterrolebindings", { group: "rbac.authorization.k8s.io" }, false],
    [
      "provisioner",
      "bind",
      "clusterroles",
      { group: "rbac.authorization.k8s.io", name: "tenantplane-sync-worker-tenant" },
      true,
    ],
    [
      "provisioner",
      "bind",
      "clusterroles",
      { group: "rbac.authorization.k8s.io", name: "tenantplane-provisioner-tenant" },
      true,
    ],
    ["provisioner", "bind", "clusterroles", { group: "rbac.authorization.k8s.io", name: "admin" }, false],
    [
      "provisioner",
      "bind",
      "clusterroles",
      { group: "rbac.authorization.k8s.io", name: "tenantplane-provisioner" },
      false,
    ],
    [
      "provisioner",
      "escalate",
      "clusterroles",
      { group: "rbac.authorization.k8s.io", name: "tenantplane-sync-worker-tenant" },
      false,
    ],
    ["provisioner", "create", "clusterroles", { group: "rbac.authorization.k8s.io" }, false],
    ["isolation", "create", "networkpolicies", { group: "networking.k8s.io", namespace: "tp-unbound" }, false],
    ["isolation", "create", "resourcequotas", { namespace: "default" }, false],
    ["isolation", "list", "networkpolicies", { group: "networking.k8s.io" }, false],
    ["isolation", "watch", "networkpolicies", { group: "networking.k8s.io", namespace: "tp-dev" }, true],
    ["isolation", "watch", "limitranges", { namespace: "tp-dev" }, true],
    ["isolation", "watch", "resourcequotas", {}, false],
    ["isolation", "create", "rolebindings", { group: "rbac.authorization.k8s.io", namespace: "tp-dev" }, false],
    ["sync-worker", "get", "secrets", { namespace: "tp-unbound" }, false],
    ["sync-worker", "get", "secrets", { namespace: "kube-system" }, false],
    ["sync-worker", "list", "secrets", {}, false],
    ["sync-worker", "watch", "pods", {}, false],
    ["sync-worker", "create", "configmaps", { namespace: "default" }, false],
    ["sync-worker", "deletecollection", "pods", { namespace: "tp-dev" }, false],
    ["recorder", "list", "secrets", {}, false],
    ["recorder", "get", "secrets", { namespace: "tp-dev" }, false],
    ["watcher", "get", "secrets", { namespace: "tp-dev" }, false],
    ["watcher", "create", "events", { namespace: "tp-dev" }, false],
  ];

  it("grants each ServiceAccount what its code calls and refuses the rest (SubjectAccessReview)", async () => {
    const line = ([service, verb, resource, opts]: (typeof grants)[number], answer: boolean) =>
      `${service} ${verb} ${resource}${opts.subresource ? `/${opts.subresource}` : ""}${opts.namespace ? ` in ${opts.namespace}` : ""}: ${answer ? "allowed" : "forbidden"}`;
    const answers = await Promise.all(
      grants.map(async ([service, verb, resource, opts]) => allowed(service, verb, resource, opts)),
    );
    // One comparison of the whole table, so a failure lists every wrong answer at once.
    expect(grants.map((g, i) => line(g, answers[i] ?? false))).toEqual(grants.map((g) => line(g, g[4])));
  });

  async function statusOf(request: Promise<unknown>): Promise<number> {
    try {
      await request;
      return 200;
    } catch (error) {
      return (error as { code?: number }).code ?? 0;
    }
  }

  it("lets each service make its real write calls with its own token, server-side apply creating objects included", async () => {
    const custom = kc().makeApiClient(CustomObjectsApi);
    await custom.createClusterCustomObject({
      group: tp,
      version: "v1alpha1",
      plural: "tenantclusters",
      body: { apiVersion: `${tp}/v1alpha1`, kind: "TenantCluster", metadata: { name: "rbac" }, spec: {} },
    });
    const hostNamespace = "tp-rbac";
    const ssa = (config: KubeConfig, object: KubernetesObject, manager: string) =>
      KubernetesObjectApi.makeApiClient(config).patch(
        object,
        undefined,
        undefined,
        manager,
        true,
        PatchStrategy.ServerSideApply,
      );

    const provisioner = await serviceAccountConfig("provisioner");
    // The namespace and the services' RoleBindings in it, as the provisioner creates them.
    await provisionTenantAccess("rbac");
    await ssa(
      provisioner,
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: hostNamespace, labels: { "app.kubernetes.io/managed-by": "tenantplane" } },
      },
      "tenantplane-provisioner",
    );
    await ssa(
      provisioner,
      {
        apiVersion: `${tp}/v1alpha1`,
        kind: "TenantCluster",
        metadata: { name: "rbac", finalizers: ["tenantplane.io/teardown"] },
      },
      "tenantplane-provisioner",
    );
    await provisioner.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: hostNamespace,
      body: { metadata: { name: "rbac-pki" }, stringData: { k: "v" } },
    });
    await ssa(
      provisioner,
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "rbac-api", namespace: hostNamespace },
        spec: { ports: [{ port: 443 }] },
      } as KubernetesObject,
      "tenantplane-provisioner",
    );
    const labels = { app: "k3s" };
    await ssa(
      provisioner,
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "k3s", namespace: hostNamespace },
        spec: {
          serviceName: "k3s",
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: "k3s", image: "registry.invalid/k3s:1" }] } },
        },
      } as KubernetesObject,
      "tenantplane-provisioner",
    );
    await provisioner.makeApiClient(CustomObjectsApi).patchClusterCustomObjectStatus(
      {
        group: tp,
        version: "v1alpha1",
        plural: "tenantclusters",
        name: "rbac",
        body: {
          apiVersion: `${tp}/v1alpha1`,
          kind: "TenantCluster",
          metadata: { name: "rbac" },
          status: { hostNamespace },
        },
        fieldManager: "tenantplane-provisioner",
        force: true,
      },
      setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply),
    );

    // The teardown of a kept namespace: look for foreign objects, remove only its own.
    const provisionerCore = provisioner.makeApiClient(CoreV1Api);
    expect(await statusOf(provisionerCore.listNamespacedPod({ namespace: hostNamespace }))).toBe(200);
    expect(
      await statusOf(
        provisioner
          .makeApiClient(CustomObjectsApi)
          .getClusterCustomObject({ group: tp, version: "v1alpha1", plural: "isolationprofiles", name: "absent" }),
      ),
    ).toBe(404);

    const isolation = await serviceAccountConfig("isolation");
    await ssa(
      isolation,
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: hostNamespace, labels: { "pod-security.kubernetes.io/enforce": "baseline" } },
      },
      "tenantplane-isolation",
    );
    await ssa(
      isolation,
      {
        apiVersion: "v1",
        kind: "ResourceQuota",
        metadata: { name: "rbac", namespace: hostNamespace },
        spec: { hard: { pods: "10" } },
      } as KubernetesObject,
      "tenantplane-isolation",
    );
    const isolationCore = isolation.makeApiClient(CoreV1Api);
    expect(
      (await isolationCore.listNamespacedResourceQuota({ namespace: hostNamespace })).items.map(
        (q) => q.metadata?.name,
      ),
    ).toEqual(["rbac"]);
    await isolationCore.deleteNamespacedResourceQuota({ namespace: hostNamespace, name: "rbac" });
    expect(await statusOf(isolationCore.deleteNamespace({ name: hostNamespace }))).toBe(403);
    expect(await statusOf(isolationCore.readNamespacedSecret({ namespace: hostNamespace, name: "rbac-pki" }))).toBe(
      403,
    );

    const recorder = await serviceAccountConfig("recorder");
    const now = new Date();
    await recorder.makeApiClient(CoreV1Api).createNamespacedEvent({
      namespace: "default",
      body: {
        metadata: { name: "rbac.test" },
        involvedObject: { apiVersion: `${tp}/v1alpha1`, kind: "TenantCluster", name: "rbac" },
        reason: "Test",
        message: "m",
        type: "Normal",
        firstTimestamp: now,
        lastTimestamp: now,
      },
    });
    expect(
      await statusOf(
        recorder
          .makeApiClient(CoreV1Api)
          .createNamespacedSecret({ namespace: "default", body: { metadata: { name: "nope" } } }),
      ),
    ).toBe(403);

    const watcher = await serviceAccountConfig("watcher");
    const leases = watcher.makeApiClient(CoordinationV1Api);
    const lease = await leases.createNamespacedLease({
      namespace,
      body: { metadata: { name: "rbac-lease" }, spec: { holderIdentity: "w-0", leaseDurationSeconds: 15 } },
    });
    await leases.replaceNamespacedLease({
      namespace,
      name: "rbac-lease",
      body: { ...lease, spec: { ...lease.spec, holderIdentity: "w-1" } },
    });
    expect(
      await statusOf(
        leases.createNamespacedLease({ namespace: "default", body: { metadata: { name: "rbac-lease" } } }),
      ),
    ).toBe(403);
    const listed = (await watcher
      .makeApiClient(CustomObjectsApi)
      .listClusterCustomObject({ group: tp, version: "v1alpha1", plural: "tenantclusters" })) as {
      items: KubernetesObject[];
    };
    expect(listed.items.map((t) => t.metadata?.name).sort()).toEqual(["dev", "rbac"]);

    // The sync worker's calls, as raw JSON with its own token: list+watch, create, replace
    // with a resourceVersion, apply a Pod, delete with preconditions, read the kubeconfig Secret.
    const syncWorker = new JsonClient(await serviceAccountConfig("sync-worker"));
    const copies = resourcePath("v1", "configmaps", hostNamespace);
    const labelSelector = "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/tenant=rbac";
    await syncWorker.request("GET", copies, { query: { labelSelector } });
    await syncWorker.request("GET", copies, { query: { labelSelector, watch: true, timeoutSeconds: 1 } });
    const copy = await syncWorker.request<KubernetesObject>("POST", copies, {
      query: { fieldManager: "tenantplane-sync-worker" },
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c-x-web-x-rbac" }, data: { a: "1" } },
    });
    const replaced = await syncWorker.request<KubernetesObject>("PUT", `${copies}/c-x-web-x-rbac`, {
      query: { fieldManager: "tenantplane-sync-worker" },
      body: { ...copy, data: { a: "2" } },
    });
    await syncWorker.request("DELETE", `${copies}/c-x-web-x-rbac`, {
      body: { preconditions: { uid: replaced.metadata?.uid, resourceVersion: replaced.metadata?.resourceVersion } },
    });
    await syncWorker.request("PATCH", `${resourcePath("v1", "pods", hostNamespace)}/p-x-web-x-rbac`, {
      query: { fieldManager: "tenantplane-sync-worker", force: true },
      contentType: "application/apply-patch+yaml",
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p-x-web-x-rbac" },
        spec: { containers: [{ name: "c", image: "registry.invalid/app:1" }] },
      },
    });
    await syncWorker.request("GET", `${resourcePath("v1", "secrets", hostNamespace)}/rbac-pki`);
    await syncWorker.request("PATCH", `/apis/${tp}/v1alpha1/tenantclusters/rbac/status`, {
      query: { fieldManager: "tenantplane-sync-worker", force: true },
      contentType: "application/apply-patch+yaml",
      body: {
        apiVersion: `${tp}/v1alpha1`,
        kind: "TenantCluster",
        metadata: { name: "rbac" },
        status: { sync: { inSync: 0, skipped: 0, failed: 0 } },
      },
    });
    const refused = (request: Promise<unknown>) =>
      request.then(
        () => 200,
        (err: { code?: number }) => err.code ?? 0,
      );
    expect(await refused(syncWorker.request("DELETE", `/api/v1/namespaces/${hostNamespace}`))).toBe(403);
    // One step outside the tenant namespaces, the same tokens are refused.
    expect(await refused(syncWorker.request("GET", resourcePath("v1", "secrets")))).toBe(403);
    expect(await refused(syncWorker.request("GET", resourcePath("v1", "secrets", "kube-system")))).toBe(403);
    expect(
      await refused(
        syncWorker.request("GET", resourcePath("v1", "configmaps"), {
          query: { labelSelector, watch: true, timeoutSeconds: 1 },
        }),
      ),
    ).toBe(403);
    expect(
      await refused(
        syncWorker.request("POST", resourcePath("v1", "configmaps", "default"), {
          body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c-x-web-x-rbac" } },
        }),
      ),
    ).toBe(403);
    const provisionerJson = new JsonClient(provisioner);
    expect(await refused(provisionerJson.request("GET", resourcePath("v1", "secrets")))).toBe(403);
    expect(
      await refused(
        provisionerJson.request("POST", resourcePath("v1", "secrets", "default"), {
          body: { apiVersion: "v1", kind: "Secret", metadata: { name: "rbac-pki" } },
        }),
      ),
    ).toBe(403);
    expect(await refused(provisionerJson.request("GET", resourcePath("apps/v1", "statefulsets", "kube-system")))).toBe(
      403,
    );
    const isolationJson = new JsonClient(isolation);
    expect(
      await refused(isolationJson.request("GET", resourcePath("networking.k8s.io/v1", "networkpolicies", "default"))),
    ).toBe(403);
    expect(
      await refused(
        syncWorker.request("POST", `/apis/networking.k8s.io/v1/namespaces/${hostNamespace}/networkpolicies`, {
          body: {
            apiVersion: "networking.k8s.io/v1",
            kind: "NetworkPolicy",
            metadata: { name: "x" },
            spec: { podSelector: {} },
          },
        }),
      ),
    ).toBe(403);

    // Teardown as the provisioner does it: delete the namespace, release the finalizer by merge patch.
    await provisioner.makeApiClient(CoreV1Api).deleteNamespace({ name: hostNamespace });
    await KubernetesObjectApi.makeApiClient(provisioner).patch(
      { apiVersion: `${tp}/v1alpha1`, kind: "TenantCluster", metadata: { name: "rbac", finalizers: [] } },
      undefined,
      undefined,
      "tenantplane-provisioner",
      undefined,
      PatchStrategy.MergePatch,
    );
    const released = (await custom.getClusterCustomObject({
      group: tp,
      version: "v1alpha1",
      plural: "tenantclusters",
      name: "rbac",
    })) as KubernetesObject;
    expect(released.metadata?.finalizers ?? []).toEqual([]);
    expect(await statusOf(KubernetesObjectApi.makeApiClient(provisioner).delete(released))).toBe(403);
  });
});

/**
 * The services run as the chart configures them, each with only its own ServiceAccount's token:
 * rights in a tenant namespace come from the RoleBindings the provisioner makes there, so the
 * provisioner and the isolation service cache their namespaced kinds per tenant namespace, and
 * a resync of an unchanged tenant costs them no request, as the API server's audit log shows.
 */
describe("the services under the chart's RBAC", () => {
  let cluster: HostCluster | undefined;
  let nats: NatsServer | undefined;
  let fleet: ServiceFleet | undefined;
  let standIn: TenantApiServer | undefined;
  let nc: NatsConnection | undefined;
  const failures = trackFailures();
  const work = mkdtempSync(join(tmpdir(), "tenantplane-chart-rbac-"));
  const agents = ["tenantplane-provisioner", "tenantplane-isolation"];
  const tcPath = (name: string) => `/apis/${tp}/v1alpha1/tenantclusters/${name}`;
  // What the chart grants, and nothing of the rest of the release (its pods would not run code).
  const rbacKinds = new Set(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);

  beforeAll(async () => {
    [cluster, nats] = await Promise.all([startHostCluster({ name: "chart-rbac", auditLog: true }), startNats()]);
    const admin = new Objects(cluster.kubeConfig, fieldManager);
    await installCrds(
      cluster.kubeConfig,
      chartCrdFiles().map((f) => YAML.parse(readFileSync(join(chartDir, "files/crds", f), "utf8")) as object),
    );
    await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    const objects = await render();
    for (const object of objects.filter((o) => rbacKinds.has(o.kind ?? ""))) await admin.apply(object);

    fleet = new ServiceFleet({ kubeconfigPath: "/nonexistent", natsUrl: nats.url });
    const running: ServiceName[] = ["watcher", "provisioner", "isolation"];
    await Promise.all(
      running.map(async (service) => {
        // The environment the chart gives the service, but for where NATS and the HTTP port are
        // here; no periodic resync within the suite.
        const env: NodeJS.ProcessEnv = { POD_NAMESPACE: namespace };
        for (const e of container(objects, service).container.env ?? []) {
          if (e.value !== undefined && !["NATS_URL", "HTTP_PORT", "LOG_LEVEL"].includes(e.name)) env[e.name] = e.value;
        }
        if (service === "watcher") env.RESYNC_INTERVAL_SECONDS = "3600";
        env.KUBECONFIG = await serviceAccountKubeconfigFile(
          cluster!,
          namespace,
          `${release}-${service}`,
          join(work, `${service}.kubeconfig`),
        );
        await fleet!.start(service, env);
      }),
    );
    nc = await connect({ servers: nats.url });
  }, 400_000);

  afterAll(async () => {
    const keepLogs = failures.failed();
    await nc?.close();
    await fleet?.stop({ keepLogs });
    await standIn?.stop({ keepLogs });
    await nats?.stop({ keepLogs });
    await cluster?.stop({ keepLogs });
    rmSync(work, { recursive: true, force: true });
    expect(liveProcesses()).toEqual([]);
  });

  it("serve a tenant from per-namespace caches: a resync of an unchanged tenant makes no request", async () => {
    const host = cluster!;
    const api = new JsonClient(host.kubeConfig, { userAgent: "e2e/1" });
    await api.request("PATCH", tcPath("bound"), {
      query: { fieldManager: "e2e", force: true },
      contentType: "application/apply-patch+yaml",
      body: {
        apiVersion: `${tp}/v1alpha1`,
        kind: "TenantCluster",
        metadata: { name: "bound" },
        spec: { controlPlane: { expose: { loadBalancer: { enabled: true } } } },
      },
    });
    await setLoadBalancerIngress(host.kubeConfig, "tp-bound", "k3s", "127.0.0.220");
    standIn = await startTenantStandIn(host.kubeConfig, "bound", "127.0.0.220");
    type Tenant = { status?: { phase?: string } };
    await waitFor(async () => (await api.request<Tenant>("GET", tcPath("bound"))).status?.phase === "Ready", {
      description: "TenantCluster bound to be Ready",
      timeoutMs: 180_000,
      intervalMs: 500,
    });
    // Neither service may watch its namespaced kinds cluster-wide: each watches them in tp-bound.
    const watched = readAudit(host.auditLogPath!)
      .filter((r) => agents.includes(agentOf(r)) && r.verb === "watch" && r.code === 200)
      .map((r) => `${agentOf(r)} ${r.resource} ${r.namespace}`);
    const inTenant = (agent: string, resources: string[]) =>
      resources.map((resource) => `tenantplane-${agent} ${resource} tp-bound`);
    expect(new Set(watched)).toEqual(
      new Set([
        ...["namespaces", "tenantclusters", "isolationprofiles"].flatMap((r) => [
          `tenantplane-provisioner ${r} `,
          `tenantplane-isolation ${r} `,
        ]),
        ...inTenant("provisioner", [
          "secrets",
          "services",
          "statefulsets",
          "configmaps",
          "deployments",
          "rolebindings",
          "pods",
        ]),
        ...inTenant("isolation", ["networkpolicies", "resourcequotas", "limitranges"]),
        // The host's nodes, which the isolation service reserves for Dedicated tenants.
        "tenantplane-isolation nodes ",
      ]),
    );

    const jsm = await jetstreamManager(nc!);
    await consumersSettled(jsm, ["provisioner", "isolation"]);
    await new Promise((r) => setTimeout(r, 2_000));
    const requests = await requestsOfResync({
      js: jetstream(nc!),
      jsm,
      tenant: "bound",
      durables: ["provisioner", "isolation"],
      auditLogPath: host.auditLogPath!,
      agents,
    });
    expect(describeRequests(requests.filter(isWrite))).toEqual([]);
    expect(describeRequests(requests.filter((r) => r.verb === "list"))).toEqual([]);
    expect(describeRequests(requests.filter((r) => r.verb === "get"))).toEqual([]);
  }, 400_000);
});
