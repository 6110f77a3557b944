import { parseIsolationProfileSpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { HOST_ACTING_PREFIXES, isHostActingKey, underPrefix } from "./host-acting-keys.js";
import { compileHostRules } from "./host-rules.js";
import { KubeObjectSchema } from "./kube-object.js";
import { plan } from "./plan.js";
import { translate } from "./transform.js";

// Host add-ons act on annotations and labels wherever they find them: a host copy drops keys
// under their prefixes unless the IsolationProfile keeps a prefix, and the reason names each key.

const tenant = "dev";
const rulesOf = (workloads: Record<string, unknown> = {}) => compileHostRules(parseIsolationProfileSpec({ workloads }));

function object(kind: string, metadata: Record<string, unknown>, spec: Record<string, unknown> = {}) {
  const body = kind === "Pod" ? { containers: [{ name: "c", image: "nginx" }], ...spec } : spec;
  return KubeObjectSchema.parse({
    apiVersion: "v1",
    kind,
    metadata: { name: "x", namespace: "shop", ...metadata },
    spec: body,
  });
}

describe("host-acting prefixes", () => {
  it.each([
    ["k8s.v1.cni.cncf.io/networks", true],
    ["cni.projectcalico.org/ipAddrs", true],
    ["cni.projectcalico.org/ipv4pools", true],
    ["io.cilium/lb-ipam-ips", true],
    ["lbipam.cilium.io/ips", true],
    ["cilium.io/global-service", true],
    ["metallb.universe.tf/loadBalancerIPs", true],
    ["metallb.io/ip-allocated-from-pool", true],
    ["service.beta.kubernetes.io/aws-load-balancer-scheme", true],
    ["service.kubernetes.io/topology-mode", true],
    ["cloud.google.com/load-balancer-type", true],
    ["notcilium.io/x", false],
    ["example.com/cilium.io", false],
    ["app.kubernetes.io/name", false],
    ["team", false],
  ])("%s is host-acting: %s", (key, expected) => {
    expect(isHostActingKey(key, [])).toBe(expected);
  });

  it("reads *.domain/ as the domain and every subdomain, and domain/ as that domain only", () => {
    expect(underPrefix("a.b.cilium.io/x", "*.cilium.io/")).toBe(true);
    expect(underPrefix("cilium.io/x", "*.cilium.io/")).toBe(true);
    expect(underPrefix("evilcilium.io/x", "*.cilium.io/")).toBe(false);
    expect(underPrefix("sub.metallb.io/x", "metallb.io/")).toBe(false);
  });

  it("every built-in prefix is one a profile may name to keep it", () => {
    const parsed = parseIsolationProfileSpec({ workloads: { allowedAnnotationPrefixes: [...HOST_ACTING_PREFIXES] } });
    expect(parsed.workloads.allowedAnnotationPrefixes).toEqual(HOST_ACTING_PREFIXES);
  });
});

describe("host copies drop host-acting keys", () => {
  const annotations = {
    "k8s.v1.cni.cncf.io/networks": "kube-system/host-net",
    "cni.projectcalico.org/ipAddrs": '["10.0.0.9"]',
    "example.com/owner": "shop",
  };

  it("drops them from a Pod's annotations and labels, naming each key", () => {
    const pod = object("Pod", { annotations, labels: { app: "web", "io.cilium/policy": "x" } });
    const { object: copy, rewrites } = translate(pod, tenant, { rules: rulesOf() });
    expect(Object.keys(copy.metadata.annotations)).not.toContain("k8s.v1.cni.cncf.io/networks");
    expect(Object.keys(copy.metadata.annotations)).not.toContain("cni.projectcalico.org/ipAddrs");
    expect(copy.metadata.annotations["example.com/owner"]).toBe("shop");
    expect(copy.metadata.labels).toMatchObject({ app: "web" });
    expect(Object.keys(copy.metadata.labels)).not.toContain("io.cilium/policy");
    expect(rewrites.filter((r) => r.startsWith("metadata."))).toEqual([
      "metadata.annotations k8s.v1.cni.cncf.io/networks, cni.projectcalico.org/ipAddrs dropped: host add-ons act on them (IsolationProfile spec.workloads.allowedAnnotationPrefixes can keep a prefix)",
      "metadata.labels io.cilium/policy dropped: host add-ons act on them (IsolationProfile spec.workloads.allowedAnnotationPrefixes can keep a prefix)",
    ]);
  });

  it("keeps the prefixes the profile allows", () => {
    const pod = object("Pod", { annotations });
    const { object: copy, rewrites } = translate(pod, tenant, {
      rules: rulesOf({ allowedAnnotationPrefixes: ["cni.projectcalico.org/"] }),
    });
    expect(copy.metadata.annotations["cni.projectcalico.org/ipAddrs"]).toBe('["10.0.0.9"]');
    expect(rewrites.filter((r) => r.startsWith("metadata."))).toEqual([
      expect.stringMatching(/^metadata\.annotations k8s\.v1\.cni\.cncf\.io\/networks dropped/),
    ]);
  });

  it("drops a LoadBalancer Service's address annotations and class, saying so in the Create reason", () => {
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "lb",
        namespace: "shop",
        annotations: {
          "metallb.universe.tf/loadBalancerIPs": "192.0.2.10",
          "metallb.io/allow-shared-ip": "x",
          "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
          "lbipam.cilium.io/ips": "192.0.2.11",
        },
      },
      spec: { type: "LoadBalancer", loadBalancerClass: "example.com/internal", ports: [{ port: 80 }] },
    };
    const rules = rulesOf({ services: { loadBalancer: true } });
    const result = plan({
      tenant,
      policy: { toHost: [{ kind: "Service" }] },
      tenantObjects: [service],
      hostObjects: [],
      rules,
    });
    const created = result.decisions[0];
    expect(created?.action).toBe("Create");
    expect(created?.object?.["spec"]).not.toHaveProperty("loadBalancerClass");
    expect(
      Object.keys(created?.object?.metadata.annotations ?? {}).filter((k) => !k.startsWith("tenantplane.io/")),
    ).toEqual([]);
    expect(created?.reason).toContain(
      "metadata.annotations metallb.universe.tf/loadBalancerIPs, metallb.io/allow-shared-ip, service.beta.kubernetes.io/aws-load-balancer-internal and 1 more dropped: host add-ons act on them",
    );
    expect(created?.reason).toContain(
      "spec.loadBalancerClass example.com/internal dropped: it picks the host's load-balancer implementation (IsolationProfile spec.workloads.services.allowedLoadBalancerClasses)",
    );

    const allowed = rulesOf({ services: { loadBalancer: true, allowedLoadBalancerClasses: ["example.com/internal"] } });
    const kept = translate(KubeObjectSchema.parse(service), tenant, { rules: allowed }).object;
    expect(kept["spec"]).toMatchObject({ loadBalancerClass: "example.com/internal" });
  });
});
