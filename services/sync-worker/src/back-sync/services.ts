import { sameJson, type Json } from "./same-json.js";

/** The parts of a Service back-sync reads. */
export interface ServiceLike {
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * The merge patch that gives the tenant Service the load-balancer status of its host copy
 * (the addresses the host's load-balancer controller assigned), or undefined when the
 * tenant already shows it. The host ClusterIP is not written back: tenant DNS answers with
 * host addresses, so the tenant's own ClusterIP is never dialled.
 */
export function serviceStatusPatch(tenant: ServiceLike, host: ServiceLike): Record<string, Json> | undefined {
  const want = ((host.status?.["loadBalancer"] as Record<string, Json> | undefined)?.["ingress"] ?? null) as Json;
  const have = ((tenant.status?.["loadBalancer"] as Record<string, Json> | undefined)?.["ingress"] ?? null) as Json;
  if (sameJson(emptyAsNull(want), emptyAsNull(have))) return undefined;
  return { loadBalancer: { ingress: want } };
}

function emptyAsNull(value: Json): Json {
  return Array.isArray(value) && value.length === 0 ? null : value;
}
