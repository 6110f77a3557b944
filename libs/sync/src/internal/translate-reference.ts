import { type JsonObject, objectsAt, renameAt } from "./json.js";
import type { ReferencedKind, TranslateContext } from "./translate-context.js";

/** The host name for a reference at `field`, or undefined: leave it out of the host copy. */
export type Resolve = (name: string, field: string, optional: boolean) => string | undefined;

/**
 * Where a reference from `field` points on the host: the host copy's name when the
 * SyncPolicy syncs `kind`. Otherwise no host copy will ever exist under that name: an
 * optional reference gives undefined (the caller leaves it out of the host copy, as the
 * kubelet treats a missing optional source as empty) with a note, and a required one is
 * refused, since the host Pod would wait for it forever.
 */
export function hostReference(
  ctx: TranslateContext,
  kind: ReferencedKind,
  name: string,
  field: string,
  optional: boolean,
): string | undefined {
  if (ctx.syncs(kind)) return ctx.refer(kind, name);
  const why = unsyncedReason(kind);
  if (optional) {
    ctx.explain(`${field}: optional ${kind} ${name} left out: ${why}`);
    return undefined;
  }
  ctx.refuse(field, `${kind} ${name} will never have a host copy: ${why}`);
  return ctx.refer(kind, name);
}

/** Why no host copy of `kind` will ever exist. */
function unsyncedReason(kind: ReferencedKind): string {
  return `SyncPolicy toHost does not list ${kind}`;
}

/** A ConfigMap or Secret reference marked `optional: true`. */
function isOptional(ref: JsonObject): boolean {
  return ref["optional"] === true;
}

/**
 * Renames the reference `parent[key]` at `path` through `resolve`, reading `optional`
 * from `parent` unless `optional` is given; false when it is to be left out of the host
 * copy. Absent parents and names keep everything as it is.
 */
export function rewriteRef(
  parent: JsonObject | undefined,
  key: string,
  path: string,
  resolve: Resolve,
  optional?: boolean,
): boolean {
  if (parent === undefined) return true;
  let kept = true;
  renameAt(parent, key, path, (name) => {
    const host = resolve(name, path, optional ?? isOptional(parent));
    if (host !== undefined) return host;
    kept = false;
    return name;
  });
  return kept;
}

/** Keeps only the items of the list `parent[key]` for which `keep` (which may rewrite them) says true. */
export function keepWhere(
  parent: JsonObject,
  key: string,
  path: string,
  keep: (item: JsonObject, itemPath: string) => boolean,
): void {
  const kept = objectsAt(parent, key, path).filter(([item, itemPath]) => keep(item, itemPath));
  if (Array.isArray(parent[key])) parent[key] = kept.map(([item]) => item);
}
