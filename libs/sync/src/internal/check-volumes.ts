import { ALWAYS_ALLOWED_VOLUME_TYPES } from "@tenantplane/api";
import type { VolumeRules } from "../host-rules.js";
import type { JsonObject } from "./json.js";
import { items, read, tenantText, type Violation } from "./violation.js";

const ALWAYS_ALLOWED: ReadonlySet<string> = new Set(ALWAYS_ALLOWED_VOLUME_TYPES);
const RULES = "IsolationProfile spec.workloads.volumes";

/**
 * The volumes of `pod` the node would mount or run on the tenant's behalf without the
 * profile's leave: an allow-list, so a volume type the Pod API adds later is refused until
 * a profile names it. hostPath is left to the host-access rule, which no profile lifts.
 */
export function volumeViolations(pod: JsonObject, rules: VolumeRules): Violation[] {
  const found: Violation[] = [];
  for (const [volume, index] of items(read(read(pod, "spec"), "volumes"))) {
    for (const type of Object.keys(volume)) {
      if (type === "name" || type === "hostPath" || ALWAYS_ALLOWED.has(type)) continue;
      const field = `spec.volumes[${index}].${tenantText(type)}`;
      if (type === "csi") {
        const driver = read(volume[type], "driver");
        if (typeof driver === "string" && rules.allowedCSIDrivers.includes(driver)) continue;
        found.push({
          field: `${field}.driver`,
          problem: `inline CSI driver ${tenantText(driver)} is not in ${RULES}.allowedCSIDrivers (${listed(rules.allowedCSIDrivers)})`,
        });
      } else if (!rules.allowedTypes.includes(type)) {
        found.push({
          field,
          problem: `volume type ${tenantText(type)} is not in ${RULES}.allowedTypes (${listed(rules.allowedTypes)})`,
        });
      }
    }
  }
  return found;
}

/** `allowed: a, b` or `none allowed`, for a reason naming a profile list. */
export function listed(names: readonly string[]): string {
  return names.length === 0 ? "none allowed" : `allowed: ${names.join(", ")}`;
}
