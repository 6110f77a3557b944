import * as z from "zod";
import { API_VERSION, KIND_SYNC_POLICY } from "./constants.js";
import { ObjectMetaSchema } from "./object-meta.js";
import { describeSubject, parseOrThrow } from "./validation-error.js";

/** Kinds the sync engine knows how to carry from a tenant to the host. */
export const SYNC_KINDS = ["Pod", "ConfigMap", "Secret", "Service", "ServiceAccount", "PersistentVolumeClaim"] as const;
export const SyncKindSchema = z.enum(SYNC_KINDS, {
  error: (issue) => `unknown kind ${JSON.stringify(issue.input)}: use one of ${SYNC_KINDS.join(", ")}`,
});
export type SyncKind = z.infer<typeof SyncKindSchema>;

/** One kind synced from the tenant to the host. */
export const ToHostRuleSchema = z.object({ kind: SyncKindSchema });

/** SyncPolicy.spec: which kinds cross the virtual-to-host boundary. */
export const SyncPolicySpecSchema = z.object({
  toHost: z
    .array(ToHostRuleSchema)
    .max(SYNC_KINDS.length)
    .refine((rules) => new Set(rules.map((r) => r.kind)).size === rules.length, {
      message: "each kind may appear once in toHost",
    }),
});
export type SyncPolicySpec = z.infer<typeof SyncPolicySpecSchema>;

/** The policy used when a TenantCluster names none: every supported kind goes to the host. */
export const defaultSyncPolicySpec: SyncPolicySpec = {
  toHost: SYNC_KINDS.map((kind) => ({ kind })),
};

/** A whole SyncPolicy object as read from the API server. */
export const SyncPolicySchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND_SYNC_POLICY),
  metadata: ObjectMetaSchema,
  spec: SyncPolicySpecSchema,
});
export type SyncPolicy = z.output<typeof SyncPolicySchema>;

/** Parses a SyncPolicy, or throws a ValidationError naming each bad field. */
export function parseSyncPolicy(input: unknown): SyncPolicy {
  return parseOrThrow(SyncPolicySchema, input, describeSubject(KIND_SYNC_POLICY, input));
}

/** Parses a SyncPolicy spec alone. */
export function parseSyncPolicySpec(input: unknown): SyncPolicySpec {
  return parseOrThrow(SyncPolicySpecSchema, input, `${KIND_SYNC_POLICY} spec`, ["spec"]);
}
