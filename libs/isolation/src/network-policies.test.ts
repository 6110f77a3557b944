import { parseIsolationProfileSpec, type Network } from "@tenantplane/api";
import { LABEL_CONTROL_PLANE } from "@tenantplane/mapping";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OBJECT_NAMES } from "./constants.js";
import type { LabelSelector, NetworkPolicyObject, NetworkPolicyPeer, NetworkPolicyPort } from "./kube-objects.js";
import { compileNetworkPolicies } from "./network-policies.js";

const target = { tenant: "dev", namespace: "tp-dev", profileName: "standard" };
const network = (input: unknown): Network => parseIsolationProfileSpec({ network: input }).network;
const compile = (input: unknown) => compileNetworkPolicies(target, network(input));
const byName = (policies: NetworkPolicyObject[], name: string) => policies.find((p) => p.metadata.name === name);

// A small evaluator of NetworkPolicy semantics, so tests can ask "is this connection allowed?"
// instead of restating the compiled YAML.
interface Endpoint {
  namespace?: string;
  namespaceLabels?: Record<string, string>;
  podLabels?: Record<string, string>;
  ip?: string;
}
interface Connection {
  from: Endpoint;
  to: Endpoint;
  protocol: NetworkPolicyPort["protocol"];
  port: number;
}

const selects = (selector: LabelSelector, labels: Record<string, string> = {}) =>
  Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

function ipv4(text: string): number {
  return text.split(".").reduce((acc, octet) => acc * 256 + Number(octet), 0);
}
function inCidr(ip: string, cidr: string): boolean {
  const [base = "", bits = "0"] = cidr.split("/");
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base) / size);
}

function peerMatches(peer: NetworkPolicyPeer, policyNamespace: string, other: Endpoint): boolean {
  if (peer.ipBlock !== undefined) {
    return (
      other.ip !== undefined &&
      inCidr(other.ip, peer.ipBlock.cidr) &&
      !(peer.ipBlock.except ?? []).some((e) => inCidr(other.ip!, e))
    );
  }
  if (other.namespace === undefined) return false;
  const namespaceOk =
    peer.namespaceSelector !== undefined
      ? selects(peer.namespaceSelector, other.namespaceLabels)
      : other.namespace === policyNamespace;
  return namespaceOk && selects(peer.podSelector ?? {}, other.podLabels);
}

function portMatches(ports: NetworkPolicyPort[] | undefined, c: Connection): boolean {
  return (
    ports === undefined ||
    ports.some((p) => p.protocol === c.protocol && c.port >= p.port && c.port <= (p.endPort ?? p.port))
  );
}

function allowed(policies: NetworkPolicyObject[], c: Connection): boolean {
  const side = (pod: Endpoint, type: "Ingress" | "Egress", other: Endpoint) => {
    if (pod.namespace !== target.namespace) return true;
    const selecting = policies.filter(
      (p) => p.spec.policyTypes.includes(type) && selects(p.spec.podSelector, pod.podLabels),
    );
    if (selecting.length === 0) return true;
    return selecting.some((p) =>
      type === "Ingress"
        ? (p.spec.ingress ?? []).some(
            (r) =>
              (r.from === undefined || r.from.some((peer) => peerMatches(peer, target.namespace, other))) &&
              portMatches(r.ports, c),
          )
        : (p.spec.egress ?? []).some(
            (r) =>
              (r.to === undefined || r.to.some((peer) => peerMatches(peer, target.namespace, other))) &&
              portMatches(r.ports, c),
          ),
    );
  };
  return side(c.from, "Egress", c.to) && side(c.to, "Ingress", c.from);
}

const ns = (name: string, podLabels: Record<string, string> = {}): Endpoint => ({
  namespace: name,
  namespaceLabels: { "kubernetes.io/metadata.name": name },
  podLabels,
});
const tenantPod = ns("tp-dev", { app: "web" });
const controlPlane = ns("tp-dev", { [LABEL_CONTROL_PLANE]: "true", app: "k3s" });
const kubeDns = ns("kube-system", { "k8s-app": "kube-dns" });
const otherPod = ns("other-tenant", { app: "x" });
const ingressController = ns("ingress-nginx", { app: "controller" });
const internet = { ip: "93.184.216.34" };
const metadataService = { ip: "169.254.169.254" };
const tcp = (from: Endpoint, to: Endpoint, port: number): Connection => ({ from, to, protocol: "TCP", port });
const udp = (from: Endpoint, to: Endpoint, port: number): Connection => ({ from, to, protocol: "UDP", port });

describe("compileNetworkPolicies with the default profile", () => {
  const { policies, notes } = compile({});

  it("produces the deny, control-plane, DNS and same-namespace policies in a fixed order", () => {
    expect(policies.map((p) => p.metadata.name)).toEqual([
      OBJECT_NAMES.defaultDeny,
      OBJECT_NAMES.allowControlPlane,
      OBJECT_NAMES.allowControlPlanePeers,
      OBJECT_NAMES.allowDns,
      OBJECT_NAMES.allowSameNamespace,
    ]);
    expect(notes).toEqual([]);
  });

  it("denies all ingress and egress for every pod", () => {
    expect(byName(policies, OBJECT_NAMES.defaultDeny)?.spec).toEqual({
      podSelector: {},
      policyTypes: ["Ingress", "Egress"],
    });
    expect(allowed(policies, tcp(otherPod, tenantPod, 80))).toBe(false);
    expect(allowed(policies, tcp(tenantPod, internet, 443))).toBe(false);
    expect(allowed(policies, tcp(tenantPod, otherPod, 80))).toBe(false);
  });

  it("lets anyone reach the tenant API server on TCP 6443, the namespace's pods its DNS server, and nothing else", () => {
    expect(byName(policies, OBJECT_NAMES.allowControlPlane)?.spec.ingress).toEqual([
      { ports: [{ protocol: "TCP", port: 6443 }] },
      {
        from: [{ podSelector: {} }],
        ports: [
          { protocol: "UDP", port: 1053 },
          { protocol: "TCP", port: 1053 },
        ],
      },
    ]);
    expect(allowed(policies, tcp(otherPod, controlPlane, 6443))).toBe(true);
    expect(allowed(policies, tcp(internet, controlPlane, 6443))).toBe(true);
    expect(allowed(policies, tcp(otherPod, controlPlane, 10250))).toBe(false);
    expect(allowed(policies, udp(tenantPod, controlPlane, 1053))).toBe(true);
    expect(allowed(policies, tcp(tenantPod, controlPlane, 1053))).toBe(true);
    expect(allowed(policies, udp(otherPod, controlPlane, 1053))).toBe(false);
    expect(allowed(policies, udp(internet, controlPlane, 1053))).toBe(false);
  });

  it("allows DNS to kube-dns in kube-system on UDP and TCP 53 only", () => {
    expect(byName(policies, OBJECT_NAMES.allowDns)?.spec).toEqual({
      podSelector: {},
      policyTypes: ["Egress"],
      egress: [
        {
          to: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
              podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
            },
          ],
          ports: [
            { protocol: "UDP", port: 53 },
            { protocol: "TCP", port: 53 },
          ],
        },
      ],
    });
    expect(allowed(policies, udp(tenantPod, kubeDns, 53))).toBe(true);
    expect(allowed(policies, tcp(tenantPod, kubeDns, 53))).toBe(true);
    expect(allowed(policies, tcp(tenantPod, kubeDns, 9153))).toBe(false);
    expect(allowed(policies, udp(tenantPod, ns("kube-system", { app: "other" }), 53))).toBe(false);
  });

  it("allows traffic inside the host namespace", () => {
    expect(allowed(policies, tcp(tenantPod, ns("tp-dev", { app: "db" }), 5432))).toBe(true);
  });
});

describe("compileNetworkPolicies with allowances", () => {
  it("compiles namespace rules by direction with ports", () => {
    const { policies } = compile({
      allow: {
        namespaces: [
          { name: "ingress-nginx", direction: "Ingress", ports: [{ port: 8080 }] },
          { name: "monitoring", direction: "Both" },
          { name: "vault", direction: "Egress", ports: [{ port: 8200, endPort: 8201 }] },
        ],
      },
    });
    const spec = byName(policies, OBJECT_NAMES.allowNamespaces)?.spec;
    const selector = (name: string) => ({
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": name } },
    });
    expect(spec?.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(spec?.ingress).toEqual([
      { from: [selector("ingress-nginx")], ports: [{ protocol: "TCP", port: 8080 }] },
      { from: [selector("monitoring")] },
    ]);
    expect(spec?.egress).toEqual([
      { to: [selector("monitoring")] },
      { to: [selector("vault")], ports: [{ protocol: "TCP", port: 8200, endPort: 8201 }] },
    ]);
    expect(allowed(policies, tcp(ingressController, tenantPod, 8080))).toBe(true);
    expect(allowed(policies, tcp(ingressController, tenantPod, 8081))).toBe(false);
    expect(allowed(policies, tcp(tenantPod, ingressController, 8080))).toBe(false);
    expect(allowed(policies, tcp(tenantPod, ns("vault"), 8201))).toBe(true);
  });

  it("compiles CIDR rules with except ranges, egress by default", () => {
    const { policies } = compile({
      allow: { cidrs: [{ cidr: "0.0.0.0/0", except: ["169.254.169.254/32"], ports: [{ port: 443 }] }] },
    });
    expect(byName(policies, OBJECT_NAMES.allowCidrs)?.spec).toEqual({
      podSelector: {},
      policyTypes: ["Egress"],
      egress: [
        {
          to: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["169.254.169.254/32"] } }],
          ports: [{ protocol: "TCP", port: 443 }],
        },
      ],
    });
    expect(allowed(policies, tcp(tenantPod, internet, 443))).toBe(true);
    expect(allowed(policies, tcp(tenantPod, metadataService, 443))).toBe(false);
    expect(allowed(policies, tcp(internet, tenantPod, 443))).toBe(false);
  });

  it("drops an endPort equal to port and an empty except list", () => {
    const { policies } = compile({
      allow: { cidrs: [{ cidr: "10.0.0.0/8", except: [], ports: [{ port: 80, endPort: 80 }] }] },
    });
    expect(byName(policies, OBJECT_NAMES.allowCidrs)?.spec.egress).toEqual([
      { to: [{ ipBlock: { cidr: "10.0.0.0/8" } }], ports: [{ protocol: "TCP", port: 80 }] },
    ]);
  });

  it("leaves out DNS and same-namespace policies when they are switched off", () => {
    const { policies } = compile({ allow: { dns: false, sameNamespace: false } });
    expect(policies.map((p) => p.metadata.name)).toEqual([
      OBJECT_NAMES.defaultDeny,
      OBJECT_NAMES.allowControlPlane,
      OBJECT_NAMES.allowControlPlanePeers,
    ]);
    expect(allowed(policies, udp(tenantPod, kubeDns, 53))).toBe(false);
    expect(allowed(policies, tcp(tenantPod, ns("tp-dev", { app: "db" }), 5432))).toBe(false);
    expect(allowed(policies, udp(controlPlane, kubeDns, 53))).toBe(true);
    expect(allowed(policies, tcp(tenantPod, controlPlane, 6443))).toBe(true);
  });
});

describe("compileNetworkPolicies without default deny", () => {
  it("emits nothing when neither direction is denied, and notes the rules that do nothing", () => {
    const { policies, notes } = compile({
      defaultDeny: { ingress: false, egress: false },
      allow: { cidrs: [{ cidr: "10.0.0.0/8" }], namespaces: [{ name: "monitoring", direction: "Ingress" }] },
    });
    expect(policies).toEqual([]);
    expect(notes).toEqual([
      "network.allow.namespaces[0] has no ingress effect: ingress is not denied by default",
      "network.allow.cidrs[0] has no egress effect: egress is not denied by default",
    ]);
  });

  it("only isolates the denied direction, so allow rules never turn into a deny", () => {
    const { policies } = compile({ defaultDeny: { ingress: true, egress: false } });
    for (const p of policies) expect(p.spec.policyTypes).toEqual(["Ingress"]);
    expect(policies.some((p) => p.metadata.name === OBJECT_NAMES.allowDns)).toBe(false);
    expect(allowed(policies, tcp(tenantPod, internet, 443))).toBe(true);
    expect(allowed(policies, tcp(controlPlane, internet, 443))).toBe(true);
    expect(allowed(policies, tcp(otherPod, tenantPod, 80))).toBe(false);
  });
});

describe("any combination of settings", () => {
  const direction = fc.constantFrom("Ingress", "Egress", "Both");
  const settings = fc.record({
    defaultDeny: fc.record({ ingress: fc.boolean(), egress: fc.boolean() }),
    allow: fc.record({
      dns: fc.boolean(),
      sameNamespace: fc.boolean(),
      namespaces: fc.array(fc.record({ name: fc.constantFrom("ingress-nginx", "monitoring"), direction }), {
        maxLength: 3,
      }),
      cidrs: fc.array(fc.record({ cidr: fc.constantFrom("10.0.0.0/8", "0.0.0.0/0"), direction }), { maxLength: 3 }),
    }),
  });

  it("keeps TCP 6443 reachable from anywhere, and DNS and its namespace reachable from it", () => {
    fc.assert(
      fc.property(settings, (input) => {
        const { policies } = compile(input);
        for (const client of [tenantPod, otherPod, ingressController, internet]) {
          expect(allowed(policies, tcp(client, controlPlane, 6443))).toBe(true);
        }
        expect(allowed(policies, udp(controlPlane, kubeDns, 53))).toBe(true);
        expect(allowed(policies, tcp(controlPlane, tenantPod, 443))).toBe(true);
        expect(allowed(policies, tcp(tenantPod, controlPlane, 6443))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("still denies what no rule allows", () => {
    fc.assert(
      fc.property(settings, (input) => {
        const { policies } = compile(input);
        const internetEgress = input.allow.cidrs.some((c) => c.cidr === "0.0.0.0/0" && c.direction !== "Ingress");
        expect(allowed(policies, tcp(otherPod, tenantPod, 80))).toBe(!input.defaultDeny.ingress);
        expect(allowed(policies, tcp(tenantPod, internet, 443))).toBe(!input.defaultDeny.egress || internetEgress);
        expect(allowed(policies, tcp(controlPlane, internet, 443))).toBe(!input.defaultDeny.egress || internetEgress);
      }),
      { numRuns: 200 },
    );
  });
});
