import {
  ESCAPED_KEY_PREFIX,
  ANNOTATION_VIRTUAL_NAME,
  ANNOTATION_VIRTUAL_NAMESPACE,
  LABEL_KIND,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  LABEL_VIRTUAL_NAMESPACE,
  MANAGED_BY,
  RESERVED_PREFIX,
} from "./constants.js";
import type { VirtualIdentity } from "./host-name.js";
import { labelValue } from "./label-value.js";

/** The labels and annotations of an object, as found in `metadata`. */
export interface MetadataMaps {
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
}

/** A tenant object's identity and kind, as recovered from a host copy. */
export interface SourceIdentity extends VirtualIdentity {
  kind: string;
}

/** The metadata tenantplane puts on a host copy so it can always be traced back to its source. */
export interface ReverseMapping {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/**
 * Labels (managed-by, tenant, virtual namespace, kind; values made label-safe) and
 * annotations (verbatim virtual namespace and name) for the host copy of `id`.
 */
export function reverseMapping(id: VirtualIdentity, kind: string): ReverseMapping {
  return {
    labels: {
      [LABEL_MANAGED_BY]: MANAGED_BY,
      [LABEL_TENANT]: labelValue(id.tenant),
      [LABEL_VIRTUAL_NAMESPACE]: labelValue(id.namespace),
      [LABEL_KIND]: labelValue(kind),
    },
    annotations: {
      [ANNOTATION_VIRTUAL_NAMESPACE]: id.namespace,
      [ANNOTATION_VIRTUAL_NAME]: id.name,
    },
  };
}

/** True when the object carries `app.kubernetes.io/managed-by: tenantplane`. */
export function isManaged(metadata: MetadataMaps): boolean {
  return metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY;
}

/**
 * The source of a tenantplane-managed host object, read from its reverse-mapping
 * metadata; undefined when the object is not managed or any of the keys is missing.
 */
export function reverseLookup(metadata: MetadataMaps): SourceIdentity | undefined {
  if (!isManaged(metadata)) return undefined;
  const tenant = metadata.labels?.[LABEL_TENANT];
  const kind = metadata.labels?.[LABEL_KIND];
  const namespace = metadata.annotations?.[ANNOTATION_VIRTUAL_NAMESPACE];
  const name = metadata.annotations?.[ANNOTATION_VIRTUAL_NAME];
  if (tenant === undefined || kind === undefined || namespace === undefined || name === undefined) {
    return undefined;
  }
  return { tenant, namespace, name, kind };
}

const RESERVED_DOMAIN = RESERVED_PREFIX.slice(0, -1);

/**
 * True for keys tenantplane reserves: `tenantplane.io/*`, any `*.tenantplane.io/*`
 * (kept for future use) and `app.kubernetes.io/managed-by`.
 */
export function isReservedKey(key: string): boolean {
  if (key === LABEL_MANAGED_BY || key.startsWith(RESERVED_PREFIX)) return true;
  const slash = key.indexOf("/");
  return slash !== -1 && key.slice(0, slash).endsWith(`.${RESERVED_DOMAIN}`);
}

/** A copy of `map` without reserved keys (see {@link isReservedKey}); `undefined` gives `{}`. */
export function stripReserved(map: Record<string, string> | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(map ?? {})) {
    if (!isReservedKey(key)) kept[key] = value;
  }
  return kept;
}

/**
 * The host label key for a tenant label key: the key itself unless reserved, else
 * `escaped.tenantplane.io/<sanitised key>-<hash>`, which is itself reserved (a tenant
 * cannot forge it) and distinct for distinct keys. Applied alike to labels and to every
 * selector, it keeps a tenant selector matching exactly the Pods it matches in the tenant.
 */
export function hostLabelKey(key: string): string {
  // Reserved keys always contain "/", which labelValue never keeps, so the result is always hashed.
  return isReservedKey(key) ? `${ESCAPED_KEY_PREFIX}${labelValue(key)}` : key;
}

/** A copy of `map` with every key passed through {@link hostLabelKey}; `undefined` gives `{}`. */
export function escapeReserved(map: Record<string, string> | undefined): Record<string, string> {
  const escaped: Record<string, string> = {};
  for (const [key, value] of Object.entries(map ?? {})) escaped[hostLabelKey(key)] = value;
  return escaped;
}
