import { defaultSyncPolicySpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { KubeObjectSchema } from "./kube-object.js";
import { plan } from "./plan.js";
import { translate } from "./transform.js";

// Fields the tenant API defaults or fills in, whose partner the host copy loses: each rule
// below is one the host API server's validation applies (pkg/apis/core/validation and the
// Service and Pod registries), so a planned Create is one the host accepts.

const tenant = "dev";
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function object(kind: string, name: string, rest: Obj): Obj {
  return { apiVersion: "v1", kind, metadata: { name, namespace: "shop" }, ...rest };
}

function translated(value: Obj) {
  return translate(KubeObjectSchema.parse(value), tenant);
}

const specOf = (value: Obj): Obj => translated(value).object["spec"] as Obj;

describe("Service: what is dropped takes its partners along", () => {
  // As the tenant API stores a ClusterIP Service with external IPs: it defaults
  // externalTrafficPolicy because external IPs make the Service externally accessible.
  const withExternalIPs = object("Service", "web", {
    spec: {
      type: "ClusterIP",
      selector: { app: "web" },
      ports: [{ port: 80, targetPort: 8080, protocol: "TCP" }],
      clusterIP: "10.43.12.7",
      clusterIPs: ["10.43.12.7"],
      externalIPs: ["198.51.100.20"],
      externalTrafficPolicy: "Cluster",
      internalTrafficPolicy: "Cluster",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      sessionAffinity: "None",
    },
  });

  it("drops externalTrafficPolicy with the external IPs of a ClusterIP Service, and says what was dropped", () => {
    const [decision] = plan({
      tenant,
      policy: defaultSyncPolicySpec,
      tenantObjects: [withExternalIPs],
      hostObjects: [],
    }).decisions;
    expect(decision?.action).toBe("Create");
    expect(decision?.object?.["spec"]).toEqual({
      type: "ClusterIP",
      selector: { app: "web", "tenantplane.io/tenant": "dev", "tenantplane.io/virtual-namespace": "shop" },
      ports: [{ port: 80, targetPort: 8080, protocol: "TCP" }],
      internalTrafficPolicy: "Cluster",
      ipFamilyPolicy: "SingleStack",
      sessionAffinity: "None",
    });
    expect(decision?.reason).toBe(
      "host Service tp-dev/web-x-shop-x-dev absent; spec.externalIPs 198.51.100.20 dropped: a tenant never claims addresses on the host network",
    );
  });

  it("keeps externalTrafficPolicy where the type alone makes the Service external", () => {
    for (const type of ["NodePort", "LoadBalancer"]) {
      const spec = specOf(
        object("Service", "web", {
          spec: {
            type,
            ports: [{ port: 80, nodePort: 30080 }],
            externalIPs: ["198.51.100.20"],
            externalTrafficPolicy: "Local",
          },
        }),
      );
      expect(spec).toEqual({ type, ports: [{ port: 80 }], externalTrafficPolicy: "Local" });
    }
  });

  it("drops externalTrafficPolicy of a headless Service that had external IPs", () => {
    const spec = specOf(
      object("Service", "db", {
        spec: {
          clusterIP: "None",
          clusterIPs: ["None"],
          externalIPs: ["198.51.100.20"],
          externalTrafficPolicy: "Cluster",
        },
      }),
    );
    expect(spec).toEqual({ clusterIP: "None", clusterIPs: ["None"] });
  });

  it("lets the host pick the IP families unless both are required", () => {
    const single = specOf(object("Service", "a", { spec: { ipFamilies: ["IPv6"], ipFamilyPolicy: "SingleStack" } }));
    expect(single).toEqual({ ipFamilyPolicy: "SingleStack" });
    const prefer = specOf(
      object("Service", "a", { spec: { ipFamilies: ["IPv4", "IPv6"], ipFamilyPolicy: "PreferDualStack" } }),
    );
    expect(prefer).toEqual({ ipFamilyPolicy: "PreferDualStack" });
    // A headless Service without a selector is defaulted to both families by any API server.
    const headless = {
      clusterIP: "None",
      clusterIPs: ["None"],
      ipFamilies: ["IPv4", "IPv6"],
      ipFamilyPolicy: "RequireDualStack",
    };
    expect(specOf(object("Service", "a", { spec: headless }))).toEqual(headless);
  });

  it("says when a requested load-balancer address is dropped", () => {
    const result = translated(
      object("Service", "lb", { spec: { type: "LoadBalancer", loadBalancerIP: "203.0.113.9" } }),
    );
    expect(result.rewrites).toEqual(["spec.loadBalancerIP 203.0.113.9 dropped: it could be another tenant's address"]);
  });

  it("keeps what is valid beside the type it keeps: node port allocation, session affinity", () => {
    const spec = {
      type: "LoadBalancer",
      allocateLoadBalancerNodePorts: false,
      sessionAffinity: "ClientIP",
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
      externalTrafficPolicy: "Local",
      internalTrafficPolicy: "Local",
      ports: [{ port: 443 }],
    };
    expect(specOf(object("Service", "lb", { spec: { ...spec, healthCheckNodePort: 31000 } }))).toEqual(spec);
  });
});

describe("PersistentVolumeClaim: a class asked through the beta annotation", () => {
  const claim = (annotations: Record<string, string>, spec: Obj = {}) => ({
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "data", namespace: "shop", annotations },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, ...spec },
  });
  const annotation = "volume.beta.kubernetes.io/storage-class";

  it("is asked for in spec.storageClassName of the host copy, and the reason says so", () => {
    const [decision] = plan({
      tenant,
      policy: defaultSyncPolicySpec,
      tenantObjects: [claim({ [annotation]: "fast" })],
      hostObjects: [],
    }).decisions;
    expect(decision?.action).toBe("Create");
    // Offline, no rule limits the class; the copy asks for the tenant's own copy of it.
    expect(decision?.object?.["spec"]).toMatchObject({ storageClassName: "tp-dev.fast" });
    expect(decision?.object?.metadata.annotations).not.toHaveProperty(annotation);
    expect(decision?.reason).toContain(
      `storage class fast from metadata.annotations[${annotation}], as spec.storageClassName`,
    );
  });

  it("keeps an empty class, which asks for no class at all rather than the host's default", () => {
    expect(specOf(claim({ [annotation]: "" }))["storageClassName"]).toBe("");
  });

  it("agrees with a spec that asks for the same class, and is refused beside a different one, naming both fields", () => {
    expect(translated(claim({ [annotation]: "fast" }, { storageClassName: "fast" })).refusals).toEqual([]);
    const [decision] = plan({
      tenant,
      policy: defaultSyncPolicySpec,
      tenantObjects: [claim({ [annotation]: "fast" }, { storageClassName: "standard" })],
      hostObjects: [],
    }).decisions;
    expect(decision?.action).toBe("Skip");
    expect(decision?.reason).toBe(
      `cannot be synced as written: metadata.annotations[${annotation}]: asks for storage class fast but spec.storageClassName asks for standard: keep only one`,
    );
  });

  it("is honoured the same way in a generic ephemeral volume's claim template", () => {
    const pod = (templateSpec: Obj) =>
      object("Pod", "p", {
        spec: {
          containers: [],
          volumes: [
            {
              name: "scratch",
              ephemeral: {
                volumeClaimTemplate: {
                  metadata: { annotations: { [annotation]: "fast", team: "a" } },
                  spec: { accessModes: ["ReadWriteOnce"], ...templateSpec },
                },
              },
            },
          ],
        },
      });
    const result = translated(pod({}));
    const template = (result.object["spec"] as Obj)["volumes"][0].ephemeral.volumeClaimTemplate;
    expect(template).toEqual({
      metadata: { annotations: { team: "a" } },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "tp-dev.fast" },
    });
    expect(result.rewrites).toContain(
      `storage class fast from spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[${annotation}], as spec.volumes[0].ephemeral.volumeClaimTemplate.spec.storageClassName`,
    );
    expect(translated(pod({ storageClassName: "slow" })).refusals).toEqual([
      {
        field: `spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[${annotation}]`,
        problem:
          "asks for storage class fast but spec.volumes[0].ephemeral.volumeClaimTemplate.spec.storageClassName asks for slow: keep only one",
      },
    ]);
  });
});

describe("Pod: label keys the tenant API has already folded into a selector", () => {
  // As a Deployment's Pod is stored by a 1.34 tenant API: matchLabelKeys folded into the
  // selector as `pod-template-hash In [...]`, the list kept. The host would fold it again
  // and refuse the repeated key.
  const stored = object("Pod", "web-7d9f-abcde", {
    metadata: { name: "web-7d9f-abcde", namespace: "shop", labels: { app: "web", "pod-template-hash": "7d9f" } },
    spec: {
      containers: [],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: "zone",
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
          requiredDuringSchedulingIgnoredDuringExecution: [
            {
              topologyKey: "kubernetes.io/hostname",
              labelSelector: { matchLabels: { app: "web" } },
              matchLabelKeys: ["pod-template-hash"],
              mismatchLabelKeys: ["app"],
            },
          ],
        },
      },
    },
  });

  it("carries each key once in the selector and no key list, whether or not the tenant folded it", () => {
    const spec = specOf(stored);
    const inShop = { key: "tenantplane.io/virtual-namespace", operator: "In", values: ["shop"] };
    expect(spec["topologySpreadConstraints"][0]).not.toHaveProperty("matchLabelKeys");
    expect(spec["topologySpreadConstraints"][0].labelSelector.matchExpressions).toEqual([
      { key: "pod-template-hash", operator: "In", values: ["7d9f"] },
      inShop,
    ]);
    const term = spec["affinity"].podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
    expect(term).not.toHaveProperty("matchLabelKeys");
    expect(term).not.toHaveProperty("mismatchLabelKeys");
    expect(term.labelSelector.matchExpressions).toEqual([
      { key: "pod-template-hash", operator: "In", values: ["7d9f"] },
      { key: "app", operator: "NotIn", values: ["web"] },
      inShop,
    ]);
  });

  it("ignores a key the Pod has no label for, as the API server does", () => {
    const pod = object("Pod", "p", {
      spec: {
        containers: [],
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: "zone",
            whenUnsatisfiable: "DoNotSchedule",
            labelSelector: {},
            matchLabelKeys: ["x"],
          },
        ],
      },
    });
    expect(specOf(pod)["topologySpreadConstraints"][0].labelSelector.matchExpressions).toEqual([
      { key: "tenantplane.io/virtual-namespace", operator: "In", values: ["shop"] },
    ]);
  });
});

describe("Pod: the tenant's DNS settings within the resolver's limits", () => {
  it("keeps at most three nameservers and says which were dropped, as the kubelet would", () => {
    const result = translated(
      object("Pod", "p", {
        spec: { containers: [], dnsConfig: { nameservers: ["10.0.0.1", "10.0.0.2", "10.0.0.3"] } },
      }),
    );
    const dns = (result.object["spec"] as Obj)["dnsConfig"];
    expect(dns.nameservers).toHaveLength(3);
    expect(dns.nameservers.slice(1)).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(result.rewrites).toContain("nameservers 10.0.0.3 dropped: at most 3");
  });

  it("keeps the search list within 32 paths", () => {
    const searches = Array.from({ length: 32 }, (_, i) => `s${i}.example`);
    const result = translated(object("Pod", "p", { spec: { containers: [], dnsConfig: { searches } } }));
    const dns = (result.object["spec"] as Obj)["dnsConfig"];
    expect(dns.searches).toHaveLength(32);
    expect(dns.searches[0]).toBe("shop.svc.cluster.local");
    expect(result.rewrites).toContain(
      "searches s29.example s30.example s31.example dropped: at most 32 paths of 2048 characters",
    );
  });
});
