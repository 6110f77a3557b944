import { LABEL_MANAGED_BY, LABEL_TENANT, MANAGED_BY } from "@tenantplane/mapping";
import { ANNOTATION_ISOLATION_PROFILE, COMPONENT_ISOLATION, LABEL_COMPONENT } from "./constants.js";
import type { CompiledMetadata } from "./kube-objects.js";

/** Labels on every object compiled for `tenant`; they are what {@link isolationObjectSelector} matches. */
export function isolationLabels(tenant: string): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_TENANT]: tenant, [LABEL_COMPONENT]: COMPONENT_ISOLATION };
}

/**
 * Label selector (`key=value,...`) matching exactly the isolation objects of `tenant`, for
 * listing what exists and deleting what the current profile no longer produces.
 */
export function isolationObjectSelector(tenant: string): string {
  return Object.entries(isolationLabels(tenant))
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
}

/** Where compiled objects go and what they record about their origin. */
export interface CompileTarget {
  tenant: string;
  namespace: string;
  profileName: string;
}

/** Metadata for the object `name` compiled for `target`. */
export function compiledMetadata(target: CompileTarget, name: string): CompiledMetadata {
  return {
    name,
    namespace: target.namespace,
    labels: isolationLabels(target.tenant),
    annotations: { [ANNOTATION_ISOLATION_PROFILE]: target.profileName },
  };
}
