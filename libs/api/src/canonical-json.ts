/**
 * JSON with object keys sorted at every depth, so equal content always prints alike: the text
 * behind every content hash tenantplane stamps on an object (the applied hash of each service,
 * the sync worker's content hash), and the cheapest way to compare two JSON values.
 *
 * Byte for byte what `JSON.stringify` prints for a copy whose objects were rebuilt with sorted
 * keys (which is how hashes already stored on objects were made): array-index keys such as
 * "0" or "12" first, in numeric order, as every JavaScript object orders them, then the others
 * by UTF-16 code units; `undefined`, functions and symbols are left out of objects and printed
 * as `null` in arrays; `toJSON` is honoured. The copy is made first and printed natively in
 * one go: a replacer function called for every value cost a reconcile pass most of its CPU.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value, ""));
}

function sorted(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return sorted((value as { toJSON: (key: string) => unknown }).toJSON(key), key);
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = sorted(value[i], String(i));
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) {
    const v = sorted((value as Record<string, unknown>)[k], k);
    // An assignment to "__proto__" would set the prototype and leave the key out of the text.
    if (k === "__proto__") Object.defineProperty(out, k, { value: v, enumerable: true, writable: true });
    else out[k] = v;
  }
  return out;
}
