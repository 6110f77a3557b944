import { isDnsLabel } from "@tenantplane/mapping";
import { copiesOf, tenantKeyOf } from "./internal/host-copies.js";
import { isJsonObject, type JsonObject } from "./internal/json.js";
import type { DnsEntry } from "./tenant-dns.js";

/** A tenant zone record with why it exists (`headless Service shop/db, Pod db-0 Ready`), for reasons. */
export interface ExplainedDnsEntry extends DnsEntry {
  why: string;
}

/** What the names beyond ClusterIPs come from: the tenant's Services and Pods and their host copies. */
export interface ServiceDnsInput {
  tenant: string;
  tenantServices: readonly unknown[];
  tenantPods: readonly unknown[];
  hostServices: readonly unknown[];
  hostPods: readonly unknown[];
}

/**
 * The records cluster DNS gives Services beyond a ClusterIP, for the tenant's synced
 * Services only (a Service the host refused has no name either):
 * - a headless Service (`clusterIP: None`) with a selector answers with the addresses of its
 *   endpoints: the tenant Pods of its namespace it selects whose host copy is Ready (any, with
 *   `publishNotReadyAddresses`), has an address, and is neither finished nor being deleted; the
 *   address is the host copy's, the one the tenant's Pod status shows;
 * - such an endpoint with `spec.hostname` and `spec.subdomain` equal to the Service's name
 *   also answers as `<hostname>.<service>.<namespace>.svc`;
 * - an ExternalName Service is a CNAME to its target.
 * A headless Service without a selector (endpoints kept by hand) has no record: tenant
 * endpoints are not synced. Sorted by name, then value. Pure.
 */
export function serviceDnsEntries(input: ServiceDnsInput): ExplainedDnsEntry[] {
  const out: ExplainedDnsEntry[] = [];
  const steps = entriesWork(input, out);
  while (!steps.next().done);
  return sortEntries(out);
}

/**
 * {@link serviceDnsEntries} in slices: `pause` is awaited between slices of work (the caller
 * decides whether to yield to the event loop), so Services x Pods in the tens of thousands
 * never hold a process for long. The same entries, in the same order.
 */
export async function serviceDnsEntriesSliced(
  input: ServiceDnsInput,
  pause: () => Promise<void>,
): Promise<ExplainedDnsEntry[]> {
  const out: ExplainedDnsEntry[] = [];
  const steps = entriesWork(input, out);
  while (!steps.next().done) await pause();
  return sortEntries(out);
}

/** Objects looked at between two chances to pause. */
const STEP = 256;

// The computation proper, pausing (yield) every STEP objects; entries are appended to `out`.
function* entriesWork(input: ServiceDnsInput, out: ExplainedDnsEntry[]): Generator<void, void, void> {
  const serviceCopies = yield* copiesInSteps(input.hostServices, input.tenant, "Service");
  const podCopies = yield* copiesInSteps(input.hostPods, input.tenant, "Pod");
  const podsByNamespace = new Map<string, JsonObject[]>();
  let n = 0;
  for (const pod of input.tenantPods) {
    if (++n % STEP === 0) yield;
    if (!isJsonObject(pod)) continue;
    const key = tenantKeyOf(pod);
    if (key === undefined) continue;
    const namespace = key.slice(0, key.indexOf("/"));
    const list = podsByNamespace.get(namespace);
    if (list === undefined) podsByNamespace.set(namespace, [pod]);
    else list.push(pod);
  }
  for (const svc of input.tenantServices) {
    if (++n % STEP === 0) yield;
    if (!isJsonObject(svc)) continue;
    const key = tenantKeyOf(svc);
    const copy = key === undefined ? undefined : serviceCopies.get(key);
    if (key === undefined || copy === undefined) continue;
    const namespace = key.slice(0, key.indexOf("/"));
    const name = key.slice(key.indexOf("/") + 1);
    const spec = objectOf(svc["spec"]);
    const record = `${name}.${namespace}.svc`;
    if (spec["type"] === "ExternalName") {
      // The host copy's target: what the host rules let through, never a refused one.
      const target = objectOf(copy["spec"])["externalName"];
      if (typeof target !== "string" || target === "") continue;
      const absolute = target.toLowerCase().endsWith(".") ? target.toLowerCase() : `${target.toLowerCase()}.`;
      out.push({ name: record, type: "CNAME", value: absolute, why: `ExternalName Service ${key}` });
      continue;
    }
    if (spec["clusterIP"] !== "None") continue;
    const selector = objectOf(spec["selector"]) as Record<string, unknown>;
    if (Object.keys(selector).length === 0) continue;
    const publishNotReady = spec["publishNotReadyAddresses"] === true;
    // Every headless Service against every Pod of its namespace: the part that grows as Services x Pods.
    for (const pod of podsByNamespace.get(namespace) ?? []) {
      if (++n % STEP === 0) yield;
      const metadata = objectOf(pod["metadata"]);
      const labels = objectOf(metadata["labels"]);
      if (!Object.entries(selector).every(([k, v]) => labels[k] === v)) continue;
      const podName = String(metadata["name"]);
      const endpoint = endpointOf(pod, podCopies.get(`${namespace}/${podName}`), publishNotReady);
      if (endpoint === undefined) continue;
      const type = endpoint.ip.includes(":") ? "AAAA" : "A";
      out.push({
        name: record,
        type,
        value: endpoint.ip,
        why: `headless Service ${key}, Pod ${podName} ${endpoint.state}`,
      });
      const podSpec = objectOf(pod["spec"]);
      const hostname = podSpec["hostname"];
      if (typeof hostname === "string" && isDnsLabel(hostname) && podSpec["subdomain"] === name) {
        out.push({
          name: `${hostname}.${record}`,
          type,
          value: endpoint.ip,
          why: `Pod ${namespace}/${podName} hostname and subdomain`,
        });
      }
    }
  }
}

/** {@link copiesOf} over STEP objects at a time, a later copy of a key winning as in one call. */
function* copiesInSteps(
  hostObjects: readonly unknown[],
  tenant: string,
  kind: string,
): Generator<void, Map<string, JsonObject>, void> {
  const copies = new Map<string, JsonObject>();
  for (let i = 0; i < hostObjects.length; i += STEP) {
    for (const [key, copy] of copiesOf(hostObjects.slice(i, i + STEP), tenant, kind)) copies.set(key, copy);
    yield;
  }
  return copies;
}

function sortEntries(out: ExplainedDnsEntry[]): ExplainedDnsEntry[] {
  return out.sort((a, b) => compare(a.name, b.name) || compare(a.value, b.value));
}

/** A Pod's address as an endpoint, or undefined when cluster DNS would not list it. */
function endpointOf(
  pod: JsonObject,
  copy: JsonObject | undefined,
  publishNotReady: boolean,
): { ip: string; state: string } | undefined {
  if (copy === undefined || isDeleting(pod) || isDeleting(copy)) return undefined;
  const status = objectOf(copy["status"]);
  const ip = status["podIP"];
  if (typeof ip !== "string" || ip === "") return undefined;
  if (status["phase"] === "Succeeded" || status["phase"] === "Failed") return undefined;
  const conditions = Array.isArray(status["conditions"]) ? status["conditions"] : [];
  const ready = conditions.some((c) => isJsonObject(c) && c["type"] === "Ready" && c["status"] === "True");
  if (ready) return { ip, state: "Ready" };
  return publishNotReady ? { ip, state: "not Ready, published anyway" } : undefined;
}

function isDeleting(obj: JsonObject): boolean {
  const at = objectOf(obj["metadata"])["deletionTimestamp"];
  return at !== undefined && at !== null;
}

function objectOf(value: unknown): JsonObject {
  return isJsonObject(value) ? value : {};
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
