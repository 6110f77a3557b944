import * as z from "zod";

/** Why a tenant-change message was published. */
export const ChangeReasonSchema = z.enum([
  "TenantChanged",
  "TenantDeleted",
  "IsolationProfileChanged",
  "SyncPolicyChanged",
  "Resync",
]);
export type ChangeReason = z.infer<typeof ChangeReasonSchema>;

/**
 * A key, not a snapshot: consumers re-read the TenantCluster and act on current
 * state, so a duplicate or late message is harmless.
 */
export const TenantChangeSchema = z.object({
  tenant: z.string().min(1),
  generation: z.number().int().nonnegative().optional(),
  reason: ChangeReasonSchema,
});
export type TenantChange = z.infer<typeof TenantChangeSchema>;
