import * as z from "zod";
import { API_VERSION, KIND_TENANT_CLUSTER, MAX_TENANT_NAME_LENGTH, TENANT_PHASES } from "./constants.js";
import { ConditionSchema } from "./condition.js";
import { ObjectMetaSchema } from "./object-meta.js";
import { IsolationSpecSchema, IsolationStatusSchema } from "./isolation-mode.js";
import { DNS_SUBDOMAIN, IMAGE_REFERENCE, isQualifiedName } from "./internal/names.js";
import { compareQuantities, QuantitySchema } from "./quantity.js";
import { describeSubject, parseOrThrow } from "./validation-error.js";

/** Image of the tenant API server when `spec.controlPlane.image` is unset. */
export const DEFAULT_CONTROL_PLANE_IMAGE = "rancher/k3s:v1.34.1-k3s1";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** What a tenant name must be; the CRD's admission rule says `metadata.name ` followed by this. */
export const TENANT_NAME_MESSAGE =
  `must be a DNS-1123 label of at most ${MAX_TENANT_NAME_LENGTH} characters ` +
  "(lowercase letters, digits and '-', starting and ending with a letter or digit) so that the " +
  "host namespace tp-<name> is a valid name; choose a shorter or simpler name";

/** A tenant name: a DNS-1123 label short enough that `tp-<name>` is still a namespace name. */
export const TenantNameSchema = z
  .string()
  .refine((name) => name.length <= MAX_TENANT_NAME_LENGTH && DNS1123_LABEL.test(name), {
    error: TENANT_NAME_MESSAGE,
  });

/** Whether `name` can name a TenantCluster. */
export function isValidTenantName(name: string): boolean {
  return TenantNameSchema.safeParse(name).success;
}

// Messages shared word for word with the CRD's CEL rules, so both admission paths say the same.
/** Why a zero storage size is refused. */
export const STORAGE_SIZE_MESSAGE = "must be greater than zero, e.g. 5Gi";
/** Why a zero limit is refused. */
export const LIMIT_ZERO_MESSAGE = "must be greater than zero; leave the limit out for no limit";
/** Why a storage class name is refused. */
export const STORAGE_CLASS_MESSAGE =
  "must be a StorageClass name: a DNS subdomain of lowercase letters, digits, '-' and '.', like fast-ssd";
/** Why an image with surrounding whitespace is refused. */
export const IMAGE_WHITESPACE_MESSAGE = "must not start or end with whitespace";
/** Why an image that is not a reference is refused. */
export const IMAGE_REFERENCE_MESSAGE =
  "must be an image reference like registry.example.com/team/k3s:v1.34.1-k3s1 or rancher/k3s@sha256:<digest>, with a lowercase repository path";
/** Why a load-balancer annotation key is refused. */
export const ANNOTATION_KEY_MESSAGE =
  "every key must be a qualified name like example.com/setting: an optional DNS subdomain prefix of at most 253 characters and '/', then a name of at most 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit";
/** Most annotations the LoadBalancer Service takes from the spec; with values of at most 4096 characters they stay far below the API server's 256 KiB. */
export const MAX_LOAD_BALANCER_ANNOTATIONS = 32;

/** Why a request above its limit is refused. */
export function requestAboveLimitMessage(resource: "cpu" | "memory"): string {
  return `must not exceed spec.controlPlane.resources.limits.${resource}: lower the request or raise the limit`;
}

/** A reference to another cluster-scoped tenantplane object by name. */
export const ObjectNameRefSchema = z.object({ name: z.string().min(1).max(253) });
export type ObjectNameRef = z.output<typeof ObjectNameRefSchema>;

/** A quantity that must be above zero, where zero would mean nothing (a volume size, a limit). */
function positiveQuantity(message: string) {
  return QuantitySchema.refine((q) => compareQuantities(q, "0") !== 0, { error: message });
}

/** Requests and limits of the tenant API server container; a request above its limit is refused. */
export const ControlPlaneResourcesSchema = z
  .object({
    requests: z
      .object({
        cpu: QuantitySchema.prefault("100m"),
        memory: QuantitySchema.prefault("256Mi"),
      })
      .prefault({}),
    limits: z
      .object({
        cpu: positiveQuantity(LIMIT_ZERO_MESSAGE).optional(),
        memory: positiveQuantity(LIMIT_ZERO_MESSAGE).optional(),
      })
      .optional(),
  })
  .superRefine((resources, ctx) => {
    for (const name of ["cpu", "memory"] as const) {
      const limit = resources.limits?.[name];
      if (limit !== undefined && compareQuantities(resources.requests[name], limit) === 1) {
        ctx.addIssue({ code: "custom", path: ["requests", name], message: requestAboveLimitMessage(name) });
      }
    }
  });

/** The volume holding the tenant API server's datastore. */
export const ControlPlaneStorageSchema = z.object({
  storageClassName: z
    .string()
    .min(1)
    .max(253)
    .refine((name) => DNS_SUBDOMAIN.test(name), { error: STORAGE_CLASS_MESSAGE })
    .optional(),
  size: positiveQuantity(STORAGE_SIZE_MESSAGE).prefault("5Gi"),
});

/** How the tenant API is published outside the host cluster. */
export const ControlPlaneExposeSchema = z.object({
  loadBalancer: z
    .object({
      enabled: z.boolean().prefault(false),
      annotations: z
        .record(z.string().refine(isQualifiedName, { error: ANNOTATION_KEY_MESSAGE }), z.string().max(4096))
        .refine((map) => Object.keys(map).length <= MAX_LOAD_BALANCER_ANNOTATIONS, {
          error: `at most ${MAX_LOAD_BALANCER_ANNOTATIONS} annotations`,
        })
        .prefault({}),
    })
    .prefault({}),
});

/** spec.controlPlane: the tenant's API server. Every field has a default. */
export const ControlPlaneSpecSchema = z.object({
  image: z
    .string()
    .min(1)
    .max(512)
    .refine((image) => image === image.trim(), { error: IMAGE_WHITESPACE_MESSAGE })
    // Empty and padded images already have their own message.
    .refine((image) => image === "" || image !== image.trim() || IMAGE_REFERENCE.test(image), {
      error: IMAGE_REFERENCE_MESSAGE,
    })
    .prefault(DEFAULT_CONTROL_PLANE_IMAGE),
  resources: ControlPlaneResourcesSchema.prefault({}),
  storage: ControlPlaneStorageSchema.prefault({}),
  expose: ControlPlaneExposeSchema.prefault({}),
});
export type ControlPlaneSpec = z.output<typeof ControlPlaneSpecSchema>;

/** TenantCluster.spec; `{}` is a complete spec once defaults are applied. */
export const TenantClusterSpecSchema = z.object({
  isolationProfileRef: ObjectNameRefSchema.optional(),
  syncPolicyRef: ObjectNameRefSchema.optional(),
  controlPlane: ControlPlaneSpecSchema.prefault({}),
  isolation: IsolationSpecSchema.optional(),
});
export type TenantClusterSpec = z.output<typeof TenantClusterSpecSchema>;

/** Where the tenant's admin kubeconfig is stored in the host cluster. */
export const SecretKeyRefSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  key: z.string(),
});
export type SecretKeyRef = z.output<typeof SecretKeyRefSchema>;

/** The tenant's lifecycle phase. */
export const TenantPhaseSchema = z.enum(TENANT_PHASES);
export type TenantPhase = z.output<typeof TenantPhaseSchema>;

/** status.sync, owned by the sync workers: object counts of the last state seen and when the last full pass ran. */
export const SyncStatusSchema = z.object({
  /** Sources whose host copy carries the desired content. */
  inSync: z.int().min(0),
  /** Sources not synced because their target name is held by another object or they cannot be translated. */
  skipped: z.int().min(0),
  /** Sources whose last write failed. */
  failed: z.int().min(0),
  lastFullPass: z.iso
    .datetime({ offset: true, error: "must be an RFC 3339 time like 2026-01-02T15:04:05Z" })
    .optional(),
});
export type SyncStatus = z.output<typeof SyncStatusSchema>;

/** TenantCluster.status, written by the services, each owning its own condition. */
export const TenantClusterStatusSchema = z.object({
  phase: TenantPhaseSchema.optional(),
  conditions: z
    .array(ConditionSchema)
    .max(32)
    .refine((list) => new Set(list.map((c) => c.type)).size === list.length, {
      error: "each condition type may appear once",
    })
    .optional(),
  hostNamespace: z.string().optional(),
  kubeconfigSecretRef: SecretKeyRefSchema.optional(),
  endpoint: z.string().optional(),
  externalEndpoint: z.string().optional(),
  /** RFC 3339 time at which the admin kubeconfig's client certificate expires. */
  kubeconfigExpiresAt: z.iso.datetime({ offset: true }).optional(),
  observedGeneration: z.int().min(0).optional(),
  sync: SyncStatusSchema.optional(),
  isolation: IsolationStatusSchema.optional(),
});
export type TenantClusterStatus = z.output<typeof TenantClusterStatusSchema>;

/** A whole TenantCluster object as read from the API server. */
export const TenantClusterSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND_TENANT_CLUSTER),
  metadata: ObjectMetaSchema.extend({ name: TenantNameSchema }),
  spec: TenantClusterSpecSchema.prefault({}),
  status: TenantClusterStatusSchema.optional(),
});
export type TenantCluster = z.output<typeof TenantClusterSchema>;

/** Parses a TenantCluster with defaults applied, or throws a ValidationError naming each bad field. */
export function parseTenantCluster(input: unknown): TenantCluster {
  return parseOrThrow(TenantClusterSchema, input, describeSubject(KIND_TENANT_CLUSTER, input));
}

/** Parses a TenantCluster spec alone (e.g. for `explain` commands), defaults applied. */
export function parseTenantClusterSpec(input: unknown): TenantClusterSpec {
  return parseOrThrow(TenantClusterSpecSchema, input, `${KIND_TENANT_CLUSTER} spec`, ["spec"]);
}
