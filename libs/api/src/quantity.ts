import * as z from "zod";

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
      // Bounded so that the CRDs' CEL rules over quantities stay within the API server's cost budget.
      z.string().max(64, { error: QUANTITY_MESSAGE }).regex(new RegExp(QUANTITY_PATTERN), { error: QUANTITY_MESSAGE }),
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

/** A quantity as an exact value: mantissa × 10^exp10 × 2^exp2. */
interface ExactQuantity {
  mantissa: bigint;
  exp10: number;
  exp2: number;
}

const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
// Kubernetes cannot represent quantities beyond these exponents; such text is not a usable quantity.
const MAX_EXPONENT = 64;

function exactQuantity(text: string): ExactQuantity | undefined {
  const match = /^(\d+(?:\.\d*)?|\.\d+)(?:([KMGTPE]i)|([numkMGTPE]?)|[eE]([+-]?\d+))$/.exec(text);
  if (!match) return undefined;
  const [, number = "", binary, decimal, exponent] = match;
  const [whole = "", fraction = ""] = number.split(".");
  const mantissa = BigInt(`${whole}${fraction}` || "0");
  let exp10 = -fraction.length;
  let exp2 = 0;
  if (binary) exp2 = BINARY_SUFFIX[binary] ?? 0;
  else if (exponent !== undefined) exp10 += Number(exponent);
  else exp10 += DECIMAL_SUFFIX[decimal ?? ""] ?? 0;
  if (Math.abs(exp10) > MAX_EXPONENT) return undefined;
  return { mantissa, exp10, exp2 };
}

/**
 * Compares two quantities exactly (`1Gi` equals `1073741824`, `100m` equals `0.1`), as
 * CEL's `quantity(a).compareTo(quantity(b))` does: -1, 0 or 1, or undefined when either
 * is not a quantity.
 */
export function compareQuantities(a: string | number, b: string | number): -1 | 0 | 1 | undefined {
  const x = exactQuantity(String(a));
  const y = exactQuantity(String(b));
  if (!x || !y) return undefined;
  const e10 = Math.min(x.exp10, y.exp10);
  const e2 = Math.min(x.exp2, y.exp2);
  const scale = (q: ExactQuantity) => q.mantissa * 10n ** BigInt(q.exp10 - e10) * 2n ** BigInt(q.exp2 - e2);
  const [l, r] = [scale(x), scale(y)];
  return l < r ? -1 : l > r ? 1 : 0;
}

/** Whether a quantity is a whole number (`2`, `2000m`, `1Ki`), as CEL's `isInteger()` judges it. */
export function isWholeQuantity(text: string | number): boolean {
  const q = exactQuantity(String(text));
  if (!q) return false;
  if (q.exp10 >= 0) return true;
  return (q.mantissa * 2n ** BigInt(q.exp2)) % 10n ** BigInt(-q.exp10) === 0n;
}
