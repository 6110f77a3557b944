import { describe, expect, it } from "vitest";
import { crdManifests } from "./crd-manifests.js";

// `kubectl explain` prints a field's description and nothing else a person can act on, so
// every field of every served version must say what it is, its units and default, and what
// changing it does.

interface SchemaNode {
  description?: unknown;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  enum?: unknown[];
}

interface Crd {
  spec: { names: { plural: string }; versions: { name: string; schema: { openAPIV3Schema: SchemaNode } }[] };
}

/**
 * Paths (as `kubectl explain` spells them, `<plural>.<field>...`) of every property, and the
 * root, that has no description. Array items and map values are walked through: their
 * fields are fields of the property that holds them.
 */
function undescribed(node: SchemaNode, path: string, out: string[] = []): string[] {
  if (typeof node.description !== "string" || node.description.trim().length === 0) out.push(path);
  walkChildren(node, path, out);
  return out;
}

function walkChildren(node: SchemaNode, path: string, out: string[]): void {
  for (const [key, child] of Object.entries(node.properties ?? {})) undescribed(child, `${path}.${key}`, out);
  if (node.items !== undefined) walkChildren(node.items, `${path}[]`, out);
  if (typeof node.additionalProperties === "object") walkChildren(node.additionalProperties, `${path}[*]`, out);
}

/** Enum values of `node`'s subtree that its description never names, as `path: value`. */
function unexplainedEnums(node: SchemaNode, path: string, out: string[] = []): string[] {
  const text = typeof node.description === "string" ? node.description : "";
  for (const value of node.enum ?? []) if (!text.includes(String(value))) out.push(`${path}: ${String(value)}`);
  for (const [key, child] of Object.entries(node.properties ?? {})) unexplainedEnums(child, `${path}.${key}`, out);
  if (node.items !== undefined) {
    // An array's description may explain its items' values.
    const items = { ...node.items, description: `${text} ${String(node.items.description ?? "")}` };
    unexplainedEnums(items, `${path}[]`, out);
  }
  if (typeof node.additionalProperties === "object") unexplainedEnums(node.additionalProperties, `${path}[*]`, out);
  return out;
}

const versions = (crdManifests() as unknown as Crd[]).flatMap((crd) =>
  crd.spec.versions.map((version) => ({
    label: `${crd.spec.names.plural} ${version.name}`,
    plural: crd.spec.names.plural,
    schema: version.schema.openAPIV3Schema,
  })),
);

describe.each(versions)("$label schema", ({ plural, schema }) => {
  it("describes every field, nested ones included", () => {
    expect(undescribed(schema, plural)).toEqual([]);
  });

  it("names every enum value in the description of its field", () => {
    expect(unexplainedEnums(schema, plural)).toEqual([]);
  });
});

describe("the description walk", () => {
  it("names the path of each undescribed property, through arrays and maps", () => {
    const schema: SchemaNode = {
      description: "root",
      properties: {
        spec: {
          description: "spec",
          properties: {
            list: { description: "a list", items: { properties: { bare: {} } } },
            map: { description: "a map", additionalProperties: { properties: { blank: { description: " " } } } },
          },
        },
        status: {},
      },
    };
    expect(undescribed(schema, "things")).toEqual([
      "things.spec.list[].bare",
      "things.spec.map[*].blank",
      "things.status",
    ]);
  });

  it("finds every CRD version", () => {
    expect(versions.map((v) => v.label)).toEqual([
      "tenantclusters v1alpha1",
      "isolationprofiles v1alpha1",
      "syncpolicies v1alpha1",
    ]);
  });
});
