import * as z from "zod";

/** Values of `Condition.status`. */
export const CONDITION_STATUSES = ["True", "False", "Unknown"] as const;

/** A status condition, shaped exactly like Kubernetes' metav1.Condition. */
export const ConditionSchema = z.object({
  type: z
    .string()
    .max(316)
    .regex(
      /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
      { error: "must be a CamelCase condition type like ControlPlaneReady" },
    ),
  status: z.enum(CONDITION_STATUSES),
  observedGeneration: z.int().min(0).optional(),
  lastTransitionTime: z.iso.datetime({ offset: true, error: "must be an RFC 3339 time like 2026-01-02T15:04:05Z" }),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/, { error: "must be a CamelCase reason like ImagePullFailed" }),
  message: z.string().max(32768),
});
/** A parsed status condition. */
export type Condition = z.output<typeof ConditionSchema>;
/** One of `True`, `False`, `Unknown`. */
export type ConditionStatus = Condition["status"];
