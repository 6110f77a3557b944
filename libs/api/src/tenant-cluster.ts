import { z } from "zod";
import { API_VERSION, KIND_TENANT_CLUSTER, MAX_TENANT_NAME_LENGTH, TENANT_PHASES } from "./constants.js";
import { ConditionSchema } from "./condition.js";
import { ObjectMetaSchema } from "./object-meta.js";
import { QuantitySchema } from "./quantity.js";
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

/** A reference to another cluster-scoped tenantplane object by name. */
export const ObjectNameRefSchema = z.object({ name: z.string().min(1).max(253) });
export type ObjectNameRef = z.output<typeof ObjectNameRefSchema>;

/** Requests and limits of the tenant API server container. */
export const ControlPlaneResourcesSchema = z.object({
  requests: z
    .object({
      cpu: QuantitySchema.prefault("100m"),
      memory: QuantitySchema.prefault("256Mi"),
    })
    .prefault({}),
  limits: z.object({ cpu: QuantitySchema.optional(), memory: QuantitySchema.optional() }).optional(),
});

/** The volume holding the tenant API server's datastore. */
export const ControlPlaneStorageSchema = z.object({
  storageClassName: z.string().min(1).max(253).optional(),
  size: QuantitySchema.prefault("5Gi"),
});

/** How the tenant API is published outside the host cluster. */
export const ControlPlaneExposeSchema = z.object({
  loadBalancer: z
    .object({
      enabled: z.boolean().prefault(false),
      annotations: z.record(z.string(), z.string()).prefault({}),
    })
    .prefault({}),
});

/** spec.controlPlane: the tenant's API server. Every field has a default. */
export const ControlPlaneSpecSchema = z.object({
  image: z.string().min(1).prefault(DEFAULT_CONTROL_PLANE_IMAGE),
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
  observedGeneration: z.int().min(0).optional(),
  sync: SyncStatusSchema.optional(),
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
