import { MalformedObjectError } from "../malformed-object-error.js";
import { isJsonObject, type JsonObject, objectAt, objectsAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";
import { hostSelectorMap } from "./translate-selector.js";
import { tenantText } from "./violation.js";

/**
 * Scopes a Service's selector to its tenant and virtual namespace (reserved keys escaped,
 * never dropped, so it never selects more), drops what the host allocates (cluster IPs,
 * IP families unless both are required, node ports) or must not honour (external IPs, a requested
 * load-balancer address, a load-balancer class the profile does not allow, said in the reason), and the fields the host accepts only beside
 * a dropped one (externalTrafficPolicy without external IPs on a ClusterIP Service).
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
  // The tenant API defaults the families from its own configuration; the host refuses a
  // family it does not serve (an IPv4 tenant on an IPv6 host), so it picks them itself
  // unless both are required. On an update it keeps those of the addresses it allocated.
  if (spec["ipFamilyPolicy"] !== "RequireDualStack") delete spec["ipFamilies"];
  delete spec["healthCheckNodePort"];
  // Tenants must not claim arbitrary addresses on the host network (CVE-2020-8554).
  dropAsked(spec, "externalIPs", "a tenant never claims addresses on the host network", ctx);
  // The same holds for a requested load-balancer address: it could be another tenant's.
  dropAsked(spec, "loadBalancerIP", "it could be another tenant's address", ctx);
  // The class picks which host load-balancer implementation acts on the Service.
  const lbClass = spec["loadBalancerClass"];
  if (typeof lbClass !== "string" || !ctx.rules.services.allowedLoadBalancerClasses.includes(lbClass)) {
    dropAsked(
      spec,
      "loadBalancerClass",
      "it picks the host's load-balancer implementation (IsolationProfile spec.workloads.services.allowedLoadBalancerClasses)",
      ctx,
    );
  }
  // The tenant API defaults externalTrafficPolicy for external IPs too; without them the
  // host refuses it outright ("may only be set for externally-accessible services").
  if (!EXTERNALLY_ACCESSIBLE.has(String(spec["type"] ?? "ClusterIP")) && spec["externalTrafficPolicy"] !== undefined) {
    delete spec["externalTrafficPolicy"];
  }
  for (const [port] of objectsAt(spec, "ports", "spec")) {
    delete port["nodePort"];
  }
}

/** Service types reachable from outside the cluster without external IPs. */
const EXTERNALLY_ACCESSIBLE = new Set(["NodePort", "LoadBalancer"]);

// Drops what the tenant asked for and the host copy cannot carry, saying so in the reason.
function dropAsked(spec: JsonObject, key: string, why: string, ctx: TranslateContext): void {
  const value = spec[key];
  if (value === undefined || value === null) return;
  delete spec[key];
  const shown = tenantText(Array.isArray(value) ? value.map(String).join(", ") : String(value));
  if (shown !== "") ctx.explain(`spec.${key} ${shown} dropped: ${why}`);
}
