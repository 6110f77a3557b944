import { describe, expect, it } from "vitest";
import { KubeObjectSchema, describeIssue, parseTenantObject } from "./kube-object.js";

const problem = (value: unknown) => {
  const parsed = parseTenantObject(value);
  return parsed.ok ? undefined : parsed.problem;
};

describe("parseTenantObject", () => {
  it("accepts a v1 object and keeps every field", () => {
    const value = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a.b", uid: "u" }, data: { k: "v" } };
    expect(parseTenantObject(value)).toEqual({ ok: true, object: value });
  });

  it("names the field and the fix", () => {
    expect(problem({ kind: "ConfigMap", metadata: { name: "a" } })).toBe(
      "apiVersion: expected an apiVersion such as v1",
    );
    expect(problem({ apiVersion: "v1", kind: "ConfigMap", metadata: {} })).toBe("metadata.name: expected a name");
    expect(problem({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "Shop" } })).toBe(
      "metadata.namespace: a namespace is a DNS label: lowercase letters, digits and '-', at most 63",
    );
    expect(problem({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "é" } })).toMatch(
      /^metadata\.name: use lowercase/,
    );
    expect(problem({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a".repeat(254) } })).toBe(
      "metadata.name: a name has at most 253 characters",
    );
  });

  it("insists on v1 and on DNS-1035 Service names", () => {
    expect(problem({ apiVersion: "apps/v1", kind: "Secret", metadata: { name: "s" } })).toBe(
      "apiVersion: Secret is served as v1, not apps/v1",
    );
    expect(problem({ apiVersion: "v1", kind: "Service", metadata: { name: "a.b" } })).toMatch(
      /^metadata\.name: a Service name/,
    );
    expect(problem({ apiVersion: "v1", kind: "Service", metadata: { name: "api" } })).toBeUndefined();
  });
});

describe("parseTenantObject: what the tenant API would refuse", () => {
  it.each([
    [{ kind: "ConfigMap", data: { k: 1 } }, "data.k: expected a string value"],
    [
      { kind: "ConfigMap", data: { "bad key": "v" } },
      "data[bad key]: a data key uses letters, digits, '-', '_' and '.'",
    ],
    [{ kind: "ConfigMap", binaryData: { k: "not base64!" } }, "binaryData.k: expected a base64 string"],
    [{ kind: "Secret", data: { password: "hunter2" } }, "data.password: expected a base64 string"],
    [{ kind: "Secret", stringData: { k: true } }, "stringData.k: expected a string value"],
    [{ kind: "Secret", type: 5 }, "type: expected a Secret type such as Opaque"],
    [
      { kind: "Service", spec: { type: "Internal" } },
      "spec.type: expected ClusterIP, NodePort, LoadBalancer or ExternalName",
    ],
  ])("refuses %j", (fields, text) => {
    expect(problem({ apiVersion: "v1", metadata: { name: "x" }, ...fields })).toBe(text);
  });

  it('reads namespace "" as default, as kubectl does', () => {
    const parsed = parseTenantObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "" } });
    expect(parsed).toEqual({ ok: true, object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } } });
  });
});

describe("describeIssue", () => {
  it("prints list indices in brackets", () => {
    const parsed = KubeObjectSchema.safeParse({
      apiVersion: "v1",
      kind: "X",
      metadata: { name: "a", labels: { k: 1 } },
    });
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(describeIssue(parsed.error)).toBe("metadata.labels.k: expected a string value");
  });
});
