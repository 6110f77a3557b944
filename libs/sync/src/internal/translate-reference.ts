import { type JsonObject, join, objectAt, objectsAt, renameAt } from "./json.js";
import type { MappedKind, PodReference, PodReferenceRule } from "./pod-references.js";
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
  next: string;
}

/** The table's applied rules as a tree of path segments, so one walk of a Pod visits each field once. */
interface Segment {
  key: string;
  list: boolean;
  rule?: AppliedRule;
  children: Segment[];
}
type AppliedRule = Extract<PodReferenceRule, { action: "map" | "refuse" | "drop" }>;

const compiled = new WeakMap<readonly PodReference[], Segment[]>();

function compile(table: readonly PodReference[]): Segment[] {
  const cached = compiled.get(table);
  if (cached !== undefined) return cached;
  const roots: Segment[] = [];
  for (const { path, rule } of table) {
    if (rule.action !== "map" && rule.action !== "refuse" && rule.action !== "drop") continue;
    let level = roots;
    let segment: Segment | undefined;
    for (const part of path.split(".")) {
      const list = part.endsWith("[]");
      const key = list ? part.slice(0, -2) : part;
      segment = level.find((s) => s.key === key && s.list === list);
      if (segment === undefined) {
        segment = { key, list, children: [] };
        level.push(segment);
      }
      level = segment.children;
    }
    if (segment !== undefined) segment.rule = rule;
  }
  compiled.set(table, roots);
  return roots;
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
  const lists: ListStep[] = [];

  const apply = (parent: JsonObject, key: string, path: string, rule: AppliedRule): void => {
    const value = parent[key];
    if (value === undefined || value === null) return;
    if (rule.action === "drop") {
      delete parent[key];
    } else if (rule.action === "refuse") {
      ctx.refuse(join(path, key), rule.problem(value));
    } else {
      const optional = rule.optional === "always" || (rule.optional === "field" && isOptional(parent));
      if (rewriteRef(parent, key, path, resolvers[rule.kind], optional) || rule.optional === "never") return;
      if (rule.missing === "emptyDir") {
        // The volume (the outermost list item) loses its source for an empty directory.
        const volume = lists[0];
        if (volume !== undefined) {
          delete volume.item[volume.next];
          volume.item["emptyDir"] = {};
        }
      } else {
        const inner = lists.at(-1);
        if (inner !== undefined) removed.push({ ...inner });
      }
    }
  };

  const visit = (parent: JsonObject, path: string, segments: Segment[]): void => {
    for (const segment of segments) {
      if (segment.rule !== undefined) apply(parent, segment.key, path, segment.rule);
      if (segment.children.length === 0) continue;
      if (segment.list) {
        for (const [item, itemPath] of objectsAt(parent, segment.key, path)) {
          for (const child of segment.children) {
            lists.push({ owner: parent, key: segment.key, item, next: child.key });
            visit(item, itemPath, [child]);
            lists.pop();
          }
        }
      } else {
        const child = objectAt(parent, segment.key, path);
        if (child !== undefined) visit(child, join(path, segment.key), segment.children);
      }
    }
  };

  visit(spec, "spec", compile(table));
  for (const step of removed) {
    const list = step.owner[step.key];
    if (Array.isArray(list)) step.owner[step.key] = list.filter((item) => item !== step.item);
  }
}
