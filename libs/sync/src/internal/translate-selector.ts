import { hostLabelKey, LABEL_TENANT, LABEL_VIRTUAL_NAMESPACE, labelValue } from "@tenantplane/mapping";
import { MalformedObjectError } from "../malformed-object-error.js";
import { isJsonObject, type JsonObject, join, objectAt, objectsAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";

/**
 * The host form of a Service-style selector (a map of labels): reserved keys escaped as
 * they are on the Pods' labels, plus the tenant and virtual namespace, so it selects on
 * the host exactly the Pods it selects in the tenant.
 */
export function hostSelectorMap(selector: Record<string, string>, ctx: TranslateContext): Record<string, string> {
  const scoped: Record<string, string> = {};
  for (const [key, value] of Object.entries(selector)) scoped[hostLabelKey(key)] = value;
  scoped[LABEL_TENANT] = labelValue(ctx.tenant);
  scoped[LABEL_VIRTUAL_NAMESPACE] = labelValue(ctx.namespace);
  return scoped;
}

/**
 * Keeps the Pod selectors inside a Pod spec (inter-pod affinity and anti-affinity,
 * topology spread) to the Pods they select in the tenant: keys escaped like the labels,
 * and scoped to the tenant's virtual namespaces, since every virtual namespace shares
 * one host namespace.
 */
export function translatePodSelectors(spec: JsonObject, ctx: TranslateContext): void {
  const affinity = objectAt(spec, "affinity", "spec");
  for (const kind of ["podAffinity", "podAntiAffinity"]) {
    const path = join("spec.affinity", kind);
    const rules = affinity && objectAt(affinity, kind, "spec.affinity");
    if (rules === undefined) continue;
    for (const [term, termPath] of objectsAt(rules, "requiredDuringSchedulingIgnoredDuringExecution", path)) {
      translateAffinityTerm(term, termPath, ctx);
    }
    for (const [weighted, weightedPath] of objectsAt(rules, "preferredDuringSchedulingIgnoredDuringExecution", path)) {
      const term = objectAt(weighted, "podAffinityTerm", weightedPath);
      if (term !== undefined) translateAffinityTerm(term, join(weightedPath, "podAffinityTerm"), ctx);
    }
  }
  for (const [constraint, path] of objectsAt(spec, "topologySpreadConstraints", "spec")) {
    foldLabelKeys(constraint, path, ctx);
    constraint["labelSelector"] = translateLabelSelector(
      constraint["labelSelector"],
      join(path, "labelSelector"),
      ctx,
      [ctx.namespace],
    );
    escapeKeyList(constraint, "matchLabelKeys", path);
  }
}

// A term selects Pods in its own namespace, in the listed namespaces, or in those its
// namespaceSelector picks. On the host all of them are Pods of tp-<tenant> told apart
// by the virtual-namespace label; "every namespace" ({}) becomes every Pod of the tenant.
function translateAffinityTerm(term: JsonObject, path: string, ctx: TranslateContext): void {
  const namespaceSelector = term["namespaceSelector"];
  let namespaces: string[] | undefined = [ctx.namespace];
  const listed = term["namespaces"];
  if (Array.isArray(listed) && listed.length > 0) {
    if (!listed.every((n) => typeof n === "string")) {
      throw new MalformedObjectError(join(path, "namespaces"), "expected a list of names");
    }
    namespaces = listed as string[];
  }
  if (namespaceSelector !== undefined && namespaceSelector !== null) {
    if (!isJsonObject(namespaceSelector) || !isEmptySelector(namespaceSelector)) {
      throw new MalformedObjectError(
        join(path, "namespaceSelector"),
        "selecting virtual namespaces by label cannot be carried to the host; list them in namespaces instead",
      );
    }
    namespaces = undefined;
  }
  delete term["namespaces"];
  delete term["namespaceSelector"];
  foldLabelKeys(term, path, ctx);
  term["labelSelector"] = translateLabelSelector(term["labelSelector"], join(path, "labelSelector"), ctx, namespaces);
  escapeKeyList(term, "matchLabelKeys", path);
  escapeKeyList(term, "mismatchLabelKeys", path);
}

/**
 * A LabelSelector with reserved keys escaped and scoped to `tenant` and, when given, the
 * virtual `namespaces`. An absent selector selects nothing and stays absent.
 */
function translateLabelSelector(
  selector: unknown,
  path: string,
  ctx: TranslateContext,
  namespaces: readonly string[] | undefined,
): JsonObject | undefined {
  if (selector === undefined || selector === null) return undefined;
  if (!isJsonObject(selector)) throw new MalformedObjectError(path, "expected a label selector");
  const matchLabels = selector["matchLabels"] ?? {};
  if (!isJsonObject(matchLabels) || !Object.values(matchLabels).every((v) => typeof v === "string")) {
    throw new MalformedObjectError(join(path, "matchLabels"), "expected a map of label values");
  }
  const labels: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(matchLabels)) labels[hostLabelKey(key)] = value;
  labels[LABEL_TENANT] = labelValue(ctx.tenant);
  const expressions: JsonObject[] = [];
  for (const [expression, expressionPath] of objectsAt(selector, "matchExpressions", path)) {
    if (typeof expression["key"] !== "string")
      throw new MalformedObjectError(join(expressionPath, "key"), "expected a string");
    expressions.push({ ...expression, key: hostLabelKey(expression["key"]) });
  }
  if (namespaces !== undefined) {
    expressions.push({
      key: LABEL_VIRTUAL_NAMESPACE,
      operator: "In",
      values: [...new Set(namespaces.map((n) => labelValue(n)))].sort(),
    });
  }
  return { ...selector, matchLabels: labels, matchExpressions: expressions };
}

/**
 * Folds `matchLabelKeys` (`key In [the Pod's value]`) and `mismatchLabelKeys` (`NotIn`)
 * into the labelSelector and drops the lists, as the API server does when it admits a
 * Pod. The tenant's API server has already folded them into the selector it stored, and
 * the host's would fold them once more and refuse the repeated key ("exists in both
 * matchLabelKeys and labelSelector"); folding here, never twice, keeps the selector's
 * meaning whichever the tenant's version did. Keys the Pod has no label for are ignored,
 * as there. Without a selector the lists are left for the caller to escape.
 */
function foldLabelKeys(term: JsonObject, path: string, ctx: TranslateContext): void {
  const selector = term["labelSelector"];
  if (!isJsonObject(selector)) return;
  const expressions = objectsAt(selector, "matchExpressions", join(path, "labelSelector")).map(([e]) => e);
  for (const [list, operator] of [
    ["matchLabelKeys", "In"],
    ["mismatchLabelKeys", "NotIn"],
  ] as const) {
    const keys = term[list];
    if (keys === undefined || keys === null) continue;
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string")) {
      throw new MalformedObjectError(join(path, list), "expected a list of label keys");
    }
    for (const key of keys as string[]) {
      const value = ctx.labels[key];
      if (value === undefined) continue;
      const folded = expressions.some(
        (e) =>
          e["key"] === key &&
          e["operator"] === operator &&
          Array.isArray(e["values"]) &&
          e["values"].length === 1 &&
          e["values"][0] === value,
      );
      if (!folded) expressions.push({ key, operator, values: [value] });
    }
    delete term[list];
  }
  selector["matchExpressions"] = expressions;
}

function escapeKeyList(parent: JsonObject, key: string, path: string): void {
  const keys = parent[key];
  if (keys === undefined || keys === null) return;
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string")) {
    throw new MalformedObjectError(join(path, key), "expected a list of label keys");
  }
  parent[key] = keys.map((k: string) => hostLabelKey(k));
}

function isEmptySelector(selector: JsonObject): boolean {
  const labels = selector["matchLabels"];
  const expressions = selector["matchExpressions"];
  return (
    (labels === undefined || labels === null || (isJsonObject(labels) && Object.keys(labels).length === 0)) &&
    (expressions === undefined || expressions === null || (Array.isArray(expressions) && expressions.length === 0))
  );
}
