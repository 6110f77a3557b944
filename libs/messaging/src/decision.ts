import * as z from "zod";
import { boundedText } from "./bounded-text.js";

/**
 * Free text of a Decision: parsing cuts it to MAX_DECISION_TEXT bytes and marks the cut, so
 * every path to the stream (a planner's Skip, a Fail quoting the host API's answer, a
 * republished record, a publisher of an older version) carries at most that much tenant text.
 */
const DecisionText = z.string().transform((text) => boundedText(text));

/**
 * What tenantplane did about a host object: wrote it (Create, Update, Delete), chose not to
 * (Skip), or tried to write it and the host API refused (Fail; `error` says how).
 */
export const DecisionActionSchema = z.enum(["Create", "Update", "Delete", "Skip", "Fail"]);
export type DecisionAction = z.infer<typeof DecisionActionSchema>;

/**
 * The host API server's answer to a refused write, on a `Fail` Decision: `code` is the HTTP
 * status (0 when no answer came: a persistent timeout or connection failure), `reason` the
 * Kubernetes Status reason (`Forbidden`, `Invalid`, `AlreadyExists`, ...; `Unknown` when the
 * answer carried none), `message` the server's own words (quota numbers, the admission
 * webhook's denial). `attempted` is the write that was refused.
 */
export const DecisionErrorSchema = z.object({
  code: z.number().int().min(0),
  reason: z.string().min(1).pipe(DecisionText),
  message: DecisionText,
  attempted: z.enum(["Create", "Update", "Delete"]).optional(),
});
export type DecisionError = z.infer<typeof DecisionErrorSchema>;

/**
 * A namespaced object reference; namespace is empty for cluster-scoped objects. `uid` is set
 * on a host object tenantplane created or updated, the object's uid after the write.
 */
export const ObjectRefSchema = z.object({
  namespace: z.string(),
  name: z.string().min(1),
  uid: z.string().min(1).optional(),
});
export type ObjectRef = z.infer<typeof ObjectRefSchema>;

/**
 * A Decision: tenantplane's public record of one action on one host object and why.
 * Published on `tenantplane.decisions.<tenant>.<kind>.<action>`; the schema is a
 * public contract, so fields are only ever added, never renamed or removed.
 */
export const DecisionSchema = z.object({
  id: z.string().min(1),
  time: z.iso.datetime({ offset: true }),
  tenant: z.string().min(1),
  service: z.string().min(1),
  action: DecisionActionSchema,
  kind: z.string().min(1),
  tenantRef: ObjectRefSchema,
  hostRef: ObjectRefSchema,
  /** At most MAX_DECISION_TEXT bytes; longer ones are cut and end with TRUNCATED. */
  reason: z.string().min(1).pipe(DecisionText),
  /** Set on a `Fail` Decision only: what the host API answered. */
  error: DecisionErrorSchema.optional(),
});
export type Decision = z.infer<typeof DecisionSchema>;

/**
 * What a planner proposes: a Decision before it is stamped with the deciding service.
 * `id` and `time` are set when the Decision was recorded earlier (on the host object
 * it is about) and must be republished unchanged; otherwise stamping derives them.
 */
export type PlannedDecision = Omit<Decision, "id" | "time" | "service"> & {
  id?: string | undefined;
  time?: string | undefined;
};
