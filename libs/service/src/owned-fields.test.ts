import { describe, expect, it } from "vitest";
import { ownedFieldsChanged, ownedPaths } from "./owned-fields.js";

const manager = "tenantplane-provisioner";
function sts(image: string, replicas: number, annotations: Record<string, string> = {}) {
  return {
    metadata: {
      name: "k3s",
      annotations,
      managedFields: [
        {
          manager,
          operation: "Apply",
          fieldsV1: {
            "f:spec": {
              "f:replicas": {},
              "f:template": {
                "f:spec": { "f:containers": { 'k:{"name":"k3s"}': { ".": {}, "f:image": {}, "f:name": {} } } },
              },
            },
          },
        },
        { manager, operation: "Update", subresource: "status", fieldsV1: { "f:status": { "f:replicas": {} } } },
      ],
    },
    spec: {
      replicas,
      template: {
        spec: {
          containers: [
            { name: "sidecar", image: "x" },
            { name: "k3s", image },
          ],
        },
      },
    },
    status: { replicas: Math.random() },
  };
}

describe("ownedPaths", () => {
  it("reads fields, keyed list items and presence markers", () => {
    const paths = ownedPaths({
      "f:a": { ".": {}, "f:b": {} },
      "f:l": { 'k:{"name":"x"}': {} },
      "f:s": { 'v:"t"': {} },
    });
    expect(paths).toEqual([
      { segments: [{ field: "a" }], mode: "exists" },
      { segments: [{ field: "a" }, { field: "b" }], mode: "value" },
      { segments: [{ field: "l" }, { key: { name: "x" } }], mode: "value" },
      { segments: [{ field: "s" }, { value: "t" }], mode: "value" },
    ]);
  });
});

describe("ownedFieldsChanged", () => {
  it("finds a change inside a keyed list item", () => {
    expect(ownedFieldsChanged(sts("k3s:1", 1), sts("k3s:2", 1), manager)).toBe(true);
  });
  it("ignores other managers' fields and this manager's status", () => {
    expect(ownedFieldsChanged(sts("k3s:1", 1), sts("k3s:1", 1, { other: "x" }), manager)).toBe(false);
  });
  it("reads fields the typed client renamed", () => {
    const owned = (spec: object) =>
      ({ metadata: { managedFields: [{ manager, fieldsV1: { "f:spec": { "f:from": {} } } }] }, spec }) as never;
    expect(ownedFieldsChanged(owned({ _from: [1] }), owned({ from: [2] }), manager)).toBe(true);
    expect(ownedFieldsChanged(owned({ _from: [1] }), owned({ from: [1] }), manager)).toBe(false);
  });
});
