import {
  defaultIsolationProfileSpec,
  type IsolationMode,
  type IsolationProfileSpec,
  type PodSecurityLevel,
  type Toleration,
} from "@tenantplane/api";
import type { Placement } from "./placement.js";

/** Which Service types other than ClusterIP a tenant may have on the host. */
export interface ServiceTypeRules {
  nodePort: boolean;
  loadBalancer: boolean;
  externalName: boolean;
  /** `spec.loadBalancerClass` values a host copy keeps; any other is dropped and named in the reason. */
  allowedLoadBalancerClasses: readonly string[];
}

/** Volume types and inline CSI drivers a Pod may use besides the always-allowed types. */
export interface VolumeRules {
  /** Pod API volume type names (nfs, iscsi, ...); configMap, secret, emptyDir, projected, downwardAPI, persistentVolumeClaim and ephemeral are always allowed. */
  allowedTypes: readonly string[];
  /** Drivers whose inline `csi` volumes are allowed. */
  allowedCSIDrivers: readonly string[];
}

/**
 * The profile's explicit lifts of the floor that holds at every Pod Security level,
 * `privileged` included; each is off (the floor holds) by default.
 */
export interface FloorLifts {
  /** Capabilities a container may add beyond Pod Security baseline's list. */
  allowedCapabilities: readonly string[];
  /** Sysctls a Pod may set beyond Pod Security baseline's safe set. */
  allowedSysctls: readonly string[];
  allowUnconfinedSeccomp: boolean;
  allowUnconfinedAppArmor: boolean;
  allowUnmaskedProcMount: boolean;
  /** Whether probe and lifecycle handlers may name a `host` for the kubelet to connect to. */
  allowProbeHosts: boolean;
  /** Whether a Pod may set `spec.resourceClaims` (dynamic resource allocation). */
  allowResourceClaims: boolean;
}

/** Which host StorageClasses tenant claims (PVCs and ephemeral volume templates) may use. */
export interface StorageRules {
  /** Host class names a claim may end up with; undefined: only `hostDefaultClass`. */
  allowedClasses: readonly string[] | undefined;
  /** Tenant class name to host class name, applied before `allowedClasses` is checked. */
  classMap: Readonly<Record<string, string>>;
  /**
   * The host's default StorageClass (see `defaultStorageClass`), which a claim naming no class
   * gets; null: the host has none; undefined: not known (offline planning), nothing assumed.
   */
  hostDefaultClass: string | null | undefined;
}

/**
 * What a tenant's objects may do to the host, compiled from its IsolationProfile
 * (`compileHostRules`). The planner turns a violation into a Skip naming the rule, and
 * adds the enforced node selector and tolerations to every Pod it syncs (removing the
 * tolerations the profile does not grant).
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
  /** Added to every Pod; the only tolerations a host copy keeps besides the not-ready/unreachable defaults (others are removed). */
  tolerations: readonly Toleration[];
  /** Volume types and inline CSI drivers allowed besides the always-allowed types; any other volume is a Skip. */
  volumes: VolumeRules;
  /** Scheduler names a Pod may set besides the host's default scheduler; any other `schedulerName` is a Skip. */
  schedulers: readonly string[];
  /** What the profile lifts of the floor that holds at every Pod Security level. */
  floor: FloorLifts;
  /** Which host StorageClasses claims may use, and how tenant class names map to them. */
  storage: StorageRules;
  /** Prefixes of host-acting annotation and label keys a host copy keeps (see `HOST_ACTING_PREFIXES`). */
  allowedAnnotationPrefixes: readonly string[];
  /** Service types allowed besides ClusterIP (and headless). */
  services: ServiceTypeRules;
  /** `services.nodeports` / `services.loadbalancers` of the profile's quota; absent means unlimited. */
  serviceQuota: { nodePorts?: number; loadBalancers?: number };
  /** The host cluster's DNS domain: ExternalName targets inside it are confined to the tenant's own host namespace. */
  clusterDomain: string;
  /**
   * Where the tenant's host Pods run (TenantCluster spec.isolation); absent: Shared. In
   * Dedicated a Pod also gets the dedicated node selector and the toleration of its tenant's
   * dedicated-node taint (see {@link Placement}).
   */
  placement?: Placement | undefined;
  /**
   * The mode in effect (TenantCluster status.isolation.mode), set only when it is Private:
   * what must stay off the host while Pods still run there (a Service of type LoadBalancer,
   * which a host load balancer could no longer serve) follows the mode in effect, not the
   * one asked for, so a move to Private keeps serving traffic until the Pods have moved.
   */
  effectiveMode?: IsolationMode | undefined;
}

/** `rules` with Pods placed as `placement` says (Shared leaves the field out, as the profile compiles). */
export function withPlacement(rules: HostRules, placement: Placement): HostRules {
  const { placement: _previous, ...rest } = rules;
  return placement.mode === "Shared" ? rest : { ...rest, placement };
}

/** `rules` under the mode in effect (TenantCluster status.isolation.mode): only Private is recorded (see {@link HostRules.effectiveMode}). */
export function withEffectiveMode(rules: HostRules, mode: IsolationMode | undefined): HostRules {
  const { effectiveMode: _previous, ...rest } = rules;
  return mode === "Private" ? { ...rest, effectiveMode: "Private" } : rest;
}

/** The host cluster DNS domain assumed when none is configured. */
export const DEFAULT_CLUSTER_DOMAIN = "cluster.local";

/**
 * The rules of an IsolationProfile spec (defaults applied): its `workloads` block, its
 * Pod Security `enforce` level, and the `services.nodeports` / `services.loadbalancers`
 * entries of its quota; `hostDefaultClass` as in {@link StorageRules}, read from the host.
 */
export function compileHostRules(
  spec: IsolationProfileSpec,
  clusterDomain = DEFAULT_CLUSTER_DOMAIN,
  hostDefaultClass?: string | null,
): HostRules {
  const hard = spec.resourceQuota.hard;
  const nodePorts = countOf(hard["services.nodeports"]);
  const loadBalancers = countOf(hard["services.loadbalancers"]);
  return {
    podSecurity: spec.podSecurity.enforce,
    allowedPriorityClasses: [...spec.workloads.allowedPriorityClasses],
    allowedRuntimeClasses: [...spec.workloads.allowedRuntimeClasses],
    nodeSelector: { ...spec.workloads.nodeSelector },
    tolerations: spec.workloads.tolerations.map((t) => ({ ...t })),
    volumes: {
      allowedTypes: [...spec.workloads.volumes.allowedTypes],
      allowedCSIDrivers: [...spec.workloads.volumes.allowedCSIDrivers],
    },
    schedulers: [...spec.workloads.schedulers],
    floor: {
      allowedCapabilities: [...spec.workloads.allowedCapabilities],
      allowedSysctls: [...spec.workloads.allowedSysctls],
      allowUnconfinedSeccomp: spec.workloads.allowUnconfinedSeccomp,
      allowUnconfinedAppArmor: spec.workloads.allowUnconfinedAppArmor,
      allowUnmaskedProcMount: spec.workloads.allowUnmaskedProcMount,
      allowProbeHosts: spec.workloads.allowProbeHosts,
      allowResourceClaims: spec.workloads.allowResourceClaims,
    },
    storage: {
      allowedClasses: spec.workloads.storage.allowedClasses && [...spec.workloads.storage.allowedClasses],
      classMap: { ...spec.workloads.storage.classMap },
      hostDefaultClass,
    },
    allowedAnnotationPrefixes: [...spec.workloads.allowedAnnotationPrefixes],
    services: {
      ...spec.workloads.services,
      allowedLoadBalancerClasses: [...spec.workloads.services.allowedLoadBalancerClasses],
    },
    serviceQuota: {
      ...(nodePorts === undefined ? {} : { nodePorts }),
      ...(loadBalancers === undefined ? {} : { loadBalancers }),
    },
    clusterDomain: clusterDomain.toLowerCase().replace(/\.$/, ""),
  };
}

const DECIMAL_SUFFIXES: Record<string, number> = { "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, m: 1e-3 };
const BINARY_SUFFIXES: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

// Object counts in a quota are quantities too ("2", "1k", "5e1"); a fractional count rounds down.
function countOf(quantity: string | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  const match = /^([0-9.]+)(?:([eE][-+]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPEm])?)$/.exec(quantity);
  if (match === null) return undefined;
  const base = Number(match[1]);
  const scale =
    match[2] !== undefined
      ? Number(`1${match[2]}`)
      : (BINARY_SUFFIXES[match[3] ?? ""] ?? DECIMAL_SUFFIXES[match[3] ?? ""] ?? 1);
  return Math.floor(base * scale);
}

/** The rules of the built-in IsolationProfile, used when a plan is given none. */
export const defaultHostRules: HostRules = compileHostRules(defaultIsolationProfileSpec);
