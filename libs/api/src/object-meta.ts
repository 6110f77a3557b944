import * as z from "zod";

/**
 * The parts of `metadata` tenantplane reads. Other fields are kept as they are, so a parsed
 * object can be written back without losing anything.
 */
// Timestamps arrive as RFC 3339 strings in JSON, but as Date objects when an object
// was read through @kubernetes/client-node, which revives metav1.Time fields.
const Timestamp = z.preprocess((v) => (v instanceof Date ? v.toISOString() : v), z.string());

export const ObjectMetaSchema = z.looseObject({
  name: z.string().min(1, { error: "is required" }),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().min(0).optional(),
  creationTimestamp: Timestamp.optional(),
  deletionTimestamp: Timestamp.optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
});
/** Parsed object metadata. */
export type ObjectMeta = z.output<typeof ObjectMetaSchema>;
