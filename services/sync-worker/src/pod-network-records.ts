import type { RawObject } from "@tenantplane/kube";
import type { DecisionAction, PlannedDecision } from "@tenantplane/messaging";
import { describe as describeError, type Logger } from "@tenantplane/runtime";
import {
  LABEL_POD_NETWORK,
  heldConfigMapReason,
  isTenantplaneObject,
  planPodNetwork,
  serviceAddressesSliced,
  serviceDnsEntriesSliced,
  type HostObject,
  type PodEnvironment,
} from "@tenantplane/sync";
import type { HostWriter } from "./host-writer.js";
import { SkipMemory } from "./skip-memory.js";
import { TimeSlicer } from "./time-slice.js";

/** What the writer reads and writes through. */
export interface PodNetworkDeps {
  tenant: string;
  writer: HostWriter;
  /** The pod environment now, or "unknown" while the tenant's API or DNS Service lacks an address. */
  environment(): PodEnvironment | "unknown";
  tenantServices(): RawObject[];
  tenantPods(): RawObject[];
  hostServices(): RawObject[];
  hostPods(): RawObject[];
  /** This tenant's ConfigMaps in the host cache (label-selected: sync copies and tenantplane's own). */
  hostConfigMaps(): RawObject[];
  /** True while every listing the records come from is complete; otherwise nothing is deleted. */
  complete(): boolean;
  /** TenantCluster spec.isolation.mode is Private: the records go once no host Pod copy is left. */
  privateMode?: boolean | undefined;
  mayWrite(): boolean;
  writeToken(): Promise<void>;
  publish(decision: PlannedDecision): Promise<void>;
  logger: Logger;
}

/**
 * Applies the planner's tenant network ConfigMaps (the DNS zone and the per-namespace
 * service links, see `planPodNetwork`) as the tenant's Services, Pods and their host copies
 * change: debounced, one pass at a time, a write and a Decision only where the plan has one.
 *
 * Passes start at least `minIntervalMs` apart: every pass rewrites whole ConfigMaps, so while
 * Services keep arriving (a tenant applying hundreds) a pass per change would rewrite the zone
 * a few times a second, each with its Decision and Event. A lone change is still written after
 * `debounceMs`.
 */
export class PodNetworkRecords {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastStart = Number.NEGATIVE_INFINITY;
  private readonly skips = new SkipMemory();

  constructor(
    private readonly deps: PodNetworkDeps,
    private readonly debounceMs = 200,
    private readonly minIntervalMs = 2_000,
  ) {}

  /** Schedules a pass soon (changes arriving together make one pass). */
  schedule(): void {
    if (this.stopped || this.timer !== undefined) return;
    const delay = Math.max(this.debounceMs, this.lastStart + this.minIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, delay);
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
    this.lastStart = Date.now();
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
    const environment = this.deps.environment();
    if (environment === "unknown" || this.stopped) return;
    const { tenant } = this.deps;
    const hostConfigMaps = this.deps.hostConfigMaps();
    const input = {
      tenant,
      environment,
      tenantServices: this.deps.tenantServices(),
      tenantPods: this.deps.tenantPods(),
      hostServices: this.deps.hostServices(),
      hostPods: this.deps.hostPods(),
      hostConfigMaps,
      complete: this.deps.complete(),
      privateMode: this.deps.privateMode ?? false,
    };
    // Services x Pods of a big tenant take seconds: computed in slices, the loop served between them.
    const slicer = new TimeSlicer();
    const pause = () => slicer.yieldIfDue();
    const services = await serviceAddressesSliced(input.tenantServices, input.hostServices, tenant, pause);
    const entries = await serviceDnsEntriesSliced(input, pause);
    if (this.stopped) return;
    const plan = planPodNetwork({ ...input, computed: { services, entries } });
    const current = new Map(hostConfigMaps.map((cm) => [cm.metadata.name, cm]));
    for (const d of plan.decisions) {
      // The label-selected cache never holds another object, so the planner sees a held name as
      // free: the create finds out, and the Skip is published then (below).
      if (d.action === "Skip") continue;
      await this.deps.writeToken();
      if (this.stopped || !this.deps.mayWrite()) return;
      const existing = current.get(d.hostRef.name);
      let action: DecisionAction = d.action;
      let reason = d.reason;
      if (d.action === "Delete") {
        if (existing === undefined || !(await this.deps.writer.delete({ ...existing, kind: "ConfigMap" }))) continue;
      } else {
        const outcome = await this.write(d.object as HostObject, existing);
        if (outcome === "gone") continue;
        if (outcome === "written") {
          this.skips.forget(d.hostRef.name);
        } else {
          const held = outcome;
          // Once per change of the holder, not on every pass.
          const role = (d.object as HostObject).metadata.labels?.[LABEL_POD_NETWORK] ?? "pod network";
          reason = heldConfigMapReason(role);
          if (!this.skips.shouldPublish(d.hostRef.name, held.metadata.resourceVersion ?? "", reason)) continue;
          action = "Skip";
          this.deps.logger.warn({ name: d.hostRef.name }, "ConfigMap name held by another object; not written");
        }
      }
      await this.deps.publish({
        tenant,
        action,
        kind: d.kind,
        tenantRef: d.tenantRef,
        hostRef: d.hostRef,
        reason,
      });
    }
  }

  /**
   * Creates or updates one ConfigMap. Returns "written", "gone" when a held name was freed
   * between the create and the read (the next pass creates it), or the object that holds its
   * name when that is not this tenant's ConfigMap of the same role (nothing is written then).
   */
  private async write(object: HostObject, existing: RawObject | undefined): Promise<"written" | "gone" | RawObject> {
    const { writer } = this.deps;
    if (existing !== undefined) {
      await writer.update(object, existing);
      return "written";
    }
    if ((await writer.create(object)) !== "exists") return "written";
    const found = await writer.get("ConfigMap", object.metadata.namespace, object.metadata.name);
    if (found === undefined) return "gone";
    const role = object.metadata.labels?.[LABEL_POD_NETWORK];
    // As the planner judges ownership, so the write and the prediction agree.
    if (!isTenantplaneObject(found.metadata, this.deps.tenant) || found.metadata.labels?.[LABEL_POD_NETWORK] !== role)
      return found;
    await writer.update(object, found);
    return "written";
  }
}
