/** Metadata of a compiled object: always namespaced, labelled and annotated. */
export interface CompiledMetadata {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A label selector as Kubernetes writes it (`matchLabels` only; that is all the compiler needs). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
}

/** One port or port range of a NetworkPolicy rule. */
export interface NetworkPolicyPort {
  protocol: "TCP" | "UDP" | "SCTP";
  port: number;
  endPort?: number;
}

/** One source or destination of a NetworkPolicy rule. */
export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

/** An ingress rule (`from`) or egress rule (`to`); no peers means any peer. */
export interface NetworkPolicyIngressRule {
  from?: NetworkPolicyPeer[];
  ports?: NetworkPolicyPort[];
}
export interface NetworkPolicyEgressRule {
  to?: NetworkPolicyPeer[];
  ports?: NetworkPolicyPort[];
}

/** A networking.k8s.io/v1 NetworkPolicy. */
export interface NetworkPolicyObject {
  apiVersion: "networking.k8s.io/v1";
  kind: "NetworkPolicy";
  metadata: CompiledMetadata;
  spec: {
    podSelector: LabelSelector;
    policyTypes: ("Ingress" | "Egress")[];
    ingress?: NetworkPolicyIngressRule[];
    egress?: NetworkPolicyEgressRule[];
  };
}

/** A v1 ResourceQuota. */
export interface ResourceQuotaObject {
  apiVersion: "v1";
  kind: "ResourceQuota";
  metadata: CompiledMetadata;
  spec: { hard: Record<string, string> };
}

/** One entry of a LimitRange. */
export interface LimitRangeItem {
  type: "Container" | "PersistentVolumeClaim";
  default?: Record<string, string>;
  defaultRequest?: Record<string, string>;
  min?: Record<string, string>;
  max?: Record<string, string>;
}

/** A v1 LimitRange. */
export interface LimitRangeObject {
  apiVersion: "v1";
  kind: "LimitRange";
  metadata: CompiledMetadata;
  spec: { limits: LimitRangeItem[] };
}

/** Any object the isolation compiler produces. */
export type IsolationObject = NetworkPolicyObject | ResourceQuotaObject | LimitRangeObject;
