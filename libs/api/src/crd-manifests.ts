import { readFileSync } from "node:fs";
import YAML from "yaml";

/** File names under `crds/`, in the order they should be applied. */
export const CRD_FILES = ["tenantclusters.yaml", "isolationprofiles.yaml", "syncpolicies.yaml"] as const;

// Resolves beside both src/ (tests, source condition) and dist/ (built package).
const CRD_DIR = new URL("../crds/", import.meta.url);

/**
 * The CustomResourceDefinition objects of the tenantplane API, parsed from the YAML files
 * shipped with this package; a fresh copy on each call, safe to mutate.
 */
export function crdManifests(): Record<string, unknown>[] {
  return CRD_FILES.map((file) => {
    const parsed: unknown = YAML.parse(readFileSync(new URL(file, CRD_DIR), "utf8"));
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new Error(`crds/${file} does not hold a single YAML object`);
    }
    return parsed as Record<string, unknown>;
  });
}
