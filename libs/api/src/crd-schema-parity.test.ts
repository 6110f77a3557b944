import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { crdManifests } from "./crd-manifests.js";
import {
  CLAIM_RESOURCE_MESSAGE,
  CONTAINER_RESOURCE_MESSAGE,
  IsolationProfileSchema,
  LIMIT_ORDER,
  NONZERO_LIMIT_MESSAGE,
  QUOTA_KEY_MESSAGE,
  QUOTA_WHOLE_MESSAGE,
} from "./isolation-profile.js";
import { SyncPolicySchema } from "./sync-policy.js";
import { DEDICATED_SELECTOR_MESSAGE, NODE_SELECTOR_KEY_MESSAGE } from "./isolation-mode.js";
import {
  ANNOTATION_KEY_MESSAGE,
  IMAGE_REFERENCE_MESSAGE,
  IMAGE_WHITESPACE_MESSAGE,
  LIMIT_ZERO_MESSAGE,
  STORAGE_CLASS_MESSAGE,
  STORAGE_SIZE_MESSAGE,
  TENANT_NAME_MESSAGE,
  TenantClusterSchema,
  requestAboveLimitMessage,
} from "./tenant-cluster.js";

// The zod schemas and the CRD YAML are written separately; this test holds them together.
// Both are flattened into `path → constraints` and compared field by field.

type JsonSchema = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  required?: string[];
};

const COMPARED_KEYWORDS = [
  "enum",
  "default",
  "pattern",
  "format",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
] as const;

function constraints(node: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of COMPARED_KEYWORDS) {
    const value = node[key];
    if (value === undefined) continue;
    // zod bounds integers by the safe range; the API server bounds them by int64.
    if ((key === "minimum" || key === "maximum") && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    if (key === "format" && value !== "date-time") continue;
    // zod spells out date-time as a pattern too; the CRD relies on the format.
    if (key === "pattern" && node.format === "date-time") continue;
    out[key] = key === "pattern" ? String(value).replaceAll("\\/", "/") : value;
  }
  return out;
}

/** zod renders int-or-string as anyOf [string, integer]; the CRD marks it x-kubernetes-int-or-string. */
function intOrString(node: JsonSchema): JsonSchema | undefined {
  if (node["x-kubernetes-int-or-string"] === true) return node;
  const branches = node.anyOf;
  if (branches?.length !== 2) return undefined;
  const str = branches.find((b) => b.type === "string");
  const int = branches.find((b) => b.type === "integer");
  if (str === undefined || int === undefined) return undefined;
  const { anyOf: _anyOf, ...rest } = node;
  return { ...rest, pattern: str.pattern, maxLength: str.maxLength, minimum: int.minimum };
}

function flatten(node: JsonSchema, path: string, out: Map<string, Record<string, unknown>>): void {
  const ios = intOrString(node);
  if (ios !== undefined) {
    out.set(path, { type: "int-or-string", ...constraints(ios) });
    return;
  }
  const entry: Record<string, unknown> = { type: node.type, ...constraints(node) };
  if (node.type === "object") {
    entry.required = [...(node.required ?? [])].sort();
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      flatten(child, `${path}.${key}`, out);
    }
    if (typeof node.additionalProperties === "object") {
      flatten(node.additionalProperties, `${path}[*]`, out);
    }
  }
  if (node.type === "array" && node.items !== undefined) {
    flatten(node.items, `${path}[]`, out);
  }
  out.set(path, entry);
}

/** Flattens the spec and status of a whole-object schema; apiVersion, kind and metadata are the API server's. */
function flattenObject(root: JsonSchema): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const field of ["spec", "status"]) {
    const child = root.properties?.[field];
    if (child !== undefined) flatten(child, field, out);
  }
  out.set("<root>", { required: (root.required ?? []).filter((f) => f === "spec" || f === "status").sort() });
  return out;
}

function crdSchema(kind: string): JsonSchema {
  const crd = crdManifests().find((c) => (c as { spec: { names: { kind: string } } }).spec.names.kind === kind) as
    | { spec: { versions: { schema: { openAPIV3Schema: JsonSchema } }[] } }
    | undefined;
  const schema = crd?.spec.versions[0]?.schema.openAPIV3Schema;
  if (schema === undefined) throw new Error(`no CRD for ${kind}`);
  return schema;
}

function differences(zodSide: Map<string, unknown>, crdSide: Map<string, unknown>): string[] {
  const problems: string[] = [];
  for (const path of new Set([...zodSide.keys(), ...crdSide.keys()])) {
    const a = zodSide.get(path);
    const b = crdSide.get(path);
    if (a === undefined) problems.push(`${path}: only in the CRD`);
    else if (b === undefined) problems.push(`${path}: only in zod`);
    else if (!isDeepStrictEqual(a, b)) problems.push(`${path}: zod ${JSON.stringify(a)} != CRD ${JSON.stringify(b)}`);
  }
  return problems;
}

describe.each([
  ["TenantCluster", TenantClusterSchema],
  ["IsolationProfile", IsolationProfileSchema],
  ["SyncPolicy", SyncPolicySchema],
] as const)("%s: zod schema and CRD schema", (kind, schema) => {
  const zodSide = flattenObject(z.toJSONSchema(schema, { io: "input" }) as JsonSchema);
  const crdSide = flattenObject(crdSchema(kind));

  it("declare the same fields with the same types, enums, patterns, bounds and defaults", () => {
    expect(differences(zodSide, crdSide)).toEqual([]);
  });

  it("cover a meaningful schema (the comparison is not vacuous)", () => {
    expect(zodSide.size).toBeGreaterThanOrEqual(5);
    expect([...zodSide.values()].some((entry) => "default" in entry || "enum" in entry)).toBe(true);
  });
});

describe("flattening", () => {
  it("notices a changed default, a missing field and a changed enum", () => {
    const crd = crdSchema("TenantCluster");
    const broken = structuredClone(crd) as JsonSchema;
    const controlPlane = broken.properties!.spec!.properties!.controlPlane!;
    controlPlane.properties!.storage!.properties!.size!.default = "6Gi";
    controlPlane.properties!.extra = { type: "string" };
    broken.properties!.status!.properties!.phase!.enum = ["Ready"];
    const problems = differences(flattenObject(broken), flattenObject(crd));
    expect(problems.sort()).toEqual([
      "spec.controlPlane.extra: only in zod",
      expect.stringContaining('spec.controlPlane.storage.size: zod {"type":"int-or-string"'),
      expect.stringContaining("status.phase: zod"),
    ]);
  });
});

describe("TenantCluster name rule", () => {
  it("is enforced at admission by a root CEL rule with the same message zod gives", () => {
    const rules = crdSchema("TenantCluster")["x-kubernetes-validations"] as { rule: string; message: string }[];
    expect(rules).toHaveLength(1);
    expect(rules[0]?.rule).toContain("self.metadata.name");
    expect(rules[0]?.rule).toContain("<= 60");
    expect(rules[0]?.message.replace(/\s+/g, " ")).toBe(`metadata.name ${TENANT_NAME_MESSAGE}`);
  });
});

/** Every CEL rule of a schema as `path: message`, whitespace folded as YAML folds it. */
function celRules(node: JsonSchema, path: string, out: Map<string, string[]>): Map<string, string[]> {
  const rules = (node["x-kubernetes-validations"] ?? []) as { message: string }[];
  if (rules.length > 0)
    out.set(
      path,
      rules.map((r) => r.message.replace(/\s+/g, " ").trim()),
    );
  for (const [key, child] of Object.entries(node.properties ?? {})) celRules(child, `${path}.${key}`, out);
  if (typeof node.additionalProperties === "object") celRules(node.additionalProperties, `${path}[*]`, out);
  if (node.items !== undefined) celRules(node.items, `${path}[]`, out);
  return out;
}

describe("CEL admission rules", () => {
  it("say word for word what the zod schemas say, on the same fields", () => {
    const tc = celRules(crdSchema("TenantCluster"), "", new Map());
    const cp = ".spec.controlPlane";
    expect(tc.get(`${cp}.image`)).toEqual([IMAGE_WHITESPACE_MESSAGE, IMAGE_REFERENCE_MESSAGE]);
    expect(tc.get(`${cp}.storage.size`)).toEqual([STORAGE_SIZE_MESSAGE]);
    expect(tc.get(`${cp}.storage.storageClassName`)).toEqual([STORAGE_CLASS_MESSAGE]);
    expect(tc.get(`${cp}.resources.limits.cpu`)).toEqual([LIMIT_ZERO_MESSAGE]);
    expect(tc.get(`${cp}.resources.limits.memory`)).toEqual([LIMIT_ZERO_MESSAGE]);
    expect(tc.get(`${cp}.resources`)).toEqual([requestAboveLimitMessage("cpu"), requestAboveLimitMessage("memory")]);
    expect(tc.get(`${cp}.expose.loadBalancer.annotations`)).toEqual([ANNOTATION_KEY_MESSAGE]);
    expect(tc.get(".spec.isolation")).toEqual([`spec.isolation.dedicated.nodeSelector ${DEDICATED_SELECTOR_MESSAGE}`]);
    expect(tc.get(".spec.isolation.dedicated.nodeSelector")).toEqual([NODE_SELECTOR_KEY_MESSAGE]);

    const ip = celRules(crdSchema("IsolationProfile"), "", new Map());
    const lr = ".spec.limitRange";
    expect(ip.get(".spec.resourceQuota.hard")).toEqual([QUOTA_KEY_MESSAGE, QUOTA_WHOLE_MESSAGE]);
    expect(ip.get(`${lr}.container`)).toEqual(LIMIT_ORDER.map(([, , , message]) => message));
    for (const map of ["default", "max"])
      expect(ip.get(`${lr}.container.${map}`)).toEqual([CONTAINER_RESOURCE_MESSAGE, NONZERO_LIMIT_MESSAGE]);
    for (const map of ["defaultRequest", "min"])
      expect(ip.get(`${lr}.container.${map}`)).toEqual([CONTAINER_RESOURCE_MESSAGE]);
    expect(ip.get(`${lr}.persistentVolumeClaim`)).toEqual([LIMIT_ORDER[0][3]]);
    expect(ip.get(`${lr}.persistentVolumeClaim.min`)).toEqual([CLAIM_RESOURCE_MESSAGE]);
    expect(ip.get(`${lr}.persistentVolumeClaim.max`)).toEqual([CLAIM_RESOURCE_MESSAGE, NONZERO_LIMIT_MESSAGE]);
  });

  it("report each LimitRange ordering on the field the API server would name", () => {
    const container = crdSchema("IsolationProfile").properties!.spec!.properties!.limitRange!.properties!.container!;
    const rules = container["x-kubernetes-validations"] as { rule: string; fieldPath: string }[];
    expect(rules.map((r) => r.fieldPath)).toEqual(LIMIT_ORDER.map(([, , field]) => `.${field}`));
    LIMIT_ORDER.forEach(([lower, upper], i) =>
      expect(rules[i]?.rule).toContain(`self.${lower}.all(k, !(k in self.${upper})`),
    );
  });
});
