import type { CidrRule, NamespaceRule, Network, NetworkPort, TrafficDirection } from "@tenantplane/api";
import { LABEL_CONTROL_PLANE, TENANT_DNS_CONTAINER_PORT } from "@tenantplane/mapping";
import { CONTROL_PLANE_PORT, OBJECT_NAMES } from "./constants.js";
import type {
  LabelSelector,
  NetworkPolicyEgressRule,
  NetworkPolicyIngressRule,
  NetworkPolicyObject,
  NetworkPolicyPeer,
  NetworkPolicyPort,
} from "./kube-objects.js";
import { compiledMetadata, type CompileTarget } from "./metadata.js";

/** Label every namespace carries with its own name (set by the API server since Kubernetes 1.22). */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

/** Where cluster DNS runs: pods labelled `k8s-app: kube-dns` in kube-system (CoreDNS keeps that label). */
export const CLUSTER_DNS_PEER: NetworkPolicyPeer = {
  namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: "kube-system" } },
  podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
};

const DNS_PORTS: NetworkPolicyPort[] = [
  { protocol: "UDP", port: 53 },
  { protocol: "TCP", port: 53 },
];
const CONTROL_PLANE_PORTS: NetworkPolicyPort[] = [{ protocol: "TCP", port: CONTROL_PLANE_PORT }];
/** The tenant DNS server's port inside its pod (its Service maps 53 onto it). */
const TENANT_DNS_PORTS: NetworkPolicyPort[] = [
  { protocol: "UDP", port: TENANT_DNS_CONTAINER_PORT },
  { protocol: "TCP", port: TENANT_DNS_CONTAINER_PORT },
];
const ALL_PODS: LabelSelector = {};
const CONTROL_PLANE_PODS: LabelSelector = { matchLabels: { [LABEL_CONTROL_PLANE]: "true" } };

/** The NetworkPolicies for `network`, plus notes about settings that have no effect. */
export interface NetworkPolicyPlan {
  policies: NetworkPolicyObject[];
  notes: string[];
}

/**
 * Compiles the network section of a profile. Policies are additive, so each allowance is its
 * own policy named after the setting it comes from; an allowance is emitted only for a
 * direction that is denied by default, because a policy that selects pods for a direction
 * also isolates them in it. The control-plane pods (k3s and the tenant DNS server) always
 * keep TCP 6443 ingress from anywhere, tenant DNS ingress from the namespace's pods, DNS
 * egress (the DNS server's upstream), and two-way traffic with the namespace's pods
 * (workloads call the tenant API and resolve through the tenant DNS server; the API server
 * calls webhooks and aggregated APIs served by workloads).
 */
export function compileNetworkPolicies(target: CompileTarget, network: Network): NetworkPolicyPlan {
  const deny = network.defaultDeny;
  const allow = network.allow;
  const notes: string[] = [];
  const policies: (NetworkPolicyObject | undefined)[] = [];

  const policy = (
    name: string,
    podSelector: LabelSelector,
    ingress: NetworkPolicyIngressRule[],
    egress: NetworkPolicyEgressRule[],
  ): NetworkPolicyObject | undefined => {
    const useIngress = deny.ingress && ingress.length > 0;
    const useEgress = deny.egress && egress.length > 0;
    if (!useIngress && !useEgress) return undefined;
    return {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: compiledMetadata(target, name),
      spec: {
        podSelector,
        policyTypes: [...(useIngress ? ["Ingress" as const] : []), ...(useEgress ? ["Egress" as const] : [])],
        ...(useIngress ? { ingress } : {}),
        ...(useEgress ? { egress } : {}),
      },
    };
  };

  if (deny.ingress || deny.egress) {
    const policyTypes = [...(deny.ingress ? ["Ingress" as const] : []), ...(deny.egress ? ["Egress" as const] : [])];
    policies.push({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: compiledMetadata(target, OBJECT_NAMES.defaultDeny),
      spec: { podSelector: ALL_PODS, policyTypes },
    });
  }

  policies.push(
    policy(
      OBJECT_NAMES.allowControlPlane,
      CONTROL_PLANE_PODS,
      [{ ports: CONTROL_PLANE_PORTS }, { from: [{ podSelector: ALL_PODS }], ports: TENANT_DNS_PORTS }],
      [{ to: [CLUSTER_DNS_PEER], ports: DNS_PORTS }, { to: [{ podSelector: ALL_PODS }] }],
    ),
    policy(
      OBJECT_NAMES.allowControlPlanePeers,
      ALL_PODS,
      [{ from: [{ podSelector: CONTROL_PLANE_PODS }] }],
      [{ to: [{ podSelector: CONTROL_PLANE_PODS }], ports: [...CONTROL_PLANE_PORTS, ...TENANT_DNS_PORTS] }],
    ),
    policy(OBJECT_NAMES.allowDns, ALL_PODS, [], allow.dns ? [{ to: [CLUSTER_DNS_PEER], ports: DNS_PORTS }] : []),
    allow.sameNamespace
      ? policy(
          OBJECT_NAMES.allowSameNamespace,
          ALL_PODS,
          [{ from: [{ podSelector: ALL_PODS }] }],
          [{ to: [{ podSelector: ALL_PODS }] }],
        )
      : undefined,
  );

  const namespacePeer = (rule: NamespaceRule): NetworkPolicyPeer => ({
    namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: rule.name } },
  });
  const cidrPeer = (rule: CidrRule): NetworkPolicyPeer => ({
    ipBlock: { cidr: rule.cidr, ...(rule.except?.length ? { except: [...rule.except] } : {}) },
  });
  const namespaceRules = directedRules(allow.namespaces, namespacePeer);
  const cidrRules = directedRules(allow.cidrs, cidrPeer);
  policies.push(
    policy(OBJECT_NAMES.allowNamespaces, ALL_PODS, namespaceRules.ingress, namespaceRules.egress),
    policy(OBJECT_NAMES.allowCidrs, ALL_PODS, cidrRules.ingress, cidrRules.egress),
  );

  notes.push(...ineffective("namespaces", allow.namespaces, deny), ...ineffective("cidrs", allow.cidrs, deny));
  return { policies: policies.filter((p) => p !== undefined), notes };
}

interface DirectedRule {
  direction: TrafficDirection;
  ports?: NetworkPort[] | undefined;
}

function directedRules<R extends DirectedRule>(
  rules: readonly R[],
  peer: (rule: R) => NetworkPolicyPeer,
): { ingress: NetworkPolicyIngressRule[]; egress: NetworkPolicyEgressRule[] } {
  const ingress: NetworkPolicyIngressRule[] = [];
  const egress: NetworkPolicyEgressRule[] = [];
  for (const rule of rules) {
    const ports = rule.ports?.length ? { ports: rule.ports.map(toPolicyPort) } : {};
    if (rule.direction !== "Egress") ingress.push({ from: [peer(rule)], ...ports });
    if (rule.direction !== "Ingress") egress.push({ to: [peer(rule)], ...ports });
  }
  return { ingress, egress };
}

function toPolicyPort(port: NetworkPort): NetworkPolicyPort {
  return {
    protocol: port.protocol,
    port: port.port,
    ...(port.endPort !== undefined && port.endPort !== port.port ? { endPort: port.endPort } : {}),
  };
}

function ineffective(
  field: "namespaces" | "cidrs",
  rules: readonly DirectedRule[],
  deny: Network["defaultDeny"],
): string[] {
  return rules.flatMap((rule, index) => {
    const lost = (["Ingress", "Egress"] as const).filter(
      (d) => (rule.direction === d || rule.direction === "Both") && !(d === "Ingress" ? deny.ingress : deny.egress),
    );
    return lost.map(
      (d) =>
        `network.allow.${field}[${index}] has no ${d.toLowerCase()} effect: ${d.toLowerCase()} is not denied by default`,
    );
  });
}
