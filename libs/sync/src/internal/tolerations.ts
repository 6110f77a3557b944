import { canonicalJson, type Toleration } from "@tenantplane/api";
import type { HostRules } from "../host-rules.js";
import { isDedicatedToleration, placementTolerations } from "../placement.js";
import type { JsonObject } from "./json.js";
import { items, read } from "./violation.js";

/** Where a tenant Pod's tolerations are granted, for reasons. */
export const GRANTED_TOLERATIONS = "IsolationProfile spec.workloads.tolerations";

// The DefaultTolerationSeconds admission plugin adds these to every Pod in the tenant's
// own API server; they only bound how long a Pod stays on a failed node.
const NODE_FAILURE_TAINTS = new Set(["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]);

/** The tolerations a host copy carries, and the tenant's own that the profile does not grant. */
export interface EnforcedTolerations {
  tolerations: unknown[];
  /** Tenant tolerations the profile does not grant. */
  removed: JsonObject[];
  /** Tenant tolerations of the dedicated-node taint's key, which only tenantplane sets. */
  reserved: JsonObject[];
}

/**
 * The Pod's tolerations that the profile grants, plus the profile's own and the placement's
 * (in Dedicated, its own tenant's dedicated-node taint), without repeats; the others are
 * removed (a toleration only widens where a Pod may run, so the Pod can still run without it)
 * and listed in `removed`, or in `reserved` for the dedicated-node taint's key, which neither
 * a tenant nor a profile may grant.
 */
export function enforcedTolerations(tolerations: unknown, rules: HostRules, tenant: string): EnforcedTolerations {
  const own = items(tolerations).map(([toleration]) => toleration);
  const reserved = own.filter((toleration) => isDedicatedToleration(toleration));
  const free = own.filter((toleration) => !isDedicatedToleration(toleration));
  const kept: unknown[] = free.filter((toleration) => isGrantedToleration(toleration, rules));
  const removed = free.filter((toleration) => !isGrantedToleration(toleration, rules));
  const seen = new Set(kept.map((t) => canonicalJson(t)));
  const granted = rules.tolerations.filter((t) => !isDedicatedToleration(t));
  for (const toleration of [...granted, ...placementTolerations(rules.placement, tenant)]) {
    const key = canonicalJson(toleration);
    if (!seen.has(key)) kept.push({ ...toleration });
    seen.add(key);
  }
  return { tolerations: kept, removed, reserved };
}

/** A toleration in words: key, operator and effect. */
export function describeToleration(toleration: JsonObject): string {
  const key = typeof toleration["key"] === "string" && toleration["key"] !== "" ? toleration["key"] : "(any key)";
  const effect =
    typeof toleration["effect"] === "string" && toleration["effect"] !== "" ? toleration["effect"] : "any effect";
  return `${key} ${String(toleration["operator"] ?? "Equal")} (${effect})`;
}

function isGrantedToleration(toleration: JsonObject, rules: HostRules): boolean {
  const key = read(toleration, "key");
  if (
    typeof key === "string" &&
    NODE_FAILURE_TAINTS.has(key) &&
    read(toleration, "effect") === "NoExecute" &&
    (read(toleration, "operator") ?? "Equal") === "Exists"
  ) {
    return true;
  }
  return rules.tolerations.some((granted) => sameToleration(toleration, granted));
}

// tolerationSeconds only shortens how long a NoExecute toleration holds, so it is not compared.
function sameToleration(toleration: JsonObject, granted: Toleration): boolean {
  const operator = (t: { operator?: unknown }) => t.operator ?? "Equal";
  return (
    (toleration["key"] ?? "") === (granted.key ?? "") &&
    operator(toleration) === operator(granted) &&
    (operator(granted) === "Exists" || (toleration["value"] ?? "") === (granted.value ?? "")) &&
    (toleration["effect"] ?? "") === (granted.effect ?? "")
  );
}
