import { MalformedObjectError } from "../malformed-object-error.js";
import { isJsonObject, type JsonObject, objectAt, objectsAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";
import { hostSelectorMap } from "./translate-selector.js";

/**
 * Scopes a Service's selector to its tenant and virtual namespace (reserved keys escaped,
 * never dropped, so it never selects more), and drops what the host allocates (cluster
 * IPs, node ports) or must not honour (external IPs, a requested load-balancer address).
 */
export function translateService(service: JsonObject, ctx: TranslateContext): void {
  const spec = objectAt(service, "spec", "");
  if (spec === undefined) return;

  const selector = spec["selector"];
  if (selector !== undefined && selector !== null) {
    if (!isJsonObject(selector) || !Object.values(selector).every((v) => typeof v === "string")) {
      throw new MalformedObjectError("spec.selector", "expected a map of label values");
    }
    // An empty selector means "endpoints are managed by hand": scoping it would select every Pod.
    if (Object.keys(selector).length > 0) {
      spec["selector"] = hostSelectorMap(selector as Record<string, string>, ctx);
    }
  }

  // Headless Services stay headless; any other address is the host's to allocate.
  if (spec["clusterIP"] !== "None") {
    delete spec["clusterIP"];
    delete spec["clusterIPs"];
  }
  delete spec["healthCheckNodePort"];
  // Tenants must not claim arbitrary addresses on the host network (CVE-2020-8554).
  delete spec["externalIPs"];
  // The same holds for a requested load-balancer address: it could be another tenant's.
  delete spec["loadBalancerIP"];
  for (const [port] of objectsAt(spec, "ports", "spec")) {
    delete port["nodePort"];
  }
}
