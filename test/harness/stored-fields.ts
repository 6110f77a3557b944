/**
 * Every place where `stored` does not hold what `expected` says, as JSON paths with both
 * values: each field of `expected` must be present in `stored` with an equal value, arrays
 * element by element and of equal length. Fields only `stored` has (server defaults,
 * metadata the server adds) are allowed; an `undefined` in `expected` is skipped, as JSON
 * would drop it.
 */
export function fieldsNotStored(expected: unknown, stored: unknown, path = "$"): string[] {
  if (expected === undefined) return [];
  if (Array.isArray(expected)) {
    if (!Array.isArray(stored)) return [`${path}: expected an array, stored ${JSON.stringify(stored)}`];
    const lengths =
      expected.length === stored.length ? [] : [`${path}: expected ${expected.length} items, stored ${stored.length}`];
    return [...lengths, ...expected.flatMap((item, i) => fieldsNotStored(item, stored[i], `${path}[${i}]`))];
  }
  if (expected !== null && typeof expected === "object") {
    if (stored === null || typeof stored !== "object" || Array.isArray(stored)) {
      return [`${path}: expected ${JSON.stringify(expected)}, stored ${JSON.stringify(stored)}`];
    }
    return Object.entries(expected).flatMap(([key, value]) =>
      fieldsNotStored(value, (stored as Record<string, unknown>)[key], `${path}.${key}`),
    );
  }
  return expected === stored ? [] : [`${path}: expected ${JSON.stringify(expected)}, stored ${JSON.stringify(stored)}`];
}
