import { type JsonObject, join, objectAt, objectsAt, renameAt } from "./json.js";
import type { MappedKind, PodReference } from "./pod-references.js";
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

/** How each kind the table maps is resolved to its host name. */
export type Resolvers = Record<MappedKind, Resolve>;

/** A list item on the way to a field: the list's owner and key, the item, and the key the path takes next. */
interface ListStep {
  owner: JsonObject;
  key: string;
  item: JsonObject;
  next: string | undefined;
}

/** One occurrence of a table path in an object: the object holding the field, the field's key and both paths. */
interface Occurrence {
  parent: JsonObject;
  key: string;
  /** Path of `parent`, e.g. `spec.volumes[0].cinder.secretRef`. */
  parentPath: string;
  /** Path of the field itself. */
  path: string;
  lists: ListStep[];
}

/**
 * Applies the `map`, `refuse` and `drop` rules of `table` to a Pod's `spec`: references are
 * renamed through `resolvers`, a left-out optional one empties its volume or removes its
 * list item (after the whole walk, so every reported path keeps the tenant's indices),
 * a refused field is recorded with `ctx.refuse`, and a dropped field is removed.
 */
export function applyPodReferences(
  spec: JsonObject,
  table: readonly PodReference[],
  resolvers: Resolvers,
  ctx: Pick<TranslateContext, "refuse">,
): void {
  const removed: ListStep[] = [];
  for (const { path, rule } of table) {
    if (rule.action !== "map" && rule.action !== "refuse" && rule.action !== "drop") continue;
    for (const found of occurrences(spec, path.split("."), "spec", [])) {
      const value = found.parent[found.key];
      if (value === undefined || value === null) continue;
      if (rule.action === "drop") {
        delete found.parent[found.key];
      } else if (rule.action === "refuse") {
        ctx.refuse(found.path, rule.problem(value));
      } else {
        const optional = rule.optional === "always" || (rule.optional === "field" && isOptional(found.parent));
        const kept = rewriteRef(found.parent, found.key, found.parentPath, resolvers[rule.kind], optional);
        if (kept || rule.optional === "never") continue;
        const inner = found.lists.at(-1);
        if (rule.missing === "emptyDir") {
          // The volume (the outermost list item) loses its source for an empty directory.
          const volume = found.lists[0];
          if (volume?.next !== undefined) {
            delete volume.item[volume.next];
            volume.item["emptyDir"] = {};
          }
        } else if (inner !== undefined) {
          removed.push(inner);
        }
      }
    }
  }
  for (const step of removed) {
    const list = step.owner[step.key];
    if (Array.isArray(list)) step.owner[step.key] = list.filter((item) => item !== step.item);
  }
}

/** Every place `segments` (`key` or `key[]` for each item of a list) reaches in `parent`, with its last key. */
function occurrences(parent: JsonObject, segments: string[], path: string, lists: ListStep[]): Occurrence[] {
  const [segment, ...rest] = segments;
  if (segment === undefined) return [];
  const isList = segment.endsWith("[]");
  const key = isList ? segment.slice(0, -2) : segment;
  if (rest.length === 0) return [{ parent, key, parentPath: path, path: join(path, key), lists }];
  if (isList) {
    return objectsAt(parent, key, path).flatMap(([item, itemPath]) =>
      occurrences(item, rest, itemPath, [...lists, { owner: parent, key, item, next: rest[0]?.replace(/\[\]$/, "") }]),
    );
  }
  const child = objectAt(parent, key, path);
  return child === undefined ? [] : occurrences(child, rest, join(path, key), lists);
}
