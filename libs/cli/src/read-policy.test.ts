import { describe, expect, it } from "vitest";
import { parsePolicyManifest } from "./read-policy.js";

const policy = (toHost: string) =>
  `apiVersion: tenantplane.io/v1alpha1\nkind: SyncPolicy\nmetadata:\n  name: p\nspec:\n  toHost: ${toHost}\n`;

describe("parsePolicyManifest", () => {
  it("returns the spec of a SyncPolicy manifest", () => {
    expect(parsePolicyManifest(policy("[{kind: Pod}, {kind: Secret}]"), "p.yaml")).toEqual({
      toHost: [{ kind: "Pod" }, { kind: "Secret" }],
    });
  });

  it("names the document and the field path of each problem", () => {
    expect(() => parsePolicyManifest(`# c\n${policy("[{kind: Pod}, {kind: Job}]")}`, "p.yaml")).toThrow(
      'p.yaml: document 1: SyncPolicy "p" is invalid: spec.toHost[1].kind: unknown kind "Job"',
    );
    expect(() => parsePolicyManifest("---\n---\napiVersion: v1\nkind: ConfigMap\n", "p.yaml")).toThrow(
      /^p\.yaml: document 2: SyncPolicy is invalid: apiVersion: .*; kind: .*; metadata: .*; spec: /,
    );
  });

  it("wants exactly one document", () => {
    expect(() => parsePolicyManifest("", "p.yaml")).toThrow(
      "p.yaml: expected exactly one SyncPolicy document, found 0",
    );
    expect(() => parsePolicyManifest(`${policy("[]")}---\n${policy("[]")}`, "p.yaml")).toThrow("found 2");
  });
});
