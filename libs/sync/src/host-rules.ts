import type { PodSecurityLevel } from "@tenantplane/api";

/** A Pod toleration as the Kubernetes API spells it. */
export interface Toleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: "" | "NoSchedule" | "PreferNoSchedule" | "NoExecute";
  tolerationSeconds?: number;
}

/** Which Service types other than ClusterIP a tenant may have on the host. */
export interface ServiceTypeRules {
  nodePort: boolean;
  loadBalancer: boolean;
  externalName: boolean;
}

/**
 * What a tenant's objects may do to the host, compiled from its IsolationProfile
 * (`compileHostRules`). The planner turns a violation into a Skip naming the rule, and
 * adds the enforced node selector and tolerations to every Pod it syncs.
 */
export interface HostRules {
  /** The host namespace's Pod Security `enforce` level: a Pod it would refuse is predicted as a Skip. */
  podSecurity: PodSecurityLevel;
  /** Priority classes a Pod may name; any other `priorityClassName` is a Skip. */
  allowedPriorityClasses: readonly string[];
  /** Runtime classes a Pod may name; any other `runtimeClassName` is a Skip. */
  allowedRuntimeClasses: readonly string[];
  /** Merged into every Pod's nodeSelector; a tenant value for one of these keys that differs is a Skip. */
  nodeSelector: Readonly<Record<string, string>>;
  /** Added to every Pod; the only tolerations a tenant Pod may carry besides the not-ready/unreachable defaults. */
  tolerations: readonly Toleration[];
  /** Service types allowed besides ClusterIP (and headless). */
  services: ServiceTypeRules;
  /** `services.nodeports` / `services.loadbalancers` of the profile's quota; absent means unlimited. */
  serviceQuota: { nodePorts?: number; loadBalancers?: number };
  /** The host cluster's DNS domain: ExternalName targets inside it are confined to the tenant's own host namespace. */
  clusterDomain: string;
}

/** The host cluster DNS domain assumed when none is configured. */
export const DEFAULT_CLUSTER_DOMAIN = "cluster.local";
