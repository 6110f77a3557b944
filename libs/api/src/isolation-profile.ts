import * as z from "zod";
import { API_VERSION, KIND_ISOLATION_PROFILE } from "./constants.js";
import { isStrictSubnet, parseCidr } from "./internal/cidr.js";
import { ObjectMetaSchema } from "./object-meta.js";
import { isContainerResourceName, isQuotaResourceName, isWholeQuotaResource } from "./internal/names.js";
import { compareQuantities, isWholeQuantity, QuantitySchema } from "./quantity.js";
import { describeSubject, parseOrThrow } from "./validation-error.js";

/** Pod Security Standards levels, from most to least permissive. */
export const POD_SECURITY_LEVELS = ["privileged", "baseline", "restricted"] as const;
export const PodSecurityLevelSchema = z.enum(POD_SECURITY_LEVELS, {
  error: (issue) =>
    `unknown Pod Security level ${JSON.stringify(issue.input)}: use one of ${POD_SECURITY_LEVELS.join(", ")}`,
});
export type PodSecurityLevel = z.output<typeof PodSecurityLevelSchema>;

/** Pod Security admission settings, applied as labels on the host namespace. */
export const PodSecuritySchema = z.object({
  enforce: PodSecurityLevelSchema.prefault("baseline"),
  audit: PodSecurityLevelSchema.prefault("restricted"),
  warn: PodSecurityLevelSchema.prefault("restricted"),
  version: z
    .string()
    .regex(/^(latest|v[0-9]+\.[0-9]+)$/, { error: 'must be "latest" or a Kubernetes minor version like v1.34' })
    .prefault("latest"),
});
export type PodSecurity = z.output<typeof PodSecuritySchema>;

/** Which way an allow rule lets traffic flow, seen from the tenant's pods. */
export const TRAFFIC_DIRECTIONS = ["Ingress", "Egress", "Both"] as const;
export const TrafficDirectionSchema = z.enum(TRAFFIC_DIRECTIONS);
export type TrafficDirection = z.output<typeof TrafficDirectionSchema>;

const PortNumberSchema = z.int().min(1).max(65535);

/** A port or port range an allow rule is limited to. */
export const NetworkPortSchema = z
  .object({
    protocol: z.enum(["TCP", "UDP", "SCTP"]).prefault("TCP"),
    port: PortNumberSchema,
    endPort: PortNumberSchema.optional(),
  })
  .refine((p) => p.endPort === undefined || p.endPort >= p.port, {
    error: "endPort must be greater than or equal to port",
    path: ["endPort"],
  });
export type NetworkPort = z.output<typeof NetworkPortSchema>;

const PortsSchema = z.array(NetworkPortSchema).max(16);

/** Traffic allowed to or from all pods of one other host namespace. */
export const NamespaceRuleSchema = z.object({
  name: z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { error: "must be a namespace name like ingress-nginx" }),
  direction: TrafficDirectionSchema.prefault("Both"),
  ports: PortsSchema.optional(),
});
export type NamespaceRule = z.output<typeof NamespaceRuleSchema>;

const CIDR_MESSAGE = "must be a CIDR in canonical form like 10.0.0.0/8 or fd00::/8 (no bits set after the prefix)";
const CidrStringSchema = z
  .string()
  .max(43, { error: CIDR_MESSAGE })
  .refine((text) => parseCidr(text) !== undefined, { error: CIDR_MESSAGE });

/** Traffic allowed to (or from) an IP range, minus the ranges in `except`. */
export const CidrRuleSchema = z
  .object({
    cidr: CidrStringSchema,
    except: z.array(CidrStringSchema).max(32).optional(),
    direction: TrafficDirectionSchema.prefault("Egress"),
    ports: PortsSchema.optional(),
  })
  .superRefine((rule, ctx) => {
    const outer = parseCidr(rule.cidr);
    rule.except?.forEach((text, index) => {
      const inner = parseCidr(text);
      if (outer !== undefined && inner !== undefined && !isStrictSubnet(outer, inner)) {
        ctx.addIssue({
          code: "custom",
          path: ["except", index],
          message: `must be a strictly smaller range inside ${rule.cidr}`,
        });
      }
    });
  });
export type CidrRule = z.output<typeof CidrRuleSchema>;

/** Exceptions to the default-deny NetworkPolicy. */
export const NetworkAllowSchema = z.object({
  dns: z.boolean().prefault(true),
  sameNamespace: z.boolean().prefault(true),
  namespaces: z.array(NamespaceRuleSchema).max(64).prefault([]),
  cidrs: z.array(CidrRuleSchema).max(64).prefault([]),
});
export type NetworkAllow = z.output<typeof NetworkAllowSchema>;

/**
 * NetworkPolicy settings. Allow rules only matter in a direction that is denied by default;
 * the tenant API server stays reachable on TCP 6443 whatever is set here.
 */
export const NetworkSchema = z.object({
  defaultDeny: z.object({ ingress: z.boolean().prefault(true), egress: z.boolean().prefault(true) }).prefault({}),
  allow: NetworkAllowSchema.prefault({}),
});
export type Network = z.output<typeof NetworkSchema>;

// Messages shared word for word with the CRD's CEL rules.
/** Why a quota key is refused. */
export const QUOTA_KEY_MESSAGE =
  "every key must be a ResourceQuota resource name: pods, services, secrets, configmaps, persistentvolumeclaims, services.loadbalancers, services.nodeports, resourcequotas, replicationcontrollers, cpu, memory, ephemeral-storage, requests.<cpu|memory|storage|ephemeral-storage>, limits.<cpu|memory|ephemeral-storage>, hugepages-<size>, or a prefixed name like count/deployments.apps or requests.nvidia.com/gpu";
/** Why a fractional object count is refused. */
export const QUOTA_WHOLE_MESSAGE =
  "object counts and extended resources (pods, services, count/..., vendor.com/...) must be whole numbers";
/** Why a container resource key is refused. */
export const CONTAINER_RESOURCE_MESSAGE =
  "every key must be a container resource: cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource like nvidia.com/gpu";
/** Why a zero default or maximum is refused. */
export const NONZERO_LIMIT_MESSAGE = "every value must be greater than zero; leave the resource out instead";
/** Why a PersistentVolumeClaim bound on anything but storage is refused. */
export const CLAIM_RESOURCE_MESSAGE = "the only resource a PersistentVolumeClaim bound takes is storage";
/** The most resources one LimitRange map may name. */
export const MAX_LIMIT_RESOURCES = 16;
/** The most resources a quota may name. */
export const MAX_QUOTA_RESOURCES = 64;

/** The LimitRange comparisons the API server makes, as (lower map, upper map, field reported, message). */
export const LIMIT_ORDER = [
  ["min", "max", "min", "must not exceed max for the same resource"],
  ["default", "max", "default", "must not exceed max for the same resource"],
  ["min", "default", "default", "must not be below min for the same resource"],
  ["defaultRequest", "default", "defaultRequest", "must not exceed default for the same resource"],
  ["defaultRequest", "max", "defaultRequest", "must not exceed max for the same resource"],
  ["min", "defaultRequest", "defaultRequest", "must not be below min for the same resource"],
] as const;

function resourceList(key: (k: string) => boolean, keyMessage: string, max: number) {
  return z
    .record(z.string().min(1).refine(key, { error: keyMessage }), QuantitySchema)
    .refine((map) => Object.keys(map).length <= max, { error: `at most ${max} resources` });
}

const positive = (map: Record<string, string>) => Object.values(map).every((q) => compareQuantities(q, "0") !== 0);

/**
 * ResourceQuota for the tenant's workloads. The host quota object is larger by tenantplane's own
 * share (the tenant API server's pod and volume, its DNS pod and Services, added by the isolation
 * service), so these numbers are what the tenant itself may use.
 */
export const ResourceQuotaSpecSchema = z.object({
  hard: resourceList(isQuotaResourceName, QUOTA_KEY_MESSAGE, MAX_QUOTA_RESOURCES)
    .superRefine((hard, ctx) => {
      for (const [key, value] of Object.entries(hard)) {
        if (isWholeQuotaResource(key) && !isWholeQuantity(value))
          ctx.addIssue({ code: "custom", path: [key], message: QUOTA_WHOLE_MESSAGE });
      }
    })
    // Sized for a small team: ten Deployments of two replicas and two StatefulSets of two replicas
    // with claims, every container of the LimitRange's default size, is 24 Pods asking for 2.4 CPU
    // and 3Gi and limited to 12 CPU and 12Gi; the quota gives that about 2x room (sidecars, Jobs,
    // a rollout's surge Pods, a few larger containers) and requests 3x. Limits over requests
    // (3x CPU, 2x memory) is the usual overcommit of shared clusters, in the range vcluster's
    // isolated mode and OpenShift's project templates ship with. Services of type LoadBalancer
    // cost money, so one; the control plane's own one is tenantplane's share, not the tenant's.
    .prefault({
      pods: "50",
      "requests.cpu": "8",
      "requests.memory": "16Gi",
      "limits.cpu": "24",
      "limits.memory": "32Gi",
      persistentvolumeclaims: "20",
      "requests.storage": "200Gi",
      "services.loadbalancers": "1",
    }),
});
export type ResourceQuotaSpec = z.output<typeof ResourceQuotaSpecSchema>;

const containerList = () => resourceList(isContainerResourceName, CONTAINER_RESOURCE_MESSAGE, MAX_LIMIT_RESOURCES);
const claimList = () => resourceList((k) => k === "storage", CLAIM_RESOURCE_MESSAGE, MAX_LIMIT_RESOURCES);

/** LimitRange for the host namespace: container defaults and bounds, PVC size bounds, in the order the API server demands. */
export const LimitRangeSpecSchema = z.object({
  container: z
    .object({
      // A container that says nothing gets a small web service's size: it may burst to half a core
      // and 512Mi (enough for most runtimes, and the default of many platforms) and is scheduled
      // for a tenth of a core and 128Mi. A default limit of a whole core made every unsized
      // container cost an eighth of the old quota.
      default: containerList()
        .refine(positive, { error: NONZERO_LIMIT_MESSAGE })
        .prefault({ cpu: "500m", memory: "512Mi" }),
      defaultRequest: containerList().prefault({ cpu: "100m", memory: "128Mi" }),
      min: containerList().prefault({}),
      max: containerList().refine(positive, { error: NONZERO_LIMIT_MESSAGE }).prefault({ cpu: "4", memory: "8Gi" }),
    })
    .superRefine((container, ctx) => {
      for (const [lower, upper, field, message] of LIMIT_ORDER) {
        for (const [resource, value] of Object.entries(container[lower])) {
          const bound = container[upper][resource];
          if (bound !== undefined && compareQuantities(value, bound) === 1)
            ctx.addIssue({ code: "custom", path: [field, resource], message });
        }
      }
    })
    .prefault({}),
  persistentVolumeClaim: z
    .object({
      min: claimList().prefault({}),
      max: claimList().refine(positive, { error: NONZERO_LIMIT_MESSAGE }).prefault({ storage: "50Gi" }),
    })
    .superRefine((claim, ctx) => {
      const { min, max } = claim;
      if (min.storage !== undefined && max.storage !== undefined && compareQuantities(min.storage, max.storage) === 1)
        ctx.addIssue({
          code: "custom",
          path: ["min", "storage"],
          message: "must not exceed max for the same resource",
        });
    })
    .prefault({}),
});
export type LimitRangeSpec = z.output<typeof LimitRangeSpecSchema>;

const OBJECT_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
const ObjectNameSchema = z
  .string()
  .max(253)
  .regex(new RegExp(OBJECT_NAME_PATTERN), { error: "must be an object name like high-priority or gvisor" });
const LABEL_VALUE_PATTERN = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";
/** A label value: at most 63 characters, alphanumerics, '-', '_' or '.', or empty. */
export const LabelValueSchema = z
  .string()
  .max(63)
  .regex(new RegExp(LABEL_VALUE_PATTERN), { error: "must be a label value: alphanumerics, '-', '_' or '.'" });
/** A label key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters. */
export const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** The taint effects a toleration can name. */
export const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"] as const;

/** A toleration as in a Pod's `spec.tolerations`. */
export const TolerationSchema = z.object({
  key: z.string().max(316).optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: LabelValueSchema.optional(),
  effect: z.enum(TAINT_EFFECTS).optional(),
  tolerationSeconds: z.int().optional(),
});
export type Toleration = z.output<typeof TolerationSchema>;

const LOAD_BALANCER_CLASS_PATTERN =
  "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";
const ANNOTATION_PREFIX_PATTERN = "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/$";

/** A list of at most `maxItems` strings, each at most `maxLength` long and matching `pattern`; default empty. */
function patternList(pattern: string, maxLength: number, error: string, maxItems: number) {
  return z
    .array(z.string().max(maxLength).regex(new RegExp(pattern), { error }))
    .max(maxItems)
    .prefault([]);
}

/** Service types other than ClusterIP a tenant may create on the host. */
export const ServiceTypesSchema = z.object({
  nodePort: z.boolean().prefault(false),
  loadBalancer: z.boolean().prefault(false),
  externalName: z.boolean().prefault(true),
  allowedLoadBalancerClasses: patternList(
    LOAD_BALANCER_CLASS_PATTERN,
    316,
    "must be a prefixed name like example.com/internal",
    16,
  ),
});
export type ServiceTypes = z.output<typeof ServiceTypesSchema>;

/** Volume types a synced Pod may always use: they mount only what the Pod's own namespace holds. */
export const ALWAYS_ALLOWED_VOLUME_TYPES = [
  "configMap",
  "secret",
  "emptyDir",
  "projected",
  "downwardAPI",
  "persistentVolumeClaim",
  "ephemeral",
] as const;

/**
 * The Pod API's other volume types, which a profile may allow in `workloads.volumes.allowedTypes`:
 * the node mounts or runs each of them itself. hostPath is never allowed; inline csi is
 * allowed per driver in `workloads.volumes.allowedCSIDrivers`.
 */
export const PROFILE_VOLUME_TYPES = [
  "awsElasticBlockStore",
  "azureDisk",
  "azureFile",
  "cephfs",
  "cinder",
  "fc",
  "flexVolume",
  "flocker",
  "gcePersistentDisk",
  "gitRepo",
  "glusterfs",
  "image",
  "iscsi",
  "nfs",
  "photonPersistentDisk",
  "portworxVolume",
  "quobyte",
  "rbd",
  "scaleIO",
  "storageos",
  "vsphereVolume",
] as const;
export const ProfileVolumeTypeSchema = z.enum(PROFILE_VOLUME_TYPES, {
  error: (issue) =>
    `unknown volume type ${JSON.stringify(issue.input)}: use one of ${PROFILE_VOLUME_TYPES.join(", ")} ` +
    `(${ALWAYS_ALLOWED_VOLUME_TYPES.join(", ")} are always allowed; inline csi is allowed per driver in allowedCSIDrivers; hostPath never)`,
});
export type ProfileVolumeType = z.output<typeof ProfileVolumeTypeSchema>;

/** Volume types and inline CSI drivers a synced Pod may use besides `ALWAYS_ALLOWED_VOLUME_TYPES`. */
export const VolumeRulesSchema = z.object({
  allowedTypes: z.array(ProfileVolumeTypeSchema).max(32).prefault([]),
  allowedCSIDrivers: patternList(OBJECT_NAME_PATTERN, 63, "must be a CSI driver name like csi.example.com", 32),
});
export type VolumeRules = z.output<typeof VolumeRulesSchema>;

/** Why a classMap entry is refused: it would map to a class the profile does not allow. */
export const CLASS_MAP_TARGET_MESSAGE =
  "every classMap value must be a class allowedClasses lists: add it there, or map to a listed class";

/**
 * Which host StorageClasses a tenant's claims (PersistentVolumeClaims and ephemeral volume
 * templates alike) may use. `allowedClasses` absent: only the host's default StorageClass
 * (the one annotated storageclass.kubernetes.io/is-default-class=true), which a claim naming
 * no class gets. `classMap` renames a tenant class to a host class before that check.
 */
export const StorageRulesSchema = z
  .object({
    allowedClasses: z.array(ObjectNameSchema).max(32).optional(),
    classMap: z
      .record(z.string(), ObjectNameSchema)
      .refine((map) => Object.keys(map).every((key) => ObjectNameSchema.safeParse(key).success), {
        error: "keys must be StorageClass names like fast",
      })
      .refine((map) => Object.keys(map).length <= 32, { error: "at most 32 entries" })
      .prefault({}),
  })
  .superRefine((rules, ctx) => {
    if (rules.allowedClasses === undefined) return;
    for (const [from, to] of Object.entries(rules.classMap)) {
      if (!rules.allowedClasses.includes(to))
        ctx.addIssue({ code: "custom", path: ["classMap", from], message: CLASS_MAP_TARGET_MESSAGE });
    }
  });
export type StorageRules = z.output<typeof StorageRulesSchema>;

const CAPABILITY_PATTERN = "^[A-Z][A-Z0-9_]*$";
const SYSCTL_PATTERN = "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";

/**
 * What a tenant's Pods and Services may do to the host, applied by the sync engine: a
 * field or Service type outside these rules is never synced. Quotas on
 * `services.nodeports` and `services.loadbalancers` are set in `resourceQuota.hard`.
 * The `allow*` fields lift the floor that holds at every Pod Security level, one field each.
 */
export const WorkloadRulesSchema = z.object({
  allowedPriorityClasses: z.array(ObjectNameSchema).max(32).prefault([]),
  allowedRuntimeClasses: z.array(ObjectNameSchema).max(32).prefault([]),
  schedulers: z.array(ObjectNameSchema).max(16).prefault([]),
  volumes: VolumeRulesSchema.prefault({}),
  storage: StorageRulesSchema.prefault({}),
  allowedCapabilities: patternList(CAPABILITY_PATTERN, 64, "must be a capability name like SYS_PTRACE", 64),
  allowedSysctls: patternList(SYSCTL_PATTERN, 253, "must be a sysctl name like kernel.msgmax", 64),
  allowUnconfinedSeccomp: z.boolean().prefault(false),
  allowUnconfinedAppArmor: z.boolean().prefault(false),
  allowUnmaskedProcMount: z.boolean().prefault(false),
  allowProbeHosts: z.boolean().prefault(false),
  allowResourceClaims: z.boolean().prefault(false),
  allowedAnnotationPrefixes: patternList(
    ANNOTATION_PREFIX_PATTERN,
    254,
    "must be a key prefix ending in '/' like metallb.io/, or *.cilium.io/ for every subdomain",
    32,
  ),
  nodeSelector: z
    .record(z.string(), LabelValueSchema)
    .refine((map) => Object.keys(map).every((key) => LABEL_KEY.test(key)), {
      error: "keys must be label keys like node-role.example.com/tenants",
    })
    .refine((map) => Object.keys(map).length <= 16, { error: "at most 16 keys" })
    .prefault({}),
  tolerations: z.array(TolerationSchema).max(16).prefault([]),
  services: ServiceTypesSchema.prefault({}),
});
export type WorkloadRules = z.output<typeof WorkloadRulesSchema>;

/** IsolationProfile.spec; `{}` is a complete, production-ready profile once defaults are applied. */
export const IsolationProfileSpecSchema = z.object({
  workloads: WorkloadRulesSchema.prefault({}),
  podSecurity: PodSecuritySchema.prefault({}),
  network: NetworkSchema.prefault({}),
  resourceQuota: ResourceQuotaSpecSchema.prefault({}),
  limitRange: LimitRangeSpecSchema.prefault({}),
});
export type IsolationProfileSpec = z.output<typeof IsolationProfileSpecSchema>;

/** The built-in profile used when a TenantCluster names none; equal to an empty spec with defaults. */
export const defaultIsolationProfileSpec: IsolationProfileSpec = IsolationProfileSpecSchema.parse({});

/** A whole IsolationProfile object as read from the API server. */
export const IsolationProfileSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND_ISOLATION_PROFILE),
  metadata: ObjectMetaSchema,
  spec: IsolationProfileSpecSchema.prefault({}),
});
export type IsolationProfile = z.output<typeof IsolationProfileSchema>;

/** Parses an IsolationProfile with defaults applied, or throws a ValidationError naming each bad field. */
export function parseIsolationProfile(input: unknown): IsolationProfile {
  return parseOrThrow(IsolationProfileSchema, input, describeSubject(KIND_ISOLATION_PROFILE, input));
}

/** Parses an IsolationProfile spec alone, defaults applied. */
export function parseIsolationProfileSpec(input: unknown): IsolationProfileSpec {
  return parseOrThrow(IsolationProfileSpecSchema, input, `${KIND_ISOLATION_PROFILE} spec`, ["spec"]);
}
