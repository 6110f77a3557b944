import { ANNOTATION_TENANT_UID } from "@tenantplane/api";
import { LABEL_MANAGED_BY, LABEL_TENANT, MANAGED_BY } from "@tenantplane/mapping";

/** The metadata ownership is judged from. */
export interface OwnedMetadata {
  metadata?:
    | {
        name?: string | undefined;
        labels?: Record<string, string> | undefined;
        annotations?: Record<string, string> | undefined;
      }
    | undefined;
}

/**
 * Whose an existing object is: `ours` when tenantplane created it for this tenant, else
 * `foreign` with a sentence saying why. tenantplane writes to and deletes only `ours`.
 */
export type Ownership = { owner: "ours" } | { owner: "foreign"; why: string };

/**
 * Ownership of an object inside a tenant's host namespace: ours exactly when it carries
 * `app.kubernetes.io/managed-by: tenantplane` and `tenantplane.io/tenant: <tenant>`, the labels
 * tenantplane sets when it creates an object and never afterwards.
 */
export function objectOwnership(object: OwnedMetadata, tenant: string): Ownership {
  const labels = object.metadata?.labels ?? {};
  if (labels[LABEL_MANAGED_BY] !== MANAGED_BY) {
    return { owner: "foreign", why: `it is not labelled ${LABEL_MANAGED_BY}=${MANAGED_BY}` };
  }
  if (labels[LABEL_TENANT] !== tenant) {
    const holder = labels[LABEL_TENANT];
    return {
      owner: "foreign",
      why: holder ? `it belongs to tenant ${holder}` : `it has no ${LABEL_TENANT} label`,
    };
  }
  return { owner: "ours" };
}

/**
 * Ownership of a host namespace: besides the labels of {@link objectOwnership} it must name
 * the TenantCluster's uid in {@link ANNOTATION_TENANT_UID}. A namespace left by an earlier
 * TenantCluster of the same name (or one without the annotation) is foreign: adopting it would
 * hand that tenant's leftovers to a new owner without anyone deciding so.
 */
export function namespaceOwnership(namespace: OwnedMetadata, tenant: string, uid: string | undefined): Ownership {
  const byLabels = objectOwnership(namespace, tenant);
  if (byLabels.owner === "foreign") return byLabels;
  const recorded = namespace.metadata?.annotations?.[ANNOTATION_TENANT_UID];
  if (recorded === undefined) {
    return {
      owner: "foreign",
      why:
        `it has no ${ANNOTATION_TENANT_UID} annotation; to hand it to this TenantCluster on purpose, ` +
        `annotate it with ${ANNOTATION_TENANT_UID}=${uid ?? "<uid of the TenantCluster>"}`,
    };
  }
  if (uid === undefined || recorded !== uid) {
    return { owner: "foreign", why: `it was created for an earlier TenantCluster of that name (uid ${recorded})` };
  }
  return { owner: "ours" };
}

/** A sentence naming a foreign object and why it is foreign, for conditions and Warnings. */
export function describeForeign(
  ref: { kind: string; name: string; namespace?: string | undefined },
  why: string,
): string {
  const where = ref.namespace ? ` in namespace ${ref.namespace}` : "";
  return (
    `${ref.kind} ${ref.name}${where} already exists and was not created by tenantplane for this tenant (${why}); ` +
    `tenantplane leaves it untouched: rename or remove it, or delete this TenantCluster`
  );
}
