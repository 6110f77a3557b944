import { z } from "zod";

/**
 * Non-negative Kubernetes quantity in string form (`500m`, `10Gi`, `2`, `1e3`).
 * The same pattern guards every quantity field of the CRDs.
 */
export const QUANTITY_PATTERN =
  "^(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

const QUANTITY_MESSAGE = "must be a quantity like 10Gi, 500m or 2";

/**
 * A quantity as written in YAML, a string or a non-negative integer (`pods: 50`),
 * always parsed to its string form so it can be copied into Kubernetes objects as is.
 */
export const QuantitySchema = z
  .union(
    [
      z.string().regex(new RegExp(QUANTITY_PATTERN), { error: QUANTITY_MESSAGE }),
      z.int({ error: QUANTITY_MESSAGE }).min(0, { error: QUANTITY_MESSAGE }),
    ],
    { error: QUANTITY_MESSAGE },
  )
  .transform((value) => String(value));
/** A quantity in its parsed (string) form. */
export type Quantity = z.output<typeof QuantitySchema>;

/** A map from resource name (`cpu`, `requests.storage`, `count/secrets`) to quantity. */
export const ResourceListSchema = z.record(z.string().min(1), QuantitySchema);
/** Parsed form of {@link ResourceListSchema}. */
export type ResourceList = z.output<typeof ResourceListSchema>;
