import type { KubernetesObject } from "@kubernetes/client-node";

type Segment = { field: string } | { key: Record<string, unknown> } | { value: unknown } | { index: number };
interface OwnedPath {
  segments: Segment[];
  /** "value" compares the whole value at the path; "exists" only whether it is there ("." entries). */
  mode: "value" | "exists";
}

interface ManagedFieldsEntry {
  manager?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

/**
 * Whether a write by `manager` changed anything that manager owns: compares `before`
 * and `after` on every field path recorded for the manager in either object's
 * managedFields (the fields it sent, and the fields it sent before, which an apply
 * may have removed). Writes by others, and resourceVersion bumps, do not count.
 * Paths in `ignore` (dotted, e.g. `metadata.annotations.<key>`) are left out.
 */
export function ownedFieldsChanged(
  before: KubernetesObject,
  after: KubernetesObject,
  manager: string,
  ignore: readonly string[] = [],
): boolean {
  const paths = new Map<string, OwnedPath>();
  for (const obj of [before, after]) {
    for (const entry of (obj.metadata?.managedFields ?? []) as ManagedFieldsEntry[]) {
      if (entry.manager !== manager || entry.subresource) continue;
      for (const path of ownedPaths(entry.fieldsV1)) {
        const key = JSON.stringify(path);
        if (!ignore.includes(dotted(path.segments))) paths.set(key, path);
      }
    }
  }
  for (const path of paths.values()) {
    const a = resolve(before, path.segments);
    const b = resolve(after, path.segments);
    if (path.mode === "exists" ? (a === undefined) !== (b === undefined) : canonical(a) !== canonical(b)) return true;
  }
  return false;
}

/** Every leaf of a managedFields `fieldsV1` set, as a path into the object. */
export function ownedPaths(fieldsV1: unknown, prefix: Segment[] = []): OwnedPath[] {
  if (typeof fieldsV1 !== "object" || fieldsV1 === null) return [];
  const entries = Object.entries(fieldsV1 as Record<string, unknown>);
  if (entries.length === 0) return prefix.length > 0 ? [{ segments: prefix, mode: "value" }] : [];
  const out: OwnedPath[] = [];
  for (const [name, child] of entries) {
    if (name === ".") {
      out.push({ segments: prefix, mode: "exists" });
      continue;
    }
    const segment = segmentOf(name);
    if (segment) out.push(...ownedPaths(child, [...prefix, segment]));
  }
  return out;
}

function segmentOf(name: string): Segment | undefined {
  const body = name.slice(2);
  try {
    switch (name.slice(0, 2)) {
      case "f:":
        return { field: body };
      case "k:":
        return { key: JSON.parse(body) as Record<string, unknown> };
      case "v:":
        return { value: JSON.parse(body) as unknown };
      case "i:":
        return { index: Number.parseInt(body, 10) };
    }
  } catch {
    // A key this code cannot read is not one it can compare.
  }
  return undefined;
}

function resolve(obj: unknown, segments: readonly Segment[]): unknown {
  let current: unknown = obj;
  for (const segment of segments) {
    if (current === undefined || current === null) return undefined;
    if ("field" in segment) {
      const record = current as Record<string, unknown>;
      // Objects read through the typed client carry `from`, `default`... as `_from`, `_default`.
      current = segment.field in record ? record[segment.field] : record[`_${segment.field}`];
    } else if (!Array.isArray(current)) {
      return undefined;
    } else if ("key" in segment) {
      current = current.find((item: unknown) =>
        Object.entries(segment.key).every(
          ([k, v]) => canonical((item as Record<string, unknown>)?.[k]) === canonical(v),
        ),
      );
    } else if ("value" in segment) {
      current = current.find((item: unknown) => canonical(item) === canonical(segment.value));
    } else {
      current = current[segment.index];
    }
  }
  return current;
}

function dotted(segments: readonly Segment[]): string {
  return segments.map((s) => ("field" in s ? s.field : "*")).join(".");
}

// Key order and Date-vs-string never count as a change.
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}
