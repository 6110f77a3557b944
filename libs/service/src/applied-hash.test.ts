import type { KubernetesObject } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { appliedHashAnnotation, appliedUpToDate, contains, withAppliedHash } from "./applied-hash.js";

const MANAGER = "tenantplane-isolation";
const desired: KubernetesObject & { spec: unknown } = {
  apiVersion: "v1",
  kind: "LimitRange",
  metadata: { name: "limits", namespace: "tp-a", labels: { a: "1" } },
  spec: { limits: [{ type: "Container", default: { cpu: "500m" } }] },
};

describe("withAppliedHash", () => {
  it("records the same hash for the same content, whatever the key order", () => {
    const reordered: KubernetesObject = {
      spec: desired.spec,
      metadata: desired.metadata,
      kind: "LimitRange",
      apiVersion: "v1",
    } as KubernetesObject;
    const key = appliedHashAnnotation(MANAGER);
    expect(withAppliedHash(desired, MANAGER).metadata?.annotations?.[key]).toBe(
      withAppliedHash(reordered, MANAGER).metadata?.annotations?.[key],
    );
  });

  it("records another hash when a field changes", () => {
    const key = appliedHashAnnotation(MANAGER);
    const changed = { ...desired, spec: { limits: [{ type: "Container", default: { cpu: "1" } }] } };
    expect(withAppliedHash(changed, MANAGER).metadata?.annotations?.[key]).not.toBe(
      withAppliedHash(desired, MANAGER).metadata?.annotations?.[key],
    );
  });
});

describe("appliedUpToDate", () => {
  const hashed = withAppliedHash(desired, MANAGER);
  // As the server stores it: defaults and other managers' fields added.
  const stored = {
    ...hashed,
    metadata: { ...hashed.metadata, uid: "u", resourceVersion: "7", labels: { a: "1", b: "2" } },
    spec: { limits: [{ type: "Container", default: { cpu: "500m", memory: "1Gi" }, defaultRequest: {} }] },
  };

  it("is true for the stored object with extra defaulted fields", () => {
    expect(appliedUpToDate(stored, hashed, MANAGER)).toBe(true);
  });

  it("is false once someone changed a field this manager sets", () => {
    const edited = { ...stored, spec: { limits: [{ type: "Container", default: { cpu: "2" } }] } };
    expect(appliedUpToDate(edited, hashed, MANAGER)).toBe(false);
  });

  it("is false when the object carries another hash (a field was dropped from what is applied)", () => {
    const fewer = withAppliedHash({ ...desired, metadata: { ...desired.metadata, labels: {} } }, MANAGER);
    expect(appliedUpToDate(stored, fewer, MANAGER)).toBe(false);
  });

  it("is false for an object written before hashes were recorded", () => {
    const { metadata } = desired;
    expect(appliedUpToDate({ ...desired, metadata }, hashed, MANAGER)).toBe(false);
  });
});

describe("contains", () => {
  it("compares lists item by item and refuses a different length", () => {
    expect(contains([{ a: 1, b: 2 }], [{ a: 1 }])).toBe(true);
    expect(contains([{ a: 1 }, { a: 2 }], [{ a: 1 }])).toBe(false);
  });

  it("takes an empty map the server did not store as contained", () => {
    expect(contains({}, { a: {} })).toBe(true);
    expect(contains({ a: "x" }, { a: {} })).toBe(false);
  });

  it("matches quantities the API server stored in canonical form, and only in quantity maps", () => {
    const quota = { spec: { hard: { pods: "5k", "requests.memory": "5000Gi", "limits.cpu": "500m" } } };
    expect(
      contains(quota, { spec: { hard: { pods: "5000", "requests.memory": "5000Gi", "limits.cpu": "0.5" } } }),
    ).toBe(true);
    expect(contains(quota, { spec: { hard: { pods: "5001" } } })).toBe(false);
    const limits = { spec: { limits: [{ type: "Container", default: { memory: "1Gi" } }] } };
    expect(contains(limits, { spec: { limits: [{ type: "Container", default: { memory: "1024Mi" } }] } })).toBe(true);
    // A label is text, whatever its key: "5k" is not "5000" there.
    expect(contains({ metadata: { labels: { max: "5k" } } }, { metadata: { labels: { max: "5000" } } })).toBe(false);
    expect(contains({ spec: { max: "5k" } }, { spec: { max: "5000" } })).toBe(false);
  });
});
