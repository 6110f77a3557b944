import { describe, expect, it } from "vitest";
import { crdManifests } from "./crd-manifests.js";
import {
  GROUP,
  PLURAL_ISOLATION_PROFILES,
  PLURAL_SYNC_POLICIES,
  PLURAL_TENANT_CLUSTERS,
  VERSION,
} from "./constants.js";

interface CrdShape {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { plural: string; shortNames: string[]; categories: string[] };
    versions: { name: string; served: boolean; storage: boolean; schema: { openAPIV3Schema: { type: string } } }[];
  };
}

describe("crdManifests", () => {
  const crds = crdManifests() as unknown as CrdShape[];

  it("returns the three cluster-scoped CRDs of the tenantplane.io group", () => {
    expect(crds.map((c) => c.metadata.name)).toEqual([
      `${PLURAL_TENANT_CLUSTERS}.${GROUP}`,
      `${PLURAL_ISOLATION_PROFILES}.${GROUP}`,
      `${PLURAL_SYNC_POLICIES}.${GROUP}`,
    ]);
    for (const crd of crds) {
      expect(crd.apiVersion).toBe("apiextensions.k8s.io/v1");
      expect(crd.kind).toBe("CustomResourceDefinition");
      expect(crd.spec.group).toBe(GROUP);
      expect(crd.spec.scope).toBe("Cluster");
      expect(crd.spec.names.categories).toEqual(["tenantplane"]);
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.${GROUP}`);
    }
  });

  it("serves and stores exactly one version, v1alpha1, with a typed schema", () => {
    for (const crd of crds) {
      expect(crd.spec.versions).toHaveLength(1);
      const [version] = crd.spec.versions;
      expect(version).toMatchObject({ name: VERSION, served: true, storage: true });
      expect(version?.schema.openAPIV3Schema.type).toBe("object");
    }
  });

  it("gives the documented short names", () => {
    expect(crds.map((c) => c.spec.names.shortNames)).toEqual([["tc"], ["isoprof"], ["sp"]]);
  });

  it("returns independent copies", () => {
    const first = crdManifests() as unknown as CrdShape[];
    first[0]!.metadata.name = "changed";
    expect((crdManifests() as unknown as CrdShape[])[0]!.metadata.name).toBe(`${PLURAL_TENANT_CLUSTERS}.${GROUP}`);
  });
});
