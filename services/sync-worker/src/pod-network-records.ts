import type { RawObject } from "@tenantplane/kube";
import { hostNamespaceFor, LABEL_MANAGED_BY, LABEL_TENANT, labelValue, MANAGED_BY } from "@tenantplane/mapping";
import type { PlannedDecision } from "@tenantplane/messaging";
import { describe as describeError, type Logger } from "@tenantplane/runtime";
import {
  DNS_RECORDS_CONFIGMAP,
  DNS_RECORDS_KEY,
  dnsRecords,
  recordsOf,
  serviceAddresses,
  serviceLinkVariables,
  serviceLinksConfigMapName,
  type HostObject,
  type PodEnvironment,
} from "@tenantplane/sync";
import type { HostWriter } from "./host-writer.js";

/** Label on the ConfigMaps this module writes, naming which of the two they are. */
export const LABEL_POD_NETWORK = "tenantplane.io/pod-network";
type Role = "dns-records" | "service-links";

/** One ConfigMap the tenant's Pods need, with why it holds what it holds. */
export interface DesiredRecord {
  name: string;
  role: Role;
  data: Record<string, string>;
  /** What the content is, for the Decision. */
  summary: string;
}

/**
 * The ConfigMaps a tenant's Pods read in `tp-<tenant>`: the tenant DNS server's zone (its
 * API and every Service by tenant name, at host addresses) and, per virtual namespace with
 * Services, the service-link variables the kubelet would give its Pods. Pure.
 */
export function desiredRecords(
  tenant: string,
  env: PodEnvironment,
  tenantServices: readonly unknown[],
  hostServices: readonly unknown[],
): DesiredRecord[] {
  const services = serviceAddresses(tenantServices, hostServices, tenant);
  const zone = dnsRecords(tenant, env, services);
  const names = [...recordsOf(zone)].map(([name, ip]) => `${name} ${ip}`);
  const out: DesiredRecord[] = [
    {
      name: DNS_RECORDS_CONFIGMAP,
      role: "dns-records",
      data: { [DNS_RECORDS_KEY]: zone },
      summary: `tenant DNS zone cluster.local with ${names.length} names (${names.join(", ")}), nothing of another tenant`,
    },
  ];
  for (const namespace of [...new Set(services.map((s) => s.namespace))].sort()) {
    const own = services.filter((s) => s.namespace === namespace).map((s) => `${s.name} ${s.clusterIP}`);
    out.push({
      name: serviceLinksConfigMapName(namespace),
      role: "service-links",
      data: serviceLinkVariables(services, namespace),
      summary: `service links of tenant namespace ${namespace} for its Pods' containers (${own.join(", ")}), read at container start as the kubelet reads its own`,
    });
  }
  return out;
}

/** What the writer reads and writes through. */
export interface PodNetworkDeps {
  tenant: string;
  writer: HostWriter;
  /** The pod environment now, or "unknown" while the tenant's API or DNS Service lacks an address. */
  environment(): PodEnvironment | "unknown";
  tenantServices(): RawObject[];
  hostServices(): RawObject[];
  /** This tenant's ConfigMaps in the host cache (label-selected: sync copies and tenantplane's own). */
  hostConfigMaps(): RawObject[];
  /** True while every listing the records come from is complete; otherwise nothing is deleted. */
  complete(): boolean;
  mayWrite(): boolean;
  writeToken(): Promise<void>;
  publish(decision: PlannedDecision): Promise<void>;
  logger: Logger;
}

/**
 * Keeps the tenant DNS zone and the per-namespace service links in step with the tenant's
 * Services and their host copies: debounced, one pass at a time, a write (and a Decision)
 * only where the content differs, and stale service links deleted only while the listings
 * are complete.
 */
export class PodNetworkRecords {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly deps: PodNetworkDeps,
    private readonly debounceMs = 200,
  ) {}

  /** Schedules a pass soon (changes arriving together make one pass). */
  schedule(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, this.debounceMs);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private run(): void {
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err: unknown) => {
        this.deps.logger.warn({ err: describeError(err) }, "pod network records not written; retrying");
        setTimeout(() => this.schedule(), 2_000).unref();
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
  }

  private async pass(): Promise<void> {
    const env = this.deps.environment();
    if (env === "unknown" || this.stopped) return;
    const { tenant } = this.deps;
    const desired = desiredRecords(tenant, env, this.deps.tenantServices(), this.deps.hostServices());
    const existing = new Map(
      this.deps
        .hostConfigMaps()
        .filter((cm) => cm.metadata.labels?.[LABEL_POD_NETWORK] !== undefined)
        .map((cm) => [cm.metadata.name, cm]),
    );
    const namespace = hostNamespaceFor(tenant);
    for (const record of desired) {
      const current = existing.get(record.name);
      existing.delete(record.name);
      const data = (current as { data?: Record<string, string> } | undefined)?.data ?? {};
      if (current !== undefined && sameData(data, record.data)) continue;
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
      await this.deps.writeToken();
      if (this.stopped || !this.deps.mayWrite()) return;
      let action: "Create" | "Update" = "Update";
      if (current === undefined) {
        const created = await this.deps.writer.create(object);
        if (created === "exists") {
          const found = await this.deps.writer.get("ConfigMap", namespace, record.name);
          if (found?.metadata.labels?.[LABEL_POD_NETWORK] !== record.role) {
            this.deps.logger.warn({ name: record.name }, "ConfigMap name held by another object; not written");
            continue;
          }
          await this.deps.writer.update(object, found);
        } else action = "Create";
      } else {
        await this.deps.writer.update(object, current);
      }
      await this.deps.publish({
        tenant,
        action,
        kind: "ConfigMap",
        tenantRef: { namespace: "", name: tenant },
        hostRef: { namespace, name: record.name },
        reason: record.summary,
      });
    }
    if (!this.deps.complete()) return;
    for (const stale of existing.values()) {
      if (stale.metadata.labels?.[LABEL_POD_NETWORK] !== "service-links") continue;
      await this.deps.writeToken();
      if (this.stopped || !this.deps.mayWrite()) return;
      if (await this.deps.writer.delete({ ...stale, kind: "ConfigMap" })) {
        await this.deps.publish({
          tenant,
          action: "Delete",
          kind: "ConfigMap",
          tenantRef: { namespace: "", name: tenant },
          hostRef: { namespace, name: stale.metadata.name },
          reason: "service links of a tenant namespace that has no Service left",
        });
      }
    }
  }
}

function sameData(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => a[k] === b[k]);
}
