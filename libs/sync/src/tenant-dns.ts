import { isManaged, LABEL_TENANT, labelValue, TENANT_DNS_CONTAINER_PORT } from "@tenantplane/mapping";
import { copiesOf, tenantKeyOf } from "./internal/host-copies.js";
import { isJsonObject, type JsonObject } from "./internal/json.js";
import { TENANT_CLUSTER_DOMAIN, type PodEnvironment } from "./pod-environment.js";

/** The ConfigMap in `tp-<tenant>` holding the tenant DNS records; the sync worker writes it. */
export const DNS_RECORDS_CONFIGMAP = "tenant-dns-records";
/** Key of the zone file in {@link DNS_RECORDS_CONFIGMAP}. */
export const DNS_RECORDS_KEY = "zone";
/** Key of the Corefile in the provisioner's `tenant-dns` ConfigMap. */
export const COREFILE_KEY = "Corefile";

/** One port of a tenant Service, as service links name it. */
export interface ServicePort {
  name?: string | undefined;
  port: number;
  protocol?: string | undefined;
}

/** A tenant Service and the host address its Pods reach it at (the ClusterIP of its host copy). */
export interface ServiceAddress {
  namespace: string;
  name: string;
  clusterIP: string;
  ports: ServicePort[];
}

/**
 * The address of every tenant Service a Pod can reach by name: each ClusterIP-bearing
 * tenant Service (not headless, not ExternalName) whose host copy in `hostServices` is this
 * tenant's copy of it and has a ClusterIP. Sorted by namespace and name.
 */
export function serviceAddresses(
  tenantServices: readonly unknown[],
  hostServices: readonly unknown[],
  tenant: string,
): ServiceAddress[] {
  const out: ServiceAddress[] = [];
  const steps = addressesWork(tenantServices, hostServices, tenant, out);
  while (!steps.next().done);
  return sortAddresses(out);
}

/**
 * {@link serviceAddresses} in slices, awaiting `pause` between them (the caller yields to the
 * event loop there): the same addresses in the same order, without holding a process while
 * tens of thousands of Services are matched with their copies.
 */
export async function serviceAddressesSliced(
  tenantServices: readonly unknown[],
  hostServices: readonly unknown[],
  tenant: string,
  pause: () => Promise<void>,
): Promise<ServiceAddress[]> {
  const out: ServiceAddress[] = [];
  const steps = addressesWork(tenantServices, hostServices, tenant, out);
  while (!steps.next().done) await pause();
  return sortAddresses(out);
}

/** Services looked at between two chances to pause. */
const STEP = 256;

function* addressesWork(
  tenantServices: readonly unknown[],
  hostServices: readonly unknown[],
  tenant: string,
  out: ServiceAddress[],
): Generator<void, void, void> {
  const copies = new Map<string, JsonObject>();
  for (let i = 0; i < hostServices.length; i += STEP) {
    for (const [key, copy] of copiesOf(hostServices.slice(i, i + STEP), tenant, "Service")) copies.set(key, copy);
    yield;
  }
  let n = 0;
  for (const svc of tenantServices) {
    if (++n % STEP === 0) yield;
    if (!isJsonObject(svc)) continue;
    const key = tenantKeyOf(svc);
    const copy = key === undefined ? undefined : copies.get(key);
    if (key === undefined || copy === undefined) continue;
    const spec = isJsonObject(svc["spec"]) ? svc["spec"] : {};
    if (spec["type"] === "ExternalName" || spec["clusterIP"] === "None") continue;
    const hostSpec = isJsonObject(copy["spec"]) ? copy["spec"] : {};
    const ip = hostSpec["clusterIP"];
    if (typeof ip !== "string" || ip === "" || ip === "None") continue;
    const [namespace, name] = splitKey(key);
    out.push({ namespace, name, clusterIP: ip, ports: portsOf(spec) });
  }
}

function sortAddresses(out: ServiceAddress[]): ServiceAddress[] {
  return out.sort((a, b) => compare(a.namespace, b.namespace) || compare(a.name, b.name));
}

function splitKey(key: string): [string, string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/** TTL of every tenant DNS record and of negative answers: short, so a changed Service is seen within seconds. */
const RECORD_TTL = 5;

/**
 * One record of the tenant zone beyond the Services' ClusterIPs: `name` is relative to
 * `cluster.local` (`db.shop.svc`), `value` an address (A) or an absolute name (CNAME).
 */
export interface DnsEntry {
  name: string;
  type: "A" | "AAAA" | "CNAME";
  value: string;
}

/**
 * The zone file the tenant DNS server answers `cluster.local` from:
 * `kubernetes.default.svc.cluster.local` at the tenant API Service's ClusterIP,
 * `<svc>.<ns>.svc.cluster.local` at each host copy's ClusterIP, and `entries` (headless
 * endpoints, Pod hostnames, ExternalName aliases); nothing else, so no other tenant's name
 * resolves. The SOA serial is a hash of the records (the server reloads when it changes)
 * and makes unknown names NXDOMAIN, so resolvers go on down their search list.
 */
export function dnsRecords(
  tenant: string,
  env: Pick<PodEnvironment, "apiHost">,
  services: readonly ServiceAddress[],
  entries: readonly DnsEntry[] = [],
) {
  const records = [`kubernetes.default.svc ${RECORD_TTL} IN A ${env.apiHost}`];
  for (const s of services) {
    if (s.namespace === "default" && s.name === "kubernetes") continue;
    records.push(`${s.name}.${s.namespace}.svc ${RECORD_TTL} IN A ${s.clusterIP}`);
  }
  for (const e of entries) {
    if (e.name === "kubernetes.default.svc") continue;
    records.push(`${e.name} ${RECORD_TTL} IN ${e.type} ${e.value}`);
  }
  const serial = fnv1a32(records.join("\n"));
  return [
    `; tenant ${tenant}: its Services at the host addresses its Pods reach; written by the sync worker`,
    `$ORIGIN ${TENANT_CLUSTER_DOMAIN}.`,
    `@ ${RECORD_TTL} IN SOA ns.dns.${TENANT_CLUSTER_DOMAIN}. hostmaster.${TENANT_CLUSTER_DOMAIN}. ${serial} 7200 1800 86400 ${RECORD_TTL}`,
    `@ ${RECORD_TTL} IN NS ns.dns.${TENANT_CLUSTER_DOMAIN}.`,
    ...records,
    "",
  ].join("\n");
}

/**
 * The names a zone from {@link dnsRecords} answers, in zone order, each with its record
 * type and value (a name with several addresses appears once per address).
 */
export function recordsOf(zone: string): Array<{ name: string; type: "A" | "AAAA" | "CNAME"; value: string }> {
  const out: Array<{ name: string; type: "A" | "AAAA" | "CNAME"; value: string }> = [];
  for (const line of zone.split("\n")) {
    const match = /^(\S+) \d+ IN (A|AAAA|CNAME) (\S+)$/.exec(line);
    if (match)
      out.push({ name: `${match[1]}.${TENANT_CLUSTER_DOMAIN}`, type: match[2] as DnsEntry["type"], value: match[3]! });
  }
  return out;
}

function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  // A serial of 0 reads as "unset" to some tools.
  return hash === 0 ? 1 : hash;
}

/** Where and how a tenant DNS server runs. */
export interface CorefileOptions {
  /** Port to listen on (UDP and TCP); default {@link TENANT_DNS_CONTAINER_PORT}. */
  port?: number;
  /** Path of the zone file from {@link DNS_RECORDS_CONFIGMAP}. */
  recordsFile: string;
  /** Resolver for every other zone; default the pod's own `/etc/resolv.conf` (the host's DNS). */
  upstream?: string;
  /** Port of the readiness endpoint (`ready` plugin); omitted: none. */
  readyPort?: number;
}

/**
 * The tenant DNS server's configuration: authoritative for `cluster.local` from the records
 * file alone (re-read every 2 s when its serial changes; an unknown name is NXDOMAIN, never
 * the host's answer), reverse lookups refused with NXDOMAIN (the host's would name other
 * tenants' Services), every other name forwarded upstream.
 */
export function corefile(options: CorefileOptions): string {
  const port = options.port ?? TENANT_DNS_CONTAINER_PORT;
  return [
    `.:${port} {`,
    "    errors",
    ...(options.readyPort === undefined ? [] : [`    ready :${options.readyPort}`]),
    `    file ${options.recordsFile} ${TENANT_CLUSTER_DOMAIN} {`,
    "        reload 2s",
    "    }",
    "    template ANY ANY in-addr.arpa ip6.arpa {",
    "        rcode NXDOMAIN",
    "    }",
    `    forward . ${options.upstream ?? "/etc/resolv.conf"}`,
    "    cache 30",
    "}",
    "",
  ].join("\n");
}

/**
 * The service-link variables the kubelet would give a Pod in `namespace` from these
 * Services (`<NAME>_SERVICE_HOST`, `_SERVICE_PORT[_<PORT NAME>]`, `<NAME>_PORT[_<port>_<PROTO>[_PROTO|_PORT|_ADDR]]`),
 * with the host addresses the Pod can reach.
 */
export function serviceLinkVariables(services: readonly ServiceAddress[], namespace: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of services)
    if (s.namespace === namespace) Object.assign(out, linkVariables(s.name, s.clusterIP, s.ports));
  return out;
}

/** The kubelet's variables for one Service named `name` at `ip`; none when it has no port. */
export function linkVariables(name: string, ip: string, ports: readonly ServicePort[]): Record<string, string> {
  const first = ports[0];
  if (first === undefined) return {};
  const prefix = name.replace(/-/g, "_").toUpperCase();
  const out: Record<string, string> = {
    [`${prefix}_SERVICE_HOST`]: ip,
    [`${prefix}_SERVICE_PORT`]: String(first.port),
  };
  for (const p of ports) {
    if (p.name) out[`${prefix}_SERVICE_PORT_${p.name.replace(/-/g, "_").toUpperCase()}`] = String(p.port);
  }
  const hostPort = (port: number) => (ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`);
  ports.forEach((p, i) => {
    const protocol = (p.protocol ?? "TCP").toUpperCase();
    const url = `${protocol.toLowerCase()}://${hostPort(p.port)}`;
    if (i === 0) out[`${prefix}_PORT`] = url;
    const portPrefix = `${prefix}_PORT_${p.port}_${protocol}`;
    out[portPrefix] = url;
    out[`${portPrefix}_PROTO`] = protocol.toLowerCase();
    out[`${portPrefix}_PORT`] = String(p.port);
    out[`${portPrefix}_ADDR`] = ip;
  });
  return out;
}

/** True for a tenantplane object of `tenant` that is not a sync copy (its own Services, ConfigMaps, Secrets). */
export function isTenantplaneObject(metadata: { labels?: Record<string, string> | undefined }, tenant: string) {
  return isManaged(metadata) && metadata.labels?.[LABEL_TENANT] === labelValue(tenant);
}

function portsOf(spec: JsonObject): ServicePort[] {
  const ports = Array.isArray(spec["ports"]) ? spec["ports"] : [];
  const out: ServicePort[] = [];
  for (const p of ports) {
    if (!isJsonObject(p) || typeof p["port"] !== "number") continue;
    out.push({
      port: p["port"],
      ...(typeof p["name"] === "string" ? { name: p["name"] } : {}),
      ...(typeof p["protocol"] === "string" ? { protocol: p["protocol"] } : {}),
    });
  }
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
