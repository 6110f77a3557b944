import * as z from "zod";
import { TAINT_EFFECT_DEDICATED, TAINT_KEY_DEDICATED } from "./constants.js";
import { LABEL_KEY, LabelValueSchema } from "./isolation-profile.js";

/**
 * Values of `spec.isolation.mode` and `status.isolation.mode`: Shared and Dedicated place
 * synced Pods on host nodes; Private runs them on nodes that join the tenant's own API.
 */
export const ISOLATION_MODES = ["Shared", "Dedicated", "Private"] as const;
/** Where a tenant's Pods run. */
export type IsolationMode = (typeof ISOLATION_MODES)[number];
/** The mode of a tenant whose spec says none. */
export const DEFAULT_ISOLATION_MODE: IsolationMode = "Shared";

/** Phases of `status.isolation.migration.phase`. */
export const MIGRATION_PHASES = ["Moving", "Blocked", "Complete"] as const;
export type MigrationPhase = (typeof MIGRATION_PHASES)[number];

/** Most entries of `status.isolation.migration.blocked`; the rest are counted in `left`. */
export const MAX_BLOCKED_WORKLOADS = 50;
/** Most node names `status.isolation.dedicatedNodes` lists (the largest cluster Kubernetes supports). */
export const MAX_DEDICATED_NODES = 5000;
/** Most label pairs of `spec.isolation.dedicated.nodeSelector`, as for a profile's nodeSelector. */
export const MAX_DEDICATED_SELECTOR_KEYS = 16;

// Messages shared word for word with the CRD's CEL rules.
/** Why a Dedicated tenant without a node selector is refused; the CRD says it after the field's path. */
export const DEDICATED_SELECTOR_MESSAGE =
  "is required when spec.isolation.mode is Dedicated: name at least one label of the host nodes to reserve " +
  "for this tenant, like tenantplane.io/pool: team-a (label the nodes first)";
/** Why a node selector key is refused. */
export const NODE_SELECTOR_KEY_MESSAGE = "keys must be label keys like node-role.example.com/tenants";

/** spec.isolation.dedicated: which host nodes are reserved for the tenant while it is Dedicated. */
export const DedicatedSpecSchema = z.object({
  nodeSelector: z
    .record(z.string(), LabelValueSchema)
    .refine((map) => Object.keys(map).every((key) => LABEL_KEY.test(key)), { error: NODE_SELECTOR_KEY_MESSAGE })
    .refine((map) => Object.keys(map).length <= MAX_DEDICATED_SELECTOR_KEYS, {
      error: `at most ${MAX_DEDICATED_SELECTOR_KEYS} keys`,
    })
    .optional(),
});
export type DedicatedSpec = z.output<typeof DedicatedSpecSchema>;

/** spec.isolation.migration: how a change of mode may move the tenant's workloads. */
export const MigrationSpecSchema = z.object({
  evictBarePods: z.boolean().prefault(false),
});
export type MigrationSpec = z.output<typeof MigrationSpecSchema>;

/** spec.isolation: where the tenant's Pods run. Absent means Shared. */
export const IsolationSpecSchema = z
  .object({
    mode: z.enum(ISOLATION_MODES).prefault(DEFAULT_ISOLATION_MODE),
    dedicated: DedicatedSpecSchema.optional(),
    migration: MigrationSpecSchema.prefault({}),
  })
  .superRefine((isolation, ctx) => {
    if (isolation.mode !== "Dedicated") return;
    if (Object.keys(isolation.dedicated?.nodeSelector ?? {}).length > 0) return;
    ctx.addIssue({ code: "custom", path: ["dedicated", "nodeSelector"], message: DEDICATED_SELECTOR_MESSAGE });
  });
export type IsolationSpec = z.output<typeof IsolationSpecSchema>;

/** A workload a migration cannot move, and why (a bare Pod, a Pod on a host-backed claim). */
export const BlockedWorkloadSchema = z.object({
  namespace: z.string().max(253),
  name: z.string().max(253),
  reason: z.string().max(1024),
});
export type BlockedWorkload = z.output<typeof BlockedWorkloadSchema>;

const TimeSchema = z.iso.datetime({ offset: true, error: "must be an RFC 3339 time like 2026-01-02T15:04:05Z" });

/** status.isolation.migration, written by the migration driver: the last change of mode and how far it got. */
export const MigrationStatusSchema = z.object({
  from: z.enum(ISOLATION_MODES),
  to: z.enum(ISOLATION_MODES),
  phase: z.enum(MIGRATION_PHASES),
  moved: z.int().min(0).optional(),
  left: z.int().min(0).optional(),
  blocked: z.array(BlockedWorkloadSchema).max(MAX_BLOCKED_WORKLOADS).optional(),
  startedAt: TimeSchema.optional(),
  finishedAt: TimeSchema.optional(),
});
export type MigrationStatus = z.output<typeof MigrationStatusSchema>;

/**
 * status.isolation: `mode` (the effective mode) and `migration` are the migration driver's,
 * `dedicatedNodes` the isolation service's; each writes only its own fields.
 */
export const IsolationStatusSchema = z.object({
  mode: z.enum(ISOLATION_MODES).optional(),
  dedicatedNodes: z.array(z.string().max(253)).max(MAX_DEDICATED_NODES).optional(),
  migration: MigrationStatusSchema.optional(),
});
export type IsolationStatus = z.output<typeof IsolationStatusSchema>;

/** The mode a parsed spec asks for: Shared when `spec.isolation` is absent. */
export function isolationModeOf(spec: { isolation?: IsolationSpec | undefined }): IsolationMode {
  return spec.isolation?.mode ?? DEFAULT_ISOLATION_MODE;
}

/** The node selector of a tenant that asks for Dedicated, else undefined (a Shared spec's selector reserves nothing). */
export function dedicatedNodeSelectorOf(spec: {
  isolation?: IsolationSpec | undefined;
}): Readonly<Record<string, string>> | undefined {
  return isolationModeOf(spec) === "Dedicated" ? spec.isolation?.dedicated?.nodeSelector : undefined;
}

/** Value of the dedicated-node taint on the nodes reserved for `tenant`: the tenant's name. */
export function dedicatedTaintValue(tenant: string): string {
  return tenant;
}

/** A node taint as in `Node.spec.taints`. */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

/** The taint on every host node reserved for `tenant`: `tenantplane.io/dedicated=<tenant>:NoSchedule`. */
export function dedicatedTaint(tenant: string): Taint {
  return { key: TAINT_KEY_DEDICATED, value: dedicatedTaintValue(tenant), effect: TAINT_EFFECT_DEDICATED };
}

/** The toleration a Dedicated tenant's host Pods carry for its reserved nodes (and only its own). */
export function dedicatedToleration(tenant: string): {
  key: string;
  operator: "Equal";
  value: string;
  effect: typeof TAINT_EFFECT_DEDICATED;
} {
  return {
    key: TAINT_KEY_DEDICATED,
    operator: "Equal",
    value: dedicatedTaintValue(tenant),
    effect: TAINT_EFFECT_DEDICATED,
  };
}
