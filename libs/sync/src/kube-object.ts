import { z } from "zod";
import { formatFieldPath } from "@tenantplane/api";
import { isDnsLabel } from "@tenantplane/mapping";

/** Namespace assumed for a tenant object that names none, as kubectl does. */
export const DEFAULT_NAMESPACE = "default";

const MAX_SUBDOMAIN_LENGTH = 253;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const StringMapSchema = z.record(z.string(), z.string({ error: "expected a string value" }));

/** The metadata the sync engine reads; every other metadata field is dropped on the host copy. */
export const ObjectMetaSchema = z.looseObject({
  name: z
    .string({ error: "expected a name" })
    .max(MAX_SUBDOMAIN_LENGTH, "a name has at most 253 characters")
    .regex(DNS_SUBDOMAIN, "use lowercase letters, digits, '-' and '.', starting and ending alphanumeric"),
  namespace: z
    .string()
    .refine(isDnsLabel, "a namespace is a DNS label: lowercase letters, digits and '-', at most 63")
    .optional(),
  labels: StringMapSchema.optional(),
  annotations: StringMapSchema.optional(),
});

/** A namespaced Kubernetes object as plain JSON; fields other than the envelope pass through untouched. */
export const KubeObjectSchema = z.looseObject({
  apiVersion: z.string({ error: "expected an apiVersion such as v1" }).min(1, "expected an apiVersion such as v1"),
  kind: z.string({ error: "expected a kind" }).min(1, "expected a kind"),
  metadata: ObjectMetaSchema,
});
export type KubeObject = z.infer<typeof KubeObjectSchema>;

/** The host copy of a tenant object: name, namespace and the maps always set, nothing server-populated. */
export interface HostObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  [field: string]: unknown;
}

/** The metadata of a host object that the planner reads: the maps reverse lookup needs. */
export const HostObjectEnvelopeSchema = z.looseObject({
  kind: z.string().optional(),
  metadata: z.looseObject({
    name: z.string().min(1),
    namespace: z.string().optional(),
    labels: StringMapSchema.optional(),
    annotations: StringMapSchema.optional(),
  }),
});

/** `<path>: <message>` for the first issue of a failed parse, e.g. `metadata.labels.app: expected a string value`. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue === undefined ? "invalid object" : `${formatFieldPath(issue.path)}: ${issue.message}`;
}

/** The API version every kind in the sync engine is served at. */
const CORE_API_VERSION = "v1";
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** A parsed tenant object, or the first problem with it as `<field path>: <what is wrong>`. */
export type TenantObjectParse = { ok: true; object: KubeObject } | { ok: false; problem: string };

/**
 * Parses a tenant object of a synced kind: the envelope must parse, the apiVersion must
 * be `v1`, and a Service's name must be a DNS-1035 label, as the tenant API would insist.
 */
export function parseTenantObject(value: unknown): TenantObjectParse {
  const parsed = KubeObjectSchema.safeParse(value);
  if (!parsed.success) return { ok: false, problem: describeIssue(parsed.error) };
  const object = parsed.data;
  if (object.apiVersion !== CORE_API_VERSION) {
    return {
      ok: false,
      problem: `apiVersion: ${object.kind} is served as ${CORE_API_VERSION}, not ${object.apiVersion}`,
    };
  }
  if (object.kind === "Service" && !(object.metadata.name.length <= 63 && DNS_1035_LABEL.test(object.metadata.name))) {
    return {
      ok: false,
      problem: "metadata.name: a Service name starts with a letter, has no dots and at most 63 characters",
    };
  }
  return { ok: true, object };
}
