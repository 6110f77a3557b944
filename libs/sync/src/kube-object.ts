import * as z from "zod";
import { formatFieldPath } from "@tenantplane/api";
import { isDnsLabel } from "@tenantplane/mapping";

/** Namespace assumed for a tenant object that names none, as kubectl does. */
export const DEFAULT_NAMESPACE = "default";

const MAX_SUBDOMAIN_LENGTH = 253;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const StringMapSchema = z.record(z.string(), z.string({ error: "expected a string value" }));

/**
 * The metadata of a tenant object as the sync engine reads it (stricter than the API
 * package's ObjectMetaSchema, which reads tenantplane's own objects); every other
 * metadata field is dropped on the host copy.
 */
export const TenantObjectMetaSchema = z.looseObject({
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
  metadata: TenantObjectMetaSchema,
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
  const parsed = KubeObjectSchema.safeParse(withDefaultNamespace(value));
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
  const fields = KIND_FIELDS[object.kind]?.safeParse(object);
  if (fields !== undefined && !fields.success) return { ok: false, problem: describeIssue(fields.error) };
  return { ok: true, object };
}

// kubectl reads an empty namespace as the default one.
function withDefaultNamespace(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const metadata = (value as { metadata?: unknown }).metadata;
  if (typeof metadata !== "object" || metadata === null || (metadata as { namespace?: unknown }).namespace !== "") {
    return value;
  }
  const { namespace: _empty, ...rest } = metadata as Record<string, unknown>;
  return { ...value, metadata: rest };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;

/** A map of data keys (letters, digits, '-', '_', '.') to values; a bad key is reported at its own path. */
function dataMap(value: z.ZodString) {
  return z.record(z.string(), value).superRefine((map, ctx) => {
    for (const key of Object.keys(map)) {
      if (!DATA_KEY.test(key) || key.length > MAX_SUBDOMAIN_LENGTH) {
        ctx.addIssue({ code: "custom", path: [key], message: "a data key uses letters, digits, '-', '_' and '.'" });
      }
    }
  });
}
const Base64MapSchema = dataMap(
  z.string({ error: "expected a base64 string" }).regex(BASE64, "expected a base64 string"),
);
const TextMapSchema = dataMap(z.string({ error: "expected a string value" }));

/** Top-level fields of synced kinds that the tenant API would validate and the planner copies as they are. */
const KIND_FIELDS: Record<string, z.ZodType> = {
  ConfigMap: z.looseObject({ data: TextMapSchema.optional(), binaryData: Base64MapSchema.optional() }),
  Secret: z.looseObject({
    type: z.string({ error: "expected a Secret type such as Opaque" }).optional(),
    data: Base64MapSchema.optional(),
    stringData: TextMapSchema.optional(),
  }),
  Service: z.looseObject({
    spec: z
      .looseObject({
        type: z
          .enum(["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"], {
            error: "expected ClusterIP, NodePort, LoadBalancer or ExternalName",
          })
          .optional(),
      })
      .optional(),
  }),
};
