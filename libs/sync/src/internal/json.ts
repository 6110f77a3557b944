import { MalformedObjectError } from "../malformed-object-error.js";

/** A JSON object as found inside a Kubernetes manifest. */
export type JsonObject = Record<string, unknown>;

/** True for a non-null, non-array object. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A deep copy of a JSON value whose objects and arrays are new and whose strings are shared:
 * translators may change every object and list of it, and a megabyte string value (a
 * ConfigMap's data) is neither copied nor left behind as garbage, as structuredClone would.
 */
export function copyJson<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    // An assignment to "__proto__" would set the prototype and leave the key out.
    if (k === "__proto__")
      Object.defineProperty(out, k, { value: copyJson(v), enumerable: true, writable: true, configurable: true });
    else out[k] = copyJson(v);
  }
  return out as T;
}

/** `parent[key]` when it is an object, undefined when absent; anything else is malformed. */
export function objectAt(parent: JsonObject, key: string, path: string): JsonObject | undefined {
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw new MalformedObjectError(join(path, key), "expected an object");
  return value;
}

/** The objects in the list `parent[key]` with their paths; absent means empty, anything else is malformed. */
export function objectsAt(parent: JsonObject, key: string, path: string): Array<[JsonObject, string]> {
  const value = parent[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new MalformedObjectError(join(path, key), "expected a list");
  return value.map((item: unknown, index) => {
    const itemPath = `${join(path, key)}[${index}]`;
    if (!isJsonObject(item)) throw new MalformedObjectError(itemPath, "expected an object");
    return [item, itemPath];
  });
}

/** Replaces the string `parent[key]` by `rename(value)`; absent stays absent, a non-string is malformed. */
export function renameAt(
  parent: JsonObject | undefined,
  key: string,
  path: string,
  rename: (name: string) => string,
): void {
  if (parent === undefined) return;
  const value = parent[key];
  if (value === undefined || value === null) return;
  if (typeof value !== "string") throw new MalformedObjectError(join(path, key), "expected a string");
  parent[key] = rename(value);
}

/** `path.key`, or `key` at the root. */
export function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}
