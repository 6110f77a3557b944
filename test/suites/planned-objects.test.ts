import { CoreV1Api, StorageV1Api } from "@kubernetes/client-node";
import { parseIsolationProfileSpec, type SyncKind, type SyncPolicySpec } from "@tenantplane/api";
import { ApiError, JsonClient, resourcePath } from "@tenantplane/kube";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { compileHostRules, plan, type HostObject, type PlannedDecisionWithObject } from "@tenantplane/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  liveProcesses,
  startHostCluster,
  testProvisionerName,
  trackFailures,
  waitFor,
  type HostCluster,
} from "../harness/index.js";

// The host accepts every object the planner says Create: a corpus of tenant objects as a
// tenant API stores them (defaults filled in, label keys folded, the token volume added),
// each one a case where a field or reference of the tenant's would make the host refuse
// its copy, is planned and every Create is sent as the sync worker sends it, to a real
// API server with the host's admission (ServiceAccount, PodSecurity, DefaultStorageClass).
// What the planner cannot make work is a Skip that names the reason instead.

const tenant = "accept";
const namespace = hostNamespaceFor(tenant);
const failures = trackFailures();
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// A profile allowing NodePort and LoadBalancer Services and granting one toleration.
const rules = compileHostRules(
  parseIsolationProfileSpec({
    workloads: {
      services: { nodePort: true, loadBalancer: true },
      tolerations: [{ key: "pool", operator: "Equal", value: "tenants", effect: "NoSchedule" }],
    },
  }),
);
const podEnvironment = { apiHost: "10.96.0.10", apiPort: 443, dnsHost: "10.96.0.53" };
const policyOf = (...kinds: SyncKind[]): SyncPolicySpec => ({ toHost: kinds.map((kind) => ({ kind })) });

let cluster: HostCluster | undefined;
let client: JsonClient;

beforeAll(async () => {
  cluster = await startHostCluster({ name: "planned-objects" });
  client = new JsonClient(cluster.kubeConfig);
  await client.request("POST", "/api/v1/namespaces", {
    body: {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace, labels: { "pod-security.kubernetes.io/enforce": rules.podSecurity } },
    },
  });
  // A class besides the default one, for claims that ask for it by annotation.
  await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({
    body: {
      metadata: { name: "fast" },
      provisioner: testProvisionerName,
      reclaimPolicy: "Delete",
      volumeBindingMode: "Immediate",
    },
  });
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await waitFor(() => core.readNamespacedServiceAccount({ namespace, name: "default" }).then(() => true), {
    timeoutMs: 60_000,
    description: `ServiceAccount ${namespace}/default`,
  });
});

afterAll(async () => {
  await cluster?.stop({ keepLogs: failures.failed() });
  expect(liveProcesses()).toEqual([]);
});

const plural: Record<string, string> = {
  Pod: "pods",
  Service: "services",
  ConfigMap: "configmaps",
  Secret: "secrets",
  PersistentVolumeClaim: "persistentvolumeclaims",
  ServiceAccount: "serviceaccounts",
};

/** Sends `object` as the sync worker creates a copy; the API server's refusal, or undefined. */
async function create(object: HostObject, dryRun = false): Promise<string | undefined> {
  try {
    await client.request("POST", resourcePath("v1", plural[object.kind]!, object.metadata.namespace), {
      query: { fieldManager: "tenantplane-sync", ...(dryRun ? { dryRun: "All" } : {}) },
      body: object,
    });
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return `${error.code} ${error.message}`;
    throw error;
  }
}

async function read(kind: string, name: string): Promise<Obj> {
  return client.request<Obj>("GET", resourcePath("v1", plural[kind]!, namespace, name));
}

const meta = (name: string, ns = "shop", labels?: Record<string, string>) => ({
  name,
  namespace: ns,
  ...(labels ? { labels } : {}),
});

/** The shop/web Pod of examples/tenant/workloads.yaml as the tenant API stores it. */
const shopWeb: Obj = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("web", "shop", { app: "web" }),
  spec: {
    serviceAccountName: "web",
    serviceAccount: "web",
    containers: [
      {
        name: "web",
        image: "nginx:1.27",
        ports: [{ containerPort: 8080, protocol: "TCP" }],
        envFrom: [{ configMapRef: { name: "web-config" } }, { secretRef: { name: "web-credentials" } }],
        volumeMounts: [
          { name: "nginx", mountPath: "/etc/nginx/conf.d" },
          { name: "cache", mountPath: "/var/cache/nginx" },
          { name: "kube-api-access-x7k2p", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true },
        ],
      },
    ],
    volumes: [
      { name: "nginx", configMap: { name: "nginx.conf", defaultMode: 420 } },
      { name: "cache", persistentVolumeClaim: { claimName: "web-cache" } },
      {
        name: "kube-api-access-x7k2p",
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
            { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
            {
              downwardAPI: {
                items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
              },
            },
          ],
        },
      },
    ],
    tolerations: [
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    ],
    restartPolicy: "Always",
    dnsPolicy: "ClusterFirst",
    enableServiceLinks: true,
    priority: 0,
    preemptionPolicy: "PreemptLowerPriority",
  },
};

const container = { name: "app", image: "busybox:1.36", command: ["sleep", "3600"] };

/** Tenant objects, each a way a copy used to be refused (or could be); planned under `policy`. */
const corpus: Array<{ policy: SyncPolicySpec; objects: Obj[] }> = [
  {
    // ServiceAccounts stay in the tenant: the Pod runs as the host namespace's default.
    policy: policyOf("Pod", "ConfigMap", "Secret", "Service", "PersistentVolumeClaim"),
    objects: [shopWeb],
  },
  {
    policy: policyOf("Pod", "ConfigMap", "Service", "PersistentVolumeClaim", "ServiceAccount"),
    objects: [
      // Optional references to Secrets, which this policy never copies, are left out.
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: meta("optional-refs"),
        spec: {
          imagePullSecrets: [{ name: "registry" }],
          containers: [
            {
              ...container,
              env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "api", key: "t", optional: true } } }],
              envFrom: [{ secretRef: { name: "extra", optional: true } }],
              volumeMounts: [{ name: "tls", mountPath: "/tls" }],
            },
          ],
          volumes: [
            { name: "tls", secret: { secretName: "tls", optional: true, defaultMode: 420 } },
            { name: "bundle", projected: { sources: [{ secret: { name: "ca", optional: true } }] } },
          ],
        },
      },
      // A required one is a Skip.
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: meta("required-ref"),
        spec: { containers: [{ ...container, envFrom: [{ secretRef: { name: "db" } }] }] },
      },
    ],
  },
  {
    policy: policyOf("Pod", "ConfigMap", "Secret", "Service", "PersistentVolumeClaim", "ServiceAccount"),
    objects: [
      // A control-plane toleration the profile does not grant, beside one it does.
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: meta("tolerant"),
        spec: {
          containers: [container],
          tolerations: [
            { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
            { key: "node-role.kubernetes.io/master", operator: "Exists", effect: "NoSchedule" },
            { key: "pool", operator: "Equal", value: "tenants", effect: "NoSchedule" },
          ],
        },
      },
      // A Deployment's Pod as a 1.34 tenant API stores it: matchLabelKeys already folded.
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: meta("web-7d9f-abcde", "shop", { app: "web", "pod-template-hash": "7d9f" }),
        spec: {
          containers: [container],
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: "topology.kubernetes.io/zone",
              whenUnsatisfiable: "ScheduleAnyway",
              labelSelector: {
                matchLabels: { app: "web" },
                matchExpressions: [{ key: "pod-template-hash", operator: "In", values: ["7d9f"] }],
              },
              matchLabelKeys: ["pod-template-hash"],
            },
          ],
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 50,
                  podAffinityTerm: {
                    topologyKey: "kubernetes.io/hostname",
                    labelSelector: {
                      matchLabels: { app: "web" },
                      matchExpressions: [{ key: "pod-template-hash", operator: "In", values: ["7d9f"] }],
                    },
                    matchLabelKeys: ["pod-template-hash"],
                  },
                },
              ],
            },
          },
        },
      },
      // Three nameservers of its own beside the tenant's DNS server.
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: meta("resolver"),
        spec: {
          containers: [container],
          dnsPolicy: "ClusterFirst",
          dnsConfig: { nameservers: ["192.0.2.1", "192.0.2.2", "192.0.2.3"], searches: ["corp.example"] },
        },
      },
      // A generic ephemeral volume whose class is asked by the beta annotation.
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: meta("scratch"),
        spec: {
          containers: [{ ...container, volumeMounts: [{ name: "scratch", mountPath: "/scratch" }] }],
          volumes: [
            {
              name: "scratch",
              ephemeral: {
                volumeClaimTemplate: {
                  metadata: { annotations: { "volume.beta.kubernetes.io/storage-class": "fast" } },
                  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
                },
              },
            },
          ],
        },
      },
      // A claim whose class is asked by the beta annotation, as the tenant API stores it.
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { ...meta("fast-data"), annotations: { "volume.beta.kubernetes.io/storage-class": "fast" } },
        spec: {
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: "1Gi" } },
          volumeMode: "Filesystem",
        },
      },
      // A ClusterIP Service with external IPs, with the fields the tenant API defaulted.
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta("external"),
        spec: {
          type: "ClusterIP",
          selector: { app: "web" },
          ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
          clusterIP: "10.43.12.7",
          clusterIPs: ["10.43.12.7"],
          externalIPs: ["198.51.100.20"],
          externalTrafficPolicy: "Cluster",
          internalTrafficPolicy: "Cluster",
          ipFamilies: ["IPv4"],
          ipFamilyPolicy: "SingleStack",
          sessionAffinity: "None",
        },
      },
      // A LoadBalancer with the node ports, health-check port and address the tenant API allocated.
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta("public"),
        spec: {
          type: "LoadBalancer",
          selector: { app: "web" },
          ports: [{ port: 443, targetPort: 8443, protocol: "TCP", nodePort: 31443 }],
          clusterIP: "10.43.12.8",
          clusterIPs: ["10.43.12.8"],
          externalTrafficPolicy: "Local",
          healthCheckNodePort: 32000,
          allocateLoadBalancerNodePorts: true,
          internalTrafficPolicy: "Cluster",
          ipFamilies: ["IPv4"],
          ipFamilyPolicy: "SingleStack",
          sessionAffinity: "ClientIP",
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        },
      },
      // A headless Service without a selector: the tenant API requires both families.
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta("peers"),
        spec: {
          clusterIP: "None",
          clusterIPs: ["None"],
          ports: [{ port: 5432, protocol: "TCP", targetPort: 5432 }],
          ipFamilies: ["IPv4", "IPv6"],
          ipFamilyPolicy: "RequireDualStack",
          internalTrafficPolicy: "Cluster",
          sessionAffinity: "None",
          type: "ClusterIP",
        },
      },
    ],
  },
];

const planned: PlannedDecisionWithObject[] = corpus.flatMap(
  ({ policy, objects }) =>
    plan({ tenant, policy, tenantObjects: objects, hostObjects: [], rules, podEnvironment }).decisions,
);
const copyOf = (name: string) => planned.find((d) => d.tenantRef.name === name)!;

describe("the host accepts every Create the planner plans", () => {
  it("creates each planned copy of the corpus, and skips only what cannot work, saying why", async () => {
    expect(planned.filter((d) => d.action === "Skip").map((d) => `${d.tenantRef.name}: ${d.reason}`)).toEqual([
      "required-ref: cannot be synced as written: spec.containers[0].envFrom[0].secretRef: Secret db will never have a host copy: SyncPolicy toHost does not list Secret",
    ]);
    const creates = planned.filter((d) => d.action === "Create");
    expect(creates).toHaveLength(10);
    const refused: string[] = [];
    for (const decision of creates) {
      const problem = await create(decision.object!);
      if (problem !== undefined) refused.push(`${decision.kind} ${decision.tenantRef.name}: ${problem}`);
    }
    expect(refused).toEqual([]);
  });

  it("stores what the reasons say: the host account, the tolerations, the class, the Service without its partners", async () => {
    const web = await read("Pod", copyOf("web").hostRef.name);
    expect(web["spec"].serviceAccountName).toBe("default");
    expect(copyOf("web").reason).toContain(
      "runs as host ServiceAccount default: SyncPolicy does not sync ServiceAccount web",
    );

    const tolerant = await read("Pod", copyOf("tolerant").hostRef.name);
    const keys = (tolerant["spec"].tolerations as Obj[]).map((t) => t["key"]);
    expect(keys).toContain("pool");
    expect(keys).not.toContain("node-role.kubernetes.io/control-plane");
    expect(copyOf("tolerant").reason).toContain(
      "toleration node-role.kubernetes.io/control-plane Exists (NoSchedule) removed: not granted by IsolationProfile spec.workloads.tolerations",
    );

    const claim = await read("PersistentVolumeClaim", copyOf("fast-data").hostRef.name);
    // The tenant's own copy of the class (README: Claims and storage), which the planner names.
    expect(claim["spec"].storageClassName).toBe(`tp-${tenant}.fast`);

    const external = await read("Service", copyOf("external").hostRef.name);
    expect(external["spec"]).not.toHaveProperty("externalIPs");
    expect(external["spec"]).not.toHaveProperty("externalTrafficPolicy");
    const lb = await read("Service", copyOf("public").hostRef.name);
    expect(lb["spec"].externalTrafficPolicy).toBe("Local");
    expect(lb["spec"].healthCheckNodePort).toBeGreaterThan(0);
  });

  it("would have been refused as translated before: each normalisation answers a real rule of the host", async () => {
    const variant = (decision: PlannedDecisionWithObject, name: string, change: (spec: Obj) => void): HostObject => {
      const object = structuredClone(decision.object!);
      object.metadata.name = name;
      change(object["spec"] as Obj);
      return object;
    };
    expect(
      await create(
        variant(copyOf("web"), "web-own-account", (spec) => (spec["serviceAccountName"] = "web-x-shop-x-accept")),
        true,
      ),
    ).toMatch(/^403 .*serviceaccount "web-x-shop-x-accept" not found/);
    expect(
      await create(
        variant(copyOf("external"), "external-with-policy", (spec) => (spec["externalTrafficPolicy"] = "Cluster")),
        true,
      ),
    ).toMatch(/^422 .*may only be set for externally-accessible services/);
    expect(
      await create(
        variant(copyOf("web-7d9f-abcde"), "web-keys", (spec) => {
          spec["topologySpreadConstraints"][0].matchLabelKeys = ["pod-template-hash"];
        }),
        true,
      ),
    ).toMatch(/^422 .*exists in both matchLabelKeys and labelSelector/);
    expect(
      await create(
        variant(copyOf("resolver"), "resolver-four", (spec) => spec["dnsConfig"].nameservers.push("192.0.2.3")),
        true,
      ),
    ).toMatch(/^422 .*must not have more than 3 nameservers/);
  });
});
