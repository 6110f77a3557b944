import {
  addQuantities,
  canonicalJson,
  type LimitRangeSpec,
  type ResourceList,
  type ResourceQuotaSpec,
} from "@tenantplane/api";
import { OBJECT_NAMES } from "./constants.js";
import { ANNOTATION_CONTROL_PLANE_SHARE } from "./control-plane-share.js";
import type { LimitRangeItem, LimitRangeObject, ResourceQuotaObject } from "./kube-objects.js";
import { compiledMetadata, type CompileTarget } from "./metadata.js";

/**
 * The ResourceQuota for `quota`, or undefined when `hard` is empty (no quota at all). Each
 * limit the profile sets is raised by tenantplane's own `share` of it (see controlPlaneShare),
 * recorded in the {@link ANNOTATION_CONTROL_PLANE_SHARE} annotation, so the tenant's workloads
 * get exactly the profile's numbers; resources the profile does not limit stay unlimited.
 */
export function compileResourceQuota(
  target: CompileTarget,
  quota: ResourceQuotaSpec,
  share: ResourceList = {},
): ResourceQuotaObject | undefined {
  if (Object.keys(quota.hard).length === 0) return undefined;
  const hard: Record<string, string> = {};
  const added: Record<string, string> = {};
  for (const [key, limit] of Object.entries(quota.hard)) {
    const own = share[key];
    hard[key] = own === undefined ? limit : addQuantities(limit, own);
    if (own !== undefined) added[key] = own;
  }
  const metadata = compiledMetadata(target, OBJECT_NAMES.quota);
  metadata.annotations[ANNOTATION_CONTROL_PLANE_SHARE] = canonicalJson(added);
  return { apiVersion: "v1", kind: "ResourceQuota", metadata, spec: { hard } };
}

/** The LimitRange for `limits`, leaving out empty maps and entries; undefined when nothing is left. */
export function compileLimitRange(target: CompileTarget, limits: LimitRangeSpec): LimitRangeObject | undefined {
  const items: LimitRangeItem[] = [];
  const container = nonEmpty({
    default: limits.container.default,
    defaultRequest: limits.container.defaultRequest,
    min: limits.container.min,
    max: limits.container.max,
  });
  if (container !== undefined) items.push({ type: "Container", ...container });
  const claim = nonEmpty({ min: limits.persistentVolumeClaim.min, max: limits.persistentVolumeClaim.max });
  if (claim !== undefined) items.push({ type: "PersistentVolumeClaim", ...claim });
  if (items.length === 0) return undefined;
  return {
    apiVersion: "v1",
    kind: "LimitRange",
    metadata: compiledMetadata(target, OBJECT_NAMES.limits),
    spec: { limits: items },
  };
}

function nonEmpty<K extends string>(maps: Record<K, ResourceList>): Partial<Record<K, ResourceList>> | undefined {
  const kept = Object.entries<ResourceList>(maps).filter(([, list]) => Object.keys(list).length > 0);
  return kept.length === 0
    ? undefined
    : (Object.fromEntries(kept.map(([key, list]) => [key, { ...list }])) as Partial<Record<K, ResourceList>>);
}

/**
 * Warnings about a quota that pods cannot satisfy on their own: a quota on `limits.X` or
 * `requests.X` rejects every container that does not set X unless the LimitRange supplies it,
 * and that includes the tenant API server's own pod.
 */
export function quotaNotes(quota: ResourceQuotaSpec, limits: LimitRangeSpec): string[] {
  const notes: string[] = [];
  for (const key of Object.keys(quota.hard)) {
    const match = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(key);
    if (match === null) continue;
    const [, kind, resource = ""] = match;
    // A missing default request falls back to the default limit, so either supplies requests.
    const supplied =
      kind === "limits"
        ? resource in limits.container.default
        : resource in limits.container.defaultRequest || resource in limits.container.default;
    if (!supplied) {
      const field = kind === "limits" ? "default" : "defaultRequest";
      notes.push(
        `resourceQuota.hard[${key}] is set but limitRange.container.${field} has no ${resource}: ` +
          `containers that do not set ${kind}.${resource} themselves are rejected, ` +
          `the tenant API server's pod included unless spec.controlPlane.resources sets it`,
      );
    }
  }
  return notes;
}
