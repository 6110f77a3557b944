import { z } from "zod";

/** Kinds the sync engine knows how to carry from a tenant to the host. */
export const SYNC_KINDS = [
  "Pod",
  "ConfigMap",
  "Secret",
  "Service",
  "ServiceAccount",
  "PersistentVolumeClaim",
] as const;
export const SyncKindSchema = z.enum(SYNC_KINDS, {
  error: (issue) =>
    `unknown kind ${JSON.stringify(issue.input)}: use one of ${SYNC_KINDS.join(", ")}`,
});
export type SyncKind = z.infer<typeof SyncKindSchema>;

/** One kind synced from the tenant to the host. */
export const ToHostRuleSchema = z.object({ kind: SyncKindSchema });

/** SyncPolicy.spec: which kinds cross the virtual-to-host boundary. */
export const SyncPolicySpecSchema = z.object({
  toHost: z
    .array(ToHostRuleSchema)
    .refine((rules) => new Set(rules.map((r) => r.kind)).size === rules.length, {
      message: "each kind may appear once in toHost",
    }),
});
export type SyncPolicySpec = z.infer<typeof SyncPolicySpecSchema>;

/** The policy used when a TenantCluster names none: every supported kind goes to the host. */
export const defaultSyncPolicySpec: SyncPolicySpec = {
  toHost: SYNC_KINDS.map((kind) => ({ kind })),
};
