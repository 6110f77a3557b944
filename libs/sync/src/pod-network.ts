import {
  hostNamespaceFor,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  labelValue,
  MANAGED_BY,
  reverseLookup,
} from "@tenantplane/mapping";
import { isJsonObject } from "./internal/json.js";
import type { HostObject } from "./kube-object.js";
import type { PlannedDecisionWithObject, PlannedTarget } from "./plan.js";
import { ISOLATION_MODE_FIELD } from "./placement.js";
import { serviceLinksConfigMapName, TENANT_CLUSTER_DOMAIN, type PodEnvironment } from "./pod-environment.js";
import { serviceDnsEntries, type ExplainedDnsEntry } from "./service-dns.js";
import {
  DNS_RECORDS_CONFIGMAP,
  DNS_RECORDS_KEY,
  dnsRecords,
  isTenantplaneObject,
  serviceAddresses,
  serviceLinkVariables,
  type ServiceAddress,
} from "./tenant-dns.js";

/** Label on the ConfigMaps {@link planPodNetwork} plans, naming which of the two they are. */
export const LABEL_POD_NETWORK = "tenantplane.io/pod-network";

/** Which of the tenant's network ConfigMaps one is. */
export type PodNetworkRole = "dns-records" | "service-links";

/** What the tenant's network ConfigMaps are derived from, all as plain JSON. */
export interface PodNetworkInput {
  tenant: string;
  /** Where host Pods reach the tenant API (its address is `kubernetes.default`). */
  environment: PodEnvironment;
  tenantServices: readonly unknown[];
  /** Tenant Pods: the endpoints of headless Services and their hostnames. */
  tenantPods: readonly unknown[];
  /** Host Services in `tp-<tenant>` (only this tenant's copies count). */
  hostServices: readonly unknown[];
  /** Host Pods in `tp-<tenant>` (only this tenant's copies count): their addresses and readiness. */
  hostPods: readonly unknown[];
  /** ConfigMaps in `tp-<tenant>`: those at the planned names and those labelled {@link LABEL_POD_NETWORK}. */
  hostConfigMaps: readonly unknown[];
  /** Every listing above is complete and current; otherwise no ConfigMap is planned for deletion. */
  complete: boolean;
  /**
   * TenantCluster spec.isolation.mode is Private: once the host holds no Pod copy of the
   * tenant (and every listing is complete), nothing on the host reads the zone or the service
   * links, and both are deleted; they come back with the first host Pod copy.
   */
  privateMode?: boolean | undefined;
  /**
   * The Service addresses and DNS entries, when the caller computed them already (in slices:
   * `serviceAddressesSliced`, `serviceDnsEntriesSliced`); computed here otherwise.
   */
  computed?: { services: ServiceAddress[]; entries: ExplainedDnsEntry[] } | undefined;
}

/** The tenant's network ConfigMaps: writes, and those already as desired. */
export interface PodNetworkPlan {
  /** Create, Update and Delete with the desired ConfigMap, and Skip where another object holds the name. */
  decisions: PlannedDecisionWithObject[];
  inSync: PlannedTarget[];
}

/**
 * Plans the ConfigMaps in `tp-<tenant>` that decide what the tenant's Pods reach by name:
 * the tenant DNS server's zone ({@link DNS_RECORDS_CONFIGMAP}: the tenant API as
 * `kubernetes.default`, each synced Service at its host copy's ClusterIP, headless Services
 * at their ready endpoints, Pods by hostname and subdomain, ExternalName Services as
 * CNAMEs) and, per virtual namespace with ClusterIP Services, the service-link variables
 * the kubelet would give its Pods. A write only where the content differs; service links of
 * a namespace left without such Services are deleted while the listings are complete. Each
 * decision names the tenant (`tenantRef {namespace: "", name: <tenant>}`) and says what the
 * content is. Pure: the sync worker applies it, explain-sync shows it.
 */
export function planPodNetwork(input: PodNetworkInput): PodNetworkPlan {
  const { tenant } = input;
  const namespace = hostNamespaceFor(tenant);
  if (input.privateMode === true && input.complete && !hasPodCopy(input.hostPods, tenant)) {
    return planPrivateRemoval(input);
  }
  const services = input.computed?.services ?? serviceAddresses(input.tenantServices, input.hostServices, tenant);
  const entries = input.computed?.entries ?? serviceDnsEntries(input);
  const desired: Array<{ name: string; role: PodNetworkRole; data: Record<string, string>; summary: string }> = [
    {
      name: DNS_RECORDS_CONFIGMAP,
      role: "dns-records",
      data: { [DNS_RECORDS_KEY]: dnsRecords(tenant, input.environment, services, entries) },
      summary: zoneSummary(input.environment.apiHost, services, entries),
    },
  ];
  for (const ns of [...new Set(services.map((s) => s.namespace))].sort()) {
    const own = services.filter((s) => s.namespace === ns).map((s) => `${s.name} ${s.clusterIP}`);
    desired.push({
      name: serviceLinksConfigMapName(ns),
      role: "service-links",
      data: serviceLinkVariables(services, ns),
      summary: `service links of tenant namespace ${ns} for its Pods' containers (${own.join(", ")}), read at container start as the kubelet reads its own`,
    });
  }

  const existing = new Map<string, ConfigMapView>();
  for (const value of input.hostConfigMaps) {
    const cm = viewOf(value, tenant);
    if (cm !== undefined) existing.set(cm.name, cm);
  }
  const target = (name: string): PlannedTarget => ({
    tenant,
    kind: "ConfigMap",
    tenantRef: { namespace: "", name: tenant },
    hostRef: { namespace, name },
    hashed: false,
  });
  const plan: PodNetworkPlan = { decisions: [], inSync: [] };
  const wanted = new Set(desired.map((d) => d.name));
  for (const record of desired) {
    const current = existing.get(record.name);
    const object: HostObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: record.name,
        namespace,
        labels: {
          [LABEL_MANAGED_BY]: MANAGED_BY,
          [LABEL_TENANT]: labelValue(tenant),
          [LABEL_POD_NETWORK]: record.role,
        },
        annotations: {},
      },
      data: record.data,
    };
    if (current === undefined) {
      plan.decisions.push({ ...target(record.name), action: "Create", reason: record.summary, object });
    } else if (!current.ours || current.role !== record.role) {
      plan.decisions.push({
        ...target(record.name),
        action: "Skip",
        reason: heldConfigMapReason(record.role),
      });
    } else if (sameData(current.data, record.data)) {
      plan.inSync.push(target(record.name));
    } else {
      plan.decisions.push({ ...target(record.name), action: "Update", reason: record.summary, object });
    }
  }
  if (input.complete) {
    for (const stale of existing.values()) {
      if (wanted.has(stale.name) || !stale.ours || stale.role !== "service-links") continue;
      const ns = stale.name.slice(serviceLinksConfigMapName("").length);
      plan.decisions.push({
        ...target(stale.name),
        action: "Delete",
        reason: `service links of tenant namespace ${ns}, which has no synced Service with a ClusterIP left`,
      });
    }
  }
  plan.decisions.sort((a, b) => compare(a.hostRef.name, b.hostRef.name));
  plan.inSync.sort((a, b) => compare(a.hostRef.name, b.hostRef.name));
  return plan;
}

/** Whether the host holds a Pod copy of one of `tenant`'s Pods. */
function hasPodCopy(hostPods: readonly unknown[], tenant: string): boolean {
  return hostPods.some((value) => {
    if (!isJsonObject(value) || !isJsonObject(value["metadata"])) return false;
    const metadata = value["metadata"] as { labels?: Record<string, string>; annotations?: Record<string, string> };
    const source = reverseLookup({ labels: metadata.labels, annotations: metadata.annotations });
    return source?.kind === "Pod" && source.tenant === labelValue(tenant);
  });
}

/** Private mode with no host Pod copy left: every pod network ConfigMap of the tenant goes. */
function planPrivateRemoval(input: PodNetworkInput): PodNetworkPlan {
  const { tenant } = input;
  const namespace = hostNamespaceFor(tenant);
  const plan: PodNetworkPlan = { decisions: [], inSync: [] };
  for (const value of input.hostConfigMaps) {
    const cm = viewOf(value, tenant);
    if (cm === undefined || !cm.ours || (cm.role !== "dns-records" && cm.role !== "service-links")) continue;
    const what =
      cm.role === "dns-records"
        ? `tenant DNS zone ${TENANT_CLUSTER_DOMAIN}`
        : `service links of tenant namespace ${cm.name.slice(serviceLinksConfigMapName("").length)}`;
    plan.decisions.push({
      tenant,
      kind: "ConfigMap",
      tenantRef: { namespace: "", name: tenant },
      hostRef: { namespace, name: cm.name },
      hashed: false,
      action: "Delete",
      reason: `${what}: ${PRIVATE_RECORDS_NOTE}`,
    });
  }
  plan.decisions.sort((a, b) => compare(a.hostRef.name, b.hostRef.name));
  return plan;
}

/** Why the pod network ConfigMaps go in Private mode. */
export const PRIVATE_RECORDS_NOTE = `${ISOLATION_MODE_FIELD} is Private and no host Pod copy of the tenant is left: only host Pods read it`;

/** Most names a reason lists; the rest are counted. */
const LISTED_NAMES = 40;

function zoneSummary(
  apiHost: string,
  services: ReturnType<typeof serviceAddresses>,
  entries: readonly ExplainedDnsEntry[],
): string {
  const names: string[] = [`kubernetes.default.svc.${TENANT_CLUSTER_DOMAIN} ${apiHost}`];
  for (const s of services) {
    if (s.namespace === "default" && s.name === "kubernetes") continue;
    names.push(`${s.name}.${s.namespace}.svc.${TENANT_CLUSTER_DOMAIN} ${s.clusterIP}`);
  }
  // A name with several records is listed once, with every value and why.
  const grouped = new Map<string, ExplainedDnsEntry[]>();
  for (const e of entries) {
    const list = grouped.get(e.name);
    if (list === undefined) grouped.set(e.name, [e]);
    else list.push(e);
  }
  for (const [name, list] of grouped) {
    const values = list.map((e) => (e.type === "CNAME" ? `CNAME ${e.value}` : e.value)).join(" ");
    const why = [...new Set(list.map((e) => e.why))].join("; ");
    names.push(`${name}.${TENANT_CLUSTER_DOMAIN} ${values} (${why})`);
  }
  const shown = names.slice(0, LISTED_NAMES).join(", ");
  const more = names.length > LISTED_NAMES ? `, and ${names.length - LISTED_NAMES} more` : "";
  return `tenant DNS zone ${TENANT_CLUSTER_DOMAIN} with ${names.length} names (${shown}${more}), nothing of another tenant`;
}

interface ConfigMapView {
  name: string;
  /** Managed by tenantplane for this tenant. */
  ours: boolean;
  role: string | undefined;
  data: Record<string, string>;
}

function viewOf(value: unknown, tenant: string): ConfigMapView | undefined {
  const namespace = hostNamespaceFor(tenant);
  if (!isJsonObject(value) || !isJsonObject(value["metadata"])) return undefined;
  if (value["kind"] !== undefined && value["kind"] !== "ConfigMap") return undefined;
  const metadata = value["metadata"] as { name?: unknown; namespace?: unknown; labels?: Record<string, string> };
  if (typeof metadata.name !== "string" || (metadata.namespace ?? namespace) !== namespace) return undefined;
  return {
    name: metadata.name,
    ours: isTenantplaneObject(metadata, tenant),
    role: metadata.labels?.[LABEL_POD_NETWORK],
    data: isJsonObject(value["data"]) ? (value["data"] as Record<string, string>) : {},
  };
}

function sameData(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => a[k] === b[k]);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The reason of the Skip for a pod network ConfigMap whose name another object holds. */
export function heldConfigMapReason(role: string): string {
  return `held by a ConfigMap that is not tenantplane's ${role} ConfigMap of this tenant: not written`;
}
