import { ApiError, resourcePath, type JsonClient, type ListWatch, type RawObject } from "@tenantplane/kube";
import {
  hostName,
  hostNamespaceFor,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  labelValue,
  MANAGED_BY,
} from "@tenantplane/mapping";
import { backoffDelay, describe, httpStatusOf, normalizeError, type Logger } from "@tenantplane/runtime";
import { sourceOfCopy } from "../key-plan.js";
import { decodeKey, encodeKey } from "../source-key.js";
import type { SharedWatches } from "../shared-watches.js";
import type { HostNodes } from "./host-nodes.js";
import type { BackSyncMetrics } from "./metrics.js";
import { OWN_WRITE_MEMORY_MS, OwnWrites } from "../own-writes.js";
import { openTenantNodes } from "../tenant-nodes.js";
import { LABEL_VIRTUAL_NODE, planNodes, virtualNode, type NodeLike } from "./nodes.js";
import { Pacer } from "./pacer.js";
import { SharedWrites } from "./shared-writes.js";
import { asBound, isTerminal, planPod, schedulingProblem, type PodLike } from "./pods.js";
import { LABEL_VIRTUAL_VOLUME, orphanedVolumes, planClaim, virtualVolumeName, type VolumeObject } from "./pvcs.js";
import { QuotaMirror } from "./quota-mirror.js";
import { serviceStatusPatch } from "./services.js";
import { REASON_FAILED_SCHEDULING, type TenantEvents } from "../tenant-events.js";

/** Kinds whose host state flows back to the tenant. */
export const BACK_SYNC_KINDS = ["Pod", "Service", "PersistentVolumeClaim"] as const;

const PLURAL: Record<string, string> = {
  Pod: "pods",
  Service: "services",
  PersistentVolumeClaim: "persistentvolumeclaims",
};
const NODES_KEY = "nodes";
const VOLUMES_KEY = "volumes";
const QUOTA_KEY = "quota";
const KEY_KINDS: Record<string, string> = {
  [NODES_KEY]: "Node",
  [VOLUMES_KEY]: "PersistentVolume",
  [QUOTA_KEY]: "ConfigMap",
};
const MERGE = "application/merge-patch+json";
/** Virtual node heartbeat: well inside the 40-50 s a node controller waits before calling a node unreachable. */
const NODE_LEASE_SECONDS = 40;
/**
 * Node passes start at most this often. A pass reads every Pod of the tenant on both sides,
 * and any Pod change asked for one: a burst of N Pods cost N passes of 2N Pods each.
 */
const NODE_PASS_INTERVAL_MS = 1_000;

/** What one tenant's back-sync is given. */
export interface BackSyncDeps {
  tenant: string;
  /** Kinds the tenant's SyncPolicy carries to the host; only their status flows back. */
  kinds: ReadonlySet<string>;
  /** The tenant API, with the tenant admin's rights. */
  tenantClient: JsonClient;
  hostClient: JsonClient;
  /** The tenant's watches, shared with its forward syncer. */
  watches: SharedWatches;
  hostNodes: HostNodes;
  logger: Logger;
  metrics: BackSyncMetrics;
  /** False once this worker's lease on the tenant's partition is lost or fenced: no write may start. */
  mayWrite(): boolean;
  /** Called when the count of failing keys changes; the caller writes status. */
  onStatus(): void;
  /** Warning Events on the tenant's own objects, in its API. */
  events: TenantEvents;
  /** Why the host refused the copy of a source key (encoded), while a published Fail stands. */
  syncFailure?(key: string): string | undefined;
  /** Keys worked on at once (default 4). */
  concurrency?: number;
  /** Virtual node Lease renewal interval (default 10 s). */
  heartbeatMs?: number;
}

/**
 * Host → tenant for one tenant: watches the host copies (and the host nodes they run on)
 * and writes what the host knows back into the tenant API: Pod binding and status,
 * virtual Nodes with their Leases, Service load-balancer status, claim binding with a
 * virtual PersistentVolume. Each key is planned by a pure function and written with the
 * tenant admin's rights; failures are counted, retried with backoff and reported through
 * {@link failed}. No Decision is published: nothing on the host changes.
 */
export class BackSync {
  private readonly tenantWatches = new Map<string, ListWatch>();
  private readonly hostWatches = new Map<string, ListWatch>();
  private tenantNodes!: ListWatch;
  /** Every tenant Node (name and labels): Pods bound to the tenant's own nodes are left alone. */
  private allNodes: ListWatch | undefined;
  private tenantVolumes: ListWatch | undefined;
  private quota: QuotaMirror | undefined;
  /** Last state of host copies that vanished, until their tenant Pod has been planned. */
  private readonly lastHost = new Map<string, RawObject>();
  /** The host scheduler's message last told to each tenant Pod, so it is told once per change. */
  private readonly unschedulable = new Map<string, string>();
  /**
   * Bindings this worker made that the tenant cache may not show yet, by key: a host copy's
   * next change (it runs) comes before the tenant watch reports the binding as often as not,
   * and planning from the cache alone bound the Pod again for a 409 (27 of 87 bindings in a
   * 60-Pod run).
   */
  private readonly bound = new Map<string, { uid: string; node: string }>();
  /**
   * Tenant Pods as this worker's status writes left them, until the tenant cache shows them:
   * the host copy's next change came before the watch event as often as not, and planning from
   * the cache alone patched the same status again (70 status writes for 60 Pods).
   */
  private readonly written = new OwnWrites();
  /**
   * Virtual Node creates, one per node until the tenant Node cache shows it: the Pods first
   * bound to a new node (several at once) and the node pass share it (four creates for one node
   * in a six-Pod run before, each holding its Pod's binding).
   */
  private readonly nodeCreates = new SharedWrites(OWN_WRITE_MEMORY_MS);
  /** Virtual Nodes first used by a Pod are made by its binding at once; the pass keeps status and deletes unused ones. */
  private readonly nodePasses = new Pacer(() => this.enqueue(NODES_KEY), NODE_PASS_INTERVAL_MS);
  private readonly pending = new Map<string, number>();
  private readonly inFlight = new Set<string>();
  private readonly failures = new Map<string, string>();
  private readonly attempts = new Map<string, number>();
  private running = 0;
  private started = false;
  private stopped = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly hostNs: string;

  constructor(private readonly deps: BackSyncDeps) {
    this.hostNs = hostNamespaceFor(deps.tenant);
  }

  /** Starts the watches; work begins once every one has listed. */
  start(): void {
    const { tenant, logger } = this.deps;
    const selector = `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_TENANT}=${labelValue(tenant)}`;
    for (const kind of BACK_SYNC_KINDS) {
      if (!this.deps.kinds.has(kind)) continue;
      const plural = PLURAL[kind]!;
      this.tenantWatches.set(
        kind,
        this.deps.watches.open({
          client: this.deps.tenantClient,
          path: resourcePath("v1", plural),
          apiVersion: "v1",
          kind,
          logger: logger.child({ side: "tenant", kind, direction: "back" }),
          onEvent: (e) => {
            this.enqueue(encodeKey(keyOf(e.object)));
            if (kind === "Pod" && (e.type === "delete" || isTerminal(e.object as PodLike))) this.nodePasses.changed();
            if (kind === "PersistentVolumeClaim" && e.type === "delete") this.enqueue(VOLUMES_KEY);
          },
        }),
      );
      this.hostWatches.set(
        kind,
        this.deps.watches.open({
          client: this.deps.hostClient,
          path: resourcePath("v1", plural, this.hostNs),
          apiVersion: "v1",
          kind,
          labelSelector: selector,
          logger: logger.child({ side: "host", kind, direction: "back" }),
          onEvent: (e) => {
            const key = sourceOfCopy(e.object, tenant);
            if (key === undefined) return;
            const text = encodeKey(key);
            if (e.type === "delete") this.lastHost.set(text, e.object);
            this.enqueue(text);
            if (kind === "Pod" && (e.type !== "update" || (e.object as PodLike).spec?.nodeName))
              this.nodePasses.changed();
          },
        }),
      );
    }
    this.tenantNodes = this.deps.watches.open({
      client: this.deps.tenantClient,
      path: "/api/v1/nodes",
      apiVersion: "v1",
      kind: "Node",
      labelSelector: `${LABEL_VIRTUAL_NODE}=true`,
      logger: logger.child({ side: "tenant", kind: "Node", direction: "back" }),
      onEvent: (e) => {
        // The cache speaks for the node from here on (a deleted one is made again when needed).
        this.nodeCreates.seen(e.object.metadata.name);
        this.nodePasses.changed();
      },
    });
    if (this.deps.kinds.has("Pod")) {
      this.allNodes = openTenantNodes(this.deps.watches, this.deps.tenantClient, logger, (e) => {
        // A Pod whose node joined (or left) the tenant's API is judged again.
        if (!this.started) return;
        for (const pod of this.tenantWatches.get("Pod")?.list() ?? []) {
          if ((pod as PodLike).spec?.nodeName === e.object.metadata.name) this.enqueue(encodeKey(keyOf(pod)));
        }
      });
    }
    if (this.deps.kinds.has("PersistentVolumeClaim")) {
      this.tenantVolumes = this.deps.watches.open({
        client: this.deps.tenantClient,
        path: "/api/v1/persistentvolumes",
        apiVersion: "v1",
        kind: "PersistentVolume",
        labelSelector: `${LABEL_VIRTUAL_VOLUME}=true`,
        logger: logger.child({ side: "tenant", kind: "PersistentVolume", direction: "back" }),
        onEvent: (e) => {
          const ref = (e.object["spec"] as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
          if (ref?.name !== undefined) {
            this.enqueue(
              encodeKey({ kind: "PersistentVolumeClaim", namespace: ref.namespace ?? "default", name: ref.name }),
            );
          }
        },
      });
    }
    this.quota = new QuotaMirror({
      ...this.deps,
      onChange: () => this.enqueue(QUOTA_KEY),
      count: (k, a) => this.count(k, a),
    });
    this.unsubscribe = this.deps.hostNodes.subscribe(() => this.nodePasses.changed());
    this.heartbeat = setInterval(() => void this.renewNodeLeases(), this.deps.heartbeatMs ?? 10_000);
    this.heartbeat.unref();
    void this.firstPass();
  }

  /** Stops at once: no write starts after this, watches close. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.heartbeat);
    this.nodePasses.stop();
    this.unsubscribe?.();
    for (const w of [
      ...this.tenantWatches.values(),
      ...this.hostWatches.values(),
      this.tenantNodes,
      this.tenantVolumes,
      this.allNodes,
    ]) {
      w?.stop();
    }
    this.quota?.stop();
  }

  /** Looks at one source key (encoded) again: its sync failure began, changed or ended. */
  poke(key: string): void {
    this.enqueue(key);
  }

  /** Keys whose last back-sync failed (each is being retried). */
  failed(): number {
    return this.failures.size;
  }

  /** Queues every key: the safety net beside the watches. */
  fullPass(): void {
    if (!this.started || this.stopped) return;
    this.written.prune(Date.now());
    for (const w of this.tenantWatches.values()) for (const obj of w.list()) this.enqueue(encodeKey(keyOf(obj)));
    this.enqueue(NODES_KEY);
    this.enqueue(QUOTA_KEY);
    if (this.tenantVolumes !== undefined) this.enqueue(VOLUMES_KEY);
  }

  private async firstPass(): Promise<void> {
    const watches = [...this.tenantWatches.values(), ...this.hostWatches.values(), this.tenantNodes];
    if (this.tenantVolumes !== undefined) watches.push(this.tenantVolumes);
    if (this.allNodes !== undefined) watches.push(this.allNodes);
    await Promise.all([...watches.map((w) => w.synced), this.deps.hostNodes.synced, this.quota?.start()]);
    if (this.stopped) return;
    this.started = true;
    this.fullPass();
    this.pump();
  }

  private enqueue(key: string, since = Date.now()): void {
    if (this.stopped) return;
    if (!this.pending.has(key)) this.pending.set(key, since);
    this.pump();
  }

  private pump(): void {
    if (!this.started || this.stopped) return;
    const limit = this.deps.concurrency ?? 4;
    for (const [key, since] of this.pending) {
      if (this.running >= limit) return;
      if (this.inFlight.has(key)) continue;
      this.pending.delete(key);
      this.inFlight.add(key);
      this.running++;
      void this.run(key, since).finally(() => {
        this.inFlight.delete(key);
        this.running--;
        this.pump();
      });
    }
  }

  private async run(key: string, since: number): Promise<void> {
    if (!this.deps.mayWrite()) return;
    const kind = KEY_KINDS[key] ?? decodeKey(key).kind;
    try {
      if (key === NODES_KEY) await this.syncNodes();
      else if (key === VOLUMES_KEY) await this.collectVolumes();
      else if (key === QUOTA_KEY) await this.quota?.sync();
      else await this.syncKey(key, since);
      this.attempts.delete(key);
      if (this.failures.delete(key)) this.deps.onStatus();
    } catch (err) {
      const e = normalizeError(err);
      const attempt = this.attempts.get(key) ?? 0;
      this.attempts.set(key, attempt + 1);
      const first = !this.failures.has(key);
      this.failures.set(key, e.message);
      this.deps.metrics.failures.inc({ kind });
      const retryMs = e.retryAfterMs ?? backoffDelay(attempt, 500, 60_000);
      this.deps.logger.warn({ key, err: e.message, code: e.code, retryMs }, "back-sync of one object failed");
      setTimeout(() => this.enqueue(key, since), retryMs).unref();
      if (first) this.deps.onStatus();
    }
  }

  private async syncKey(text: string, since: number): Promise<void> {
    const key = decodeKey(text);
    const tenantObj = this.tenantWatches.get(key.kind)?.get(key.namespace, key.name);
    const hostWatch = this.hostWatches.get(key.kind);
    if (tenantObj === undefined || hostWatch === undefined) {
      this.lastHost.delete(text);
      this.unschedulable.delete(text);
      this.bound.delete(text);
      this.written.forget(text);
      return;
    }
    const target = hostName({ tenant: this.deps.tenant, namespace: key.namespace, name: key.name }).name;
    const candidate = hostWatch.get(this.hostNs, target);
    const source = candidate && sourceOfCopy(candidate, this.deps.tenant);
    const host = source !== undefined && encodeKey(source) === text ? candidate : undefined;
    if (key.kind === "Pod") await this.syncPod(text, tenantObj as PodLike, host as PodLike | undefined, since);
    else if (key.kind === "Service") await this.syncService(tenantObj, host, since);
    else await this.syncClaim(tenantObj as VolumeObject, host as VolumeObject | undefined, since);
  }

  /**
   * The tenant Pod as the cache shows it, bound to the node this worker bound it to while the
   * cache has not caught up; the memory goes once the cache shows a node or another Pod.
   */
  private withOwnBinding(text: string, pod: PodLike): PodLike {
    const made = this.bound.get(text);
    if (made === undefined) return pod;
    if (made.uid !== pod.metadata.uid || (pod.spec?.nodeName ?? "") !== "") {
      this.bound.delete(text);
      return pod;
    }
    return asBound(pod, made.node);
  }

  /** The Pod is bound to a tenant Node that is not a virtual node (one joined to the tenant's API). */
  private onOwnNode(pod: PodLike): boolean {
    const node = pod.spec?.nodeName;
    if (node === undefined || node === "") return false;
    const found = this.allNodes?.get(undefined, node);
    return found !== undefined && found.metadata.labels?.[LABEL_VIRTUAL_NODE] !== "true";
  }

  private async syncPod(text: string, cached: PodLike, host: PodLike | undefined, since: number): Promise<void> {
    const pod = this.withOwnBinding(
      text,
      (this.written.view(text, cached as RawObject, Date.now()) ?? cached) as PodLike,
    );
    const steps = planPod({
      tenant: pod,
      host,
      lastHost: this.lastHost.get(text) as PodLike | undefined,
      hostListed: this.hostWatches.get("Pod")?.current() ?? false,
      syncFailure: this.deps.syncFailure?.(text),
      onOwnNode: this.onOwnNode(pod),
    });
    const ns = pod.metadata.namespace ?? "default";
    const path = resourcePath("v1", "pods", ns, pod.metadata.name);
    for (const step of steps) {
      if (this.stopped || !this.deps.mayWrite()) return;
      if (step.action === "Bind") {
        await this.ensureNode(step.node);
        await this.tenant("POST", `${path}/binding`, {
          apiVersion: "v1",
          kind: "Binding",
          metadata: { name: pod.metadata.name, namespace: ns, uid: pod.metadata.uid },
          target: { apiVersion: "v1", kind: "Node", name: step.node },
          // A bind the cache has not shown yet: the Pod is bound, which is what was wanted.
        }).catch(ignore(409));
        if (pod.metadata.uid !== undefined) this.bound.set(text, { uid: pod.metadata.uid, node: step.node });
        this.count("Pod", "bind");
      } else if (step.action === "Status") {
        const patched = (await this.tenant(
          "PATCH",
          `${path}/status`,
          { metadata: { uid: pod.metadata.uid }, status: step.patch },
          MERGE,
        )) as RawObject | undefined;
        if (patched?.metadata !== undefined) this.written.remember(text, patched, Date.now());
        this.count("Pod", step.patch["phase"] === "Failed" && host === undefined ? "fail" : "status");
        this.deps.metrics.latency.observe({ kind: "Pod" }, (Date.now() - since) / 1000);
      } else {
        await this.tenant("DELETE", path, {
          apiVersion: "v1",
          kind: "DeleteOptions",
          gracePeriodSeconds: 0,
          preconditions: { uid: pod.metadata.uid },
        }).catch(ignore(404));
        this.count("Pod", "delete");
        this.deps.logger.debug({ pod: `${ns}/${pod.metadata.name}`, why: step.reason }, "tenant pod deletion finished");
      }
    }
    // Written (or nothing to write): the vanished copy's last state has served its purpose.
    this.lastHost.delete(text);
    if (steps.length > 0) this.nodePasses.changed();
    this.tellUnschedulable(text, pod, host);
  }

  // The condition is mirrored with the status; the Event is what `kubectl describe` and
  // `kubectl get events` show, once per message as a scheduler tells it.
  private tellUnschedulable(text: string, pod: PodLike, host: PodLike | undefined): void {
    const problem = schedulingProblem(host);
    if (problem === undefined || problem.message === "") {
      this.unschedulable.delete(text);
      return;
    }
    if (this.unschedulable.get(text) === problem.message) return;
    this.unschedulable.set(text, problem.message);
    void this.deps.events.warn(
      { kind: "Pod", namespace: pod.metadata.namespace ?? "default", name: pod.metadata.name, uid: pod.metadata.uid },
      REASON_FAILED_SCHEDULING,
      `the host scheduler cannot place this Pod's copy: ${problem.message}`,
    );
  }

  private async syncService(svc: RawObject, host: RawObject | undefined, since: number): Promise<void> {
    if (host === undefined) return;
    const patch = serviceStatusPatch(svc, host);
    if (patch === undefined || !this.deps.mayWrite()) return;
    const path = resourcePath("v1", "services", svc.metadata.namespace, svc.metadata.name);
    await this.tenant("PATCH", `${path}/status`, { metadata: { uid: svc.metadata.uid }, status: patch }, MERGE);
    this.count("Service", "status");
    this.deps.metrics.latency.observe({ kind: "Service" }, (Date.now() - since) / 1000);
  }

  private async syncClaim(claim: VolumeObject, host: VolumeObject | undefined, since: number): Promise<void> {
    const volume = this.tenantVolumes?.get(undefined, virtualVolumeName(claim)) as VolumeObject | undefined;
    const steps = planClaim({ tenant: claim, host, volume });
    const path = resourcePath("v1", "persistentvolumeclaims", claim.metadata.namespace, claim.metadata.name);
    for (const step of steps) {
      if (this.stopped || !this.deps.mayWrite()) return;
      if (step.action === "CreateVolume") {
        await this.tenant("POST", "/api/v1/persistentvolumes", step.volume).catch(ignore(409));
        this.count("PersistentVolume", "create");
      } else if (step.action === "VolumeStatus") {
        await this.tenant(
          "PATCH",
          `/api/v1/persistentvolumes/${encodeURIComponent(step.name)}/status`,
          { status: { phase: step.phase } },
          MERGE,
        );
        this.count("PersistentVolume", "status");
      } else if (step.action === "BindClaim") {
        await this.tenant(
          "PATCH",
          path,
          {
            metadata: { uid: claim.metadata.uid, annotations: { "pv.kubernetes.io/bind-completed": "yes" } },
            spec: { volumeName: step.volumeName },
          },
          MERGE,
        );
        this.count("PersistentVolumeClaim", "bind");
      } else {
        await this.tenant(
          "PATCH",
          `${path}/status`,
          { metadata: { uid: claim.metadata.uid }, status: step.patch },
          MERGE,
        );
        this.count("PersistentVolumeClaim", "status");
        this.deps.metrics.latency.observe({ kind: "PersistentVolumeClaim" }, (Date.now() - since) / 1000);
      }
    }
  }

  /** Creates, updates and deletes virtual Nodes so that exactly the nodes in use exist. */
  private async syncNodes(): Promise<void> {
    const plan = planNodes({
      hostNode: (name) => this.deps.hostNodes.get(name) as NodeLike | undefined,
      tenantNodes: this.tenantNodes.list() as NodeLike[],
      tenantPods: (this.tenantWatches.get("Pod")?.list() ?? []) as PodLike[],
      // Only sync copies: the tenant's own control-plane pod shares the namespace and labels.
      hostPods: (this.hostWatches.get("Pod")?.list() ?? []).filter(
        (p) => sourceOfCopy(p, this.deps.tenant) !== undefined,
      ) as PodLike[],
    });
    const listed =
      this.tenantNodes.current() &&
      (this.tenantWatches.get("Pod")?.current() ?? true) &&
      (this.hostWatches.get("Pod")?.current() ?? true);
    for (const node of plan.create) await this.createNode(node);
    for (const { name, status } of plan.updateStatus) {
      if (!this.deps.mayWrite()) return;
      await this.tenant("PATCH", `/api/v1/nodes/${encodeURIComponent(name)}/status`, { status }, MERGE);
      this.count("Node", "status");
    }
    // Deletes trust only complete listings: a Pod missing from a stale cache must not take its node.
    if (!listed) return;
    for (const node of plan.delete) {
      if (!this.deps.mayWrite()) return;
      await this.tenant("DELETE", `/api/v1/nodes/${encodeURIComponent(node.metadata.name)}`, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: node.metadata.uid },
      }).catch(ignore(404, 409));
      await this.tenant("DELETE", leasePath(node.metadata.name)).catch(ignore(404));
      this.count("Node", "delete");
    }
  }

  private async ensureNode(name: string): Promise<void> {
    if (this.tenantNodes.get(undefined, name) !== undefined) return;
    const host = this.deps.hostNodes.get(name);
    await this.createNode(virtualNode((host ?? { metadata: { name } }) as NodeLike));
  }

  /** Creates the virtual Node once, however many callers ask for it before the tenant cache shows it. */
  private createNode(node: NodeLike): Promise<void> {
    if (!this.deps.mayWrite()) return Promise.resolve();
    return this.nodeCreates.run(node.metadata.name, () => this.sendNode(node));
  }

  private async sendNode(node: NodeLike): Promise<void> {
    // Nodes keep the status sent on create, as a kubelet registering itself relies on.
    const created = await this.tenant("POST", "/api/v1/nodes", node).then(
      () => true,
      (err: unknown) => {
        if (httpStatusOf(err) === 409) return false;
        throw err;
      },
    );
    if (!created) return;
    this.count("Node", "create");
    // Not awaited: a binding needs the Node, not its Lease, and the node controller waits a
    // grace period for the first heartbeat. The heartbeat retries a Lease that cannot be written
    // yet (a tenant API still making kube-node-lease).
    void this.renewLease(node.metadata.name).catch((err: unknown) =>
      this.deps.logger.debug({ node: node.metadata.name, err: describe(err) }, "virtual node lease not created yet"),
    );
  }

  /** Renews each virtual Node's Lease, as a kubelet heartbeats, so the tenant's node controller keeps it Ready. */
  private async renewNodeLeases(): Promise<void> {
    if (!this.started || this.stopped || !this.deps.mayWrite()) return;
    for (const node of this.tenantNodes.list()) {
      const ready = (node["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
      // A virtual Node whose host node is not Ready gets no heartbeat: the tenant sees the same.
      if (ready?.find((c) => c.type === "Ready")?.status !== "True") continue;
      await this.renewLease(node.metadata.name).catch((err: unknown) =>
        this.deps.logger.debug({ node: node.metadata.name, err: describe(err) }, "virtual node lease not renewed"),
      );
    }
    this.nodePasses.changed();
  }

  private async renewLease(node: string): Promise<void> {
    const renewTime = microTime(new Date());
    try {
      await this.tenant("PATCH", leasePath(node), { spec: { renewTime } }, MERGE);
    } catch (err) {
      if (httpStatusOf(err) !== 404) throw err;
      await this.tenant("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: node, namespace: "kube-node-lease", labels: { [LABEL_MANAGED_BY]: MANAGED_BY } },
        spec: { holderIdentity: node, leaseDurationSeconds: NODE_LEASE_SECONDS, renewTime },
      }).catch(ignore(409));
    }
    this.count("Lease", "renew");
  }

  private async collectVolumes(): Promise<void> {
    const watch = this.tenantVolumes;
    const claims = this.tenantWatches.get("PersistentVolumeClaim");
    if (watch === undefined || claims === undefined || !watch.current() || !claims.current()) return;
    for (const volume of orphanedVolumes(watch.list() as VolumeObject[], claims.list() as VolumeObject[])) {
      if (!this.deps.mayWrite()) return;
      await this.tenant("DELETE", `/api/v1/persistentvolumes/${encodeURIComponent(volume.metadata.name)}`, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: volume.metadata.uid },
      }).catch(ignore(404, 409));
      this.count("PersistentVolume", "delete");
    }
  }

  private tenant(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
    return this.deps.tenantClient.request(method, path, {
      ...(body === undefined ? {} : { body }),
      ...(contentType === undefined ? {} : { contentType }),
    });
  }

  private count(kind: string, action: string): void {
    this.deps.metrics.writes.inc({ kind, action });
  }
}

function keyOf(obj: RawObject) {
  return { kind: obj.kind ?? "", namespace: obj.metadata.namespace ?? "default", name: obj.metadata.name };
}

function leasePath(node: string): string {
  return `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${encodeURIComponent(node)}`;
}

/** A Lease's MicroTime: RFC 3339 with microseconds. */
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function ignore(...codes: number[]) {
  return (err: unknown) => {
    if (err instanceof ApiError && codes.includes(err.code)) return undefined;
    throw err;
  };
}
