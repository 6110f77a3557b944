import type { KubernetesObject } from "@kubernetes/client-node";
import { ControlPlaneSpecSchema, crdManifests, parseIsolationProfileSpec, parseTenantCluster } from "@tenantplane/api";
import { compileIsolation } from "@tenantplane/isolation";
import { EventRecorder, Objects, runWithLeaderElection } from "@tenantplane/kube";
import { createLogger } from "@tenantplane/runtime";
import { hostNamespaceFor } from "@tenantplane/mapping";
import {
  apiService,
  buildKubeconfig,
  controlPlaneStatefulSet,
  generateTenantPki,
  headlessService,
  hostNamespaceManifest,
  kubeconfigSecret,
  pkiSecret,
  signClientCertificate,
} from "@tenantplane/provisioner/desired-objects";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fieldsNotStored,
  installCrds,
  liveProcesses,
  readAudit,
  startHostCluster,
  trackFailures,
  type HostCluster,
} from "../harness/index.js";

// Every object tenantplane's isolation and provisioner services compile is written through
// their own write path (Objects), read back from the real API server and compared field by
// field: a field the compiler set and the server did not store is a hole in isolation.

const tenant = "applied";
const namespace = hostNamespaceFor(tenant);
// This suite's address from the tenant API range reserved for it.
const loadBalancerAddress = "127.0.0.100";

// A profile that sets every setting away from its default, in every direction.
const richProfile = parseIsolationProfileSpec({
  podSecurity: { enforce: "baseline", audit: "restricted", warn: "baseline", version: "v1.34" },
  network: {
    defaultDeny: { ingress: true, egress: true },
    allow: {
      dns: true,
      sameNamespace: true,
      namespaces: [
        { name: "ingress-nginx", direction: "Ingress" },
        { name: "monitoring", direction: "Both", ports: [{ port: 9090, endPort: 9100 }] },
        { name: "logging", direction: "Egress", ports: [{ protocol: "UDP", port: 514 }] },
      ],
      cidrs: [
        {
          cidr: "0.0.0.0/0",
          except: ["10.0.0.0/8", "169.254.169.254/32"],
          direction: "Egress",
          ports: [{ protocol: "TCP", port: 443 }],
        },
        { cidr: "192.168.10.0/24", direction: "Ingress", ports: [{ protocol: "SCTP", port: 3868 }] },
        { cidr: "2001:db8::/32", direction: "Both" },
      ],
    },
  },
  resourceQuota: {
    hard: {
      pods: "20",
      "requests.cpu": "3",
      "requests.memory": "6Gi",
      "limits.cpu": "6",
      "limits.memory": "12Gi",
      persistentvolumeclaims: "5",
      "requests.storage": "40Gi",
      "services.loadbalancers": "1",
      "count/secrets": "30",
    },
  },
  limitRange: {
    container: {
      default: { cpu: "500m", memory: "512Mi" },
      defaultRequest: { cpu: "50m", memory: "64Mi" },
      min: { cpu: "10m", memory: "16Mi" },
      max: { cpu: "2", memory: "4Gi" },
    },
    persistentVolumeClaim: { min: { storage: "1Gi" }, max: { storage: "20Gi" } },
  },
});

const tenantCluster = parseTenantCluster({
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "TenantCluster",
  metadata: { name: tenant },
  spec: {
    isolationProfileRef: { name: "rich" },
    controlPlane: {
      image: "rancher/k3s:v1.34.1-k3s1",
      resources: { requests: { cpu: "250m", memory: "512Mi" }, limits: { cpu: "2", memory: "2Gi" } },
      storage: { storageClassName: "standard", size: "10Gi" },
      expose: {
        loadBalancer: {
          enabled: true,
          annotations: {
            "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
            "lb.example.com/idle-timeout": "300",
          },
        },
      },
    },
  },
});

let cluster: HostCluster | undefined;
let isolationWriter: Objects;
let provisionerWriter: Objects;
const failures = trackFailures();
// The namespace records the uid of the TenantCluster it belongs to; any uid serves here.
const tenantClusterUid = "6c3f1f0e-2b6a-4b7e-9d0a-4f3c2a1b0c9d";

beforeAll(async () => {
  cluster = await startHostCluster({ name: "applied-objects", auditLog: true });
  await installCrds(cluster.kubeConfig, crdManifests());
  isolationWriter = new Objects(cluster.kubeConfig, "tenantplane-isolation");
  provisionerWriter = new Objects(cluster.kubeConfig, "tenantplane-provisioner");
  await provisionerWriter.apply(hostNamespaceManifest(tenant, tenantClusterUid));
});

afterAll(async () => {
  await cluster?.stop({ keepLogs: failures.failed() });
  expect(liveProcesses()).toEqual([]);
});

async function readBack(object: KubernetesObject): Promise<KubernetesObject | undefined> {
  const meta = object.metadata!;
  return isolationWriter.get(object.apiVersion!, object.kind!, meta.name!, meta.namespace);
}

async function expectStoredAsWritten(objects: readonly KubernetesObject[]): Promise<void> {
  const differences: string[] = [];
  for (const object of objects) {
    const stored = await readBack(object);
    const where = `${object.kind} ${object.metadata?.name}`;
    if (!stored) differences.push(`${where}: not stored`);
    else differences.push(...fieldsNotStored(object, stored).map((d) => `${where} ${d}`));
  }
  expect(differences).toEqual([]);
}

describe("the comparison itself", () => {
  it("notices a dropped NetworkPolicy peer and a dropped LimitRange default", () => {
    const policy = { spec: { ingress: [{ from: [{ podSelector: {} }] }] } };
    expect(fieldsNotStored(policy, { spec: { ingress: [{}] } })).toEqual([
      "$.spec.ingress[0].from: expected an array, stored undefined",
    ]);
    const limits = { spec: { limits: [{ type: "Container", default: { cpu: "1" } }] } };
    expect(fieldsNotStored(limits, { spec: { limits: [{ type: "Container", default: { cpu: "4" } }] } })).toEqual([
      '$.spec.limits[0].default.cpu: expected "1", stored "4"',
    ]);
  });
});

describe("objects tenantplane writes are stored exactly as compiled", () => {
  it("stores every isolation object of a rich profile, peers and LimitRange defaults included", async () => {
    const compiled = compileIsolation({
      tenant,
      hostNamespace: namespace,
      profile: richProfile,
      controlPlane: ControlPlaneSpecSchema.parse({}),
      profileName: "rich",
    });
    const kinds = new Set(compiled.objects.map((o) => o.kind));
    expect([...kinds].sort()).toEqual(["LimitRange", "NetworkPolicy", "ResourceQuota"]);
    // The namespace labels go out exactly as the isolation service sends them.
    const labels = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace, labels: compiled.namespaceLabels },
    };
    await isolationWriter.apply(labels);
    for (const object of compiled.objects) await isolationWriter.apply(object as KubernetesObject);
    await expectStoredAsWritten([labels, ...(compiled.objects as KubernetesObject[])]);

    // Spot checks of what the issue saw lost, so a broken comparison cannot pass silently.
    const sameNamespace = compiled.objects.find((o) => o.metadata.name.endsWith("allow-same-namespace"));
    const storedPolicy = (await readBack(sameNamespace as KubernetesObject)) as { spec: { ingress: unknown[] } };
    expect(storedPolicy.spec.ingress).toEqual([{ from: [{ podSelector: {} }] }]);
    const limitRange = compiled.objects.find((o) => o.kind === "LimitRange")!;
    const storedLimits = (await readBack(limitRange as KubernetesObject)) as {
      spec: { limits: Array<{ type: string; default?: Record<string, string> }> };
    };
    expect(storedLimits.spec.limits.find((l) => l.type === "Container")?.default).toEqual({
      cpu: "500m",
      memory: "512Mi",
    });
  });

  it("stores every control-plane object and Secret the provisioner produces", async () => {
    const pki = await generateTenantPki(tenant);
    const admin = await signClientCertificate(pki.clientCa, {
      commonName: "tenantplane-admin",
      organizations: ["system:masters"],
      lifetimeMs: 365 * 24 * 3600 * 1000,
    });
    const kubeconfig = buildKubeconfig({
      tenant,
      server: `https://${loadBalancerAddress}:6443`,
      caPem: pki.serverCa.certPem,
      certPem: admin.certPem,
      keyPem: admin.keyPem,
    });
    const pkiObject = pkiSecret(tenant, pki);
    // The PKI Secret is created, never applied, as the provisioner does.
    await provisionerWriter.create(pkiObject);
    const applied: KubernetesObject[] = [
      hostNamespaceManifest(tenant, tenantClusterUid),
      apiService(tenantCluster),
      headlessService(tenant),
      controlPlaneStatefulSet(tenantCluster, { loadBalancerAddresses: [loadBalancerAddress] }),
      kubeconfigSecret({ tenant, kubeconfig }),
    ];
    for (const object of applied) await provisionerWriter.apply(object);
    await expectStoredAsWritten([pkiObject, ...applied]);
  });
});

describe("events, leases and TenantCluster writes are stored exactly as sent", () => {
  it("stores an Event, a Lease, a finalizer patch and a status apply", async () => {
    const kc = cluster!.kubeConfig;
    const logger = createLogger("applied-objects", "silent");
    const tc = await provisionerWriter.apply<KubernetesObject & { spec: object }>({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: tenant, finalizers: ["tenantplane.io/teardown"] },
      spec: {},
    });

    // Event: written by the recorder every service uses.
    const recorder = new EventRecorder(kc, { component: "isolation", instance: "test-1", logger });
    const regarding = {
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      name: tenant,
      uid: tc.metadata?.uid,
    };
    expect(await recorder.record({ regarding, type: "Warning", reason: "RejectedByApiServer", message: "m" })).toBe(
      "created",
    );
    expect(await recorder.record({ regarding, type: "Warning", reason: "RejectedByApiServer", message: "m" })).toBe(
      "aggregated",
    );
    const events = (await isolationWriter.list("v1", "Event", { namespace: "default" })).filter(
      (e) => (e as unknown as { involvedObject: { name: string } }).involvedObject.name === tenant,
    );
    expect(events).toHaveLength(1);
    expect(
      fieldsNotStored(
        {
          involvedObject: { ...regarding },
          type: "Warning",
          reason: "RejectedByApiServer",
          message: "m",
          count: 2,
          source: { component: "isolation" },
          reportingComponent: "tenantplane.io/isolation",
          reportingInstance: "test-1",
        },
        events[0],
      ),
    ).toEqual([]);

    // Lease: MicroTime strings and the holder as the elector wrote them.
    const stop = new AbortController();
    let leading!: () => void;
    const led = new Promise<void>((resolve) => (leading = resolve));
    const electionFrom = Date.now();
    const election = runWithLeaderElection(
      {
        kc,
        namespace: "default",
        name: "applied-objects",
        identity: "candidate-1",
        retryPeriodMs: 200,
        logger,
        userAgent: "applied-objects-elector/1",
      },
      stop.signal,
      async (lost) => {
        leading();
        await new Promise((resolve) => lost.addEventListener("abort", resolve));
      },
    );
    await led;
    const lease = await isolationWriter.get<KubernetesObject & { spec: Record<string, unknown> }>(
      "coordination.k8s.io/v1",
      "Lease",
      "applied-objects",
      "default",
    );
    expect(lease?.spec).toMatchObject({ holderIdentity: "candidate-1", leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(lease?.spec.renewTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    // A leader renews from the Lease it last wrote: one request per renewal, no read before it,
    // each sent with the elector's user agent.
    await new Promise((r) => setTimeout(r, 1_500));
    stop.abort();
    await election;
    const leaseRequests = readAudit(cluster!.auditLogPath!, electionFrom).filter(
      (r) => r.resource === "leases" && r.name === "applied-objects",
    );
    const elector = (r: { userAgent: string }) => r.userAgent === "applied-objects-elector/1";
    // The only other request for it is this test's own read above.
    expect(leaseRequests.filter((r) => !elector(r)).map((r) => r.verb)).toEqual(["get"]);
    const verbs = leaseRequests.filter(elector).map((r) => r.verb);
    // The acquiring read (404), the create, then renewals, and the releasing read and update.
    expect(verbs.filter((v) => v === "update").length).toBeGreaterThanOrEqual(4);
    expect(verbs.filter((v) => v === "get")).toHaveLength(2);
    // What the renewals stored: the same holder (released now), no transition, a later renewTime.
    const renewed = await isolationWriter.get<KubernetesObject & { spec: Record<string, unknown> }>(
      "coordination.k8s.io/v1",
      "Lease",
      "applied-objects",
      "default",
    );
    expect(renewed?.spec).toMatchObject({ holderIdentity: "", leaseTransitions: 0 });
    expect(Date.parse(String(renewed?.spec.renewTime))).toBeGreaterThan(Date.parse(String(lease?.spec.renewTime)));

    // Status through the status subresource, and the finalizer released by a merge patch.
    const status = {
      phase: "Failed",
      hostNamespace: namespace,
      conditions: [
        {
          type: "IsolationApplied",
          status: "False",
          reason: "RejectedByApiServer",
          message: "m",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    };
    await isolationWriter.applyClusterStatus(
      { group: "tenantplane.io", version: "v1alpha1", plural: "tenantclusters", kind: "TenantCluster", name: tenant },
      status,
    );
    await provisionerWriter.mergePatch(tc, { metadata: { finalizers: [] } });
    const stored = await isolationWriter.get("tenantplane.io/v1alpha1", "TenantCluster", tenant);
    expect(fieldsNotStored({ status }, stored)).toEqual([]);
    expect(stored?.metadata?.finalizers ?? []).toEqual([]);
  });
});
