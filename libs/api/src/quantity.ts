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

// Nano-units are the finest a Kubernetes quantity keeps; sums are exact in them.
const NANO = 10n ** 9n;

function nanos(text: string): bigint | undefined {
  const q = exactQuantity(text);
  if (!q) return undefined;
  let value = q.mantissa * 2n ** BigInt(q.exp2) * NANO;
  // Below a nano-unit the API server rounds up, and so does this.
  if (q.exp10 >= 0) return value * 10n ** BigInt(q.exp10);
  const divisor = 10n ** BigInt(-q.exp10);
  const whole = value / divisor;
  value = whole + (whole * divisor === value ? 0n : 1n);
  return value;
}

const BINARY_STEPS: readonly [string, bigint][] = [
  ["Ei", 2n ** 60n],
  ["Pi", 2n ** 50n],
  ["Ti", 2n ** 40n],
  ["Gi", 2n ** 30n],
  ["Mi", 2n ** 20n],
  ["Ki", 2n ** 10n],
];
const DECIMAL_STEPS: readonly [string, bigint][] = [
  ["E", 10n ** 27n],
  ["P", 10n ** 24n],
  ["T", 10n ** 21n],
  ["G", 10n ** 18n],
  ["M", 10n ** 15n],
  ["k", 10n ** 12n],
  ["", NANO],
  ["m", 10n ** 6n],
  ["u", 10n ** 3n],
  ["n", 1n],
];

// The largest suffix that writes the value whole, binary when the inputs were: `1200m`, `8480Mi`, `52`.
function formatNanos(value: bigint, binary: boolean): string {
  if (value === 0n) return "0";
  if (binary && value % NANO === 0n) {
    for (const [suffix, size] of BINARY_STEPS) {
      if ((value / NANO) % size === 0n) return `${value / NANO / size}${suffix}`;
    }
  }
  for (const [suffix, size] of DECIMAL_STEPS) {
    if (value % size === 0n) return `${value / size}${suffix}`;
  }
  return `${value}n`;
}

const isBinary = (text: string) => /[KMGTPE]i$/.test(text);

/**
 * The exact sum of quantities, written with the largest suffix that keeps it whole (binary
 * when any input used one): `["1", "200m"]` → `1200m`, `["8Gi", "288Mi"]` → `8480Mi`.
 * Throws when one is not a quantity.
 */
export function addQuantities(...texts: readonly (string | number)[]): string {
  let sum = 0n;
  for (const text of texts) {
    const value = nanos(String(text));
    if (value === undefined) throw new Error(`${JSON.stringify(text)} is not a quantity`);
    sum += value;
  }
  return formatNanos(
    sum,
    texts.some((t) => isBinary(String(t))),
  );
}

/**
 * `a - b`, exact, never below zero (a quantity cannot be negative), formatted as
 * {@link addQuantities} does. Throws when either is not a quantity.
 */
export function subtractQuantities(a: string | number, b: string | number): string {
  const x = nanos(String(a));
  const y = nanos(String(b));
  if (x === undefined || y === undefined)
    throw new Error(`${JSON.stringify(x === undefined ? a : b)} is not a quantity`);
  return formatNanos(x > y ? x - y : 0n, isBinary(String(a)) || isBinary(String(b)));
}
