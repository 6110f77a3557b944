const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

const MULTIPLIERS: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The numeric value of a Kubernetes quantity string (`5Gi`, `500m`, `1e3`), or undefined if malformed. */
export function quantityValue(quantity: string): number | undefined {
  const match = QUANTITY.exec(quantity.trim());
  if (!match) return undefined;
  const [, digits, suffix, exponent] = match;
  const base = Number(digits);
  if (suffix !== undefined) return base * (MULTIPLIERS[suffix] ?? 1);
  if (exponent !== undefined) return base * 10 ** Number(exponent);
  return base;
}

/**
 * True when two quantities denote the same amount, however written (`5Gi` = `5120Mi`); the API
 * server may store a different spelling than the one submitted. Malformed values compare as text.
 */
export function quantitiesEqual(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const x = quantityValue(a);
  const y = quantityValue(b);
  if (x === undefined || y === undefined) return a === b;
  return x === y || Math.abs(x - y) <= Number.EPSILON * Math.max(Math.abs(x), Math.abs(y));
}
