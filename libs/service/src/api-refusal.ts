import { KubeApiError } from "@tenantplane/kube";

/** Condition reason when the API server refused an object a service wrote for the tenant. */
export const REASON_REJECTED_BY_API_SERVER = "RejectedByApiServer";

/** A write the API server judged and refused: retrying the same object cannot succeed. */
export interface ApiRefusal {
  /** HTTP status: 422 (Invalid), 400, 403 or 413. */
  code: number;
  /** The object that was refused, e.g. `LimitRange tp-a/tenantplane-limits`. */
  object: string;
  /** The fields the server named, in its own paths (`spec.limits[0].default[cpu]`). */
  fields: string[];
  /** The server's message, verbatim. */
  message: string;
}

// Statuses that mean "the server looked at this object and said no"; 404 (a namespace not
// there yet), 409 and 429 are left to the retry policy.
const REFUSAL_CODES = new Set([400, 403, 413, 422]);

/** The authorizer's "no" to a namespaced request: RBAC does not (yet) let the caller do it there. */
export interface AccessDenial {
  /** The namespace the request was refused in. */
  namespace: string;
  /** The server's message, verbatim (names the user, verb and resource). */
  message: string;
}

// The authorizer's wording (apiserver's forbiddenMessage), which admission refusals (quota, Pod
// Security, admission policies) never use: they say why the object is refused, not who cannot.
const ACCESS_DENIED =
  /is forbidden: User "[^"]*" cannot [a-z]+ resource "[^"]*" in API group "[^"]*" in the namespace "([^"]+)"/;

/**
 * The authorizer's 403 for a namespaced request, read or write, somewhere in `err`'s cause
 * chain, or undefined. Not a judgement of the object: a RoleBinding granted later (the
 * provisioner binds each service's role right after creating a tenant namespace) makes the
 * same request pass.
 */
export function accessDenialOf(err: unknown): AccessDenial | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
    if (!(e instanceof KubeApiError)) continue;
    if (e.code !== 403) return undefined;
    const namespace = ACCESS_DENIED.exec(e.body.message ?? "")?.[1];
    return namespace === undefined ? undefined : { namespace, message: e.body.message ?? e.message };
  }
  return undefined;
}

/**
 * The API server's refusal of a write somewhere in `err`'s cause chain, or undefined.
 * A 403 for a terminating namespace is not a refusal: it passes once deletion completes;
 * nor is the authorizer's 403 (see accessDenialOf): it passes once access is granted.
 */
export function apiRefusalOf(err: unknown): ApiRefusal | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
    if (!(e instanceof KubeApiError)) continue;
    if (!e.isWrite || !REFUSAL_CODES.has(e.code)) return undefined;
    const causes = e.body.details?.causes ?? [];
    if (e.code === 403 && causes.some((c) => c.reason === "NamespaceTerminating")) return undefined;
    if (accessDenialOf(e)) return undefined;
    const target = e.target;
    const object = target
      ? `${target.kind} ${target.namespace ? `${target.namespace}/` : ""}${target.name}`
      : `${e.body.details?.kind ?? "object"} ${e.body.details?.name ?? ""}`.trim();
    const fields = [...new Set(causes.map((c) => c.field).filter((f): f is string => !!f))];
    return { code: e.code, object, fields, message: e.body.message ?? e.message };
  }
  return undefined;
}

/**
 * The Warning text for a refusal: which object, which fields, what the server said,
 * and where the fix belongs (the tenant's spec or profile that produced the object).
 */
export function describeRefusal(refusal: ApiRefusal, fix: string): string {
  const fields = refusal.fields.length > 0 ? ` (field ${refusal.fields.join(", ")})` : "";
  // tenantplane's quota is the IsolationProfile's (plus the control plane's share, which its
  // numbers include); any other quota in the namespace is the host operators' own.
  const exceeded = /exceeded quota: ([^,\s]+)/i.exec(refusal.message)?.[1];
  const quota =
    exceeded === undefined
      ? ""
      : exceeded === "tenantplane-quota"
        ? " The quota comes from spec.resourceQuota.hard of the tenant's IsolationProfile: raise it there, or ask for less."
        : ` ResourceQuota ${exceeded} is not tenantplane's but the host's own: ask the cluster's operators, or ask for less.`;
  return `the API server refused ${refusal.object}${fields}: ${refusal.message}. ${fix}${quota}`;
}
