import { SYNC_KINDS, type SyncPolicySpec, TENANT_NAME_MESSAGE, isValidTenantName } from "@tenantplane/api";
import {
  hostName,
  hostNamespaceFor,
  isManaged,
  LABEL_KIND,
  LABEL_TENANT,
  labelValue,
  reverseLookup,
  type SourceIdentity,
  type VirtualIdentity,
} from "@tenantplane/mapping";
import type { ObjectRef, PlannedDecision } from "@tenantplane/messaging";
import { hostRulesReason } from "./check-host-rules.js";
import { defaultHostRules, type HostRules, withPlacement } from "./host-rules.js";
import {
  ANNOTATION_PLACEMENT,
  ISOLATION_MODE_FIELD,
  parsePlacement,
  samePlacement,
  SHARED_PLACEMENT,
} from "./placement.js";
import { keepStoredClaimClasses, storedClaimClasses, type StoredClaimClasses } from "./internal/claim-rules.js";
import { isJsonObject, type JsonObject } from "./internal/json.js";
import { boundedReason, describeViolations } from "./internal/violation.js";
import { DEFAULT_NAMESPACE, type HostObject, HostObjectEnvelopeSchema, parseTenantObject } from "./kube-object.js";
import { nativeObjectReason, systemNamespaceReason } from "./system-objects.js";
import { runSteps } from "./content-hash.js";
import { recordedContentHash, type Reference, type Translation, translateSteps } from "./transform.js";
import {
  placeholderPodEnvironment,
  podEnvironmentFrom,
  unknownPodEnvironmentReason,
  type PodEnvironment,
  type PodEnvironmentInput,
} from "./pod-environment.js";

/** What the planner compares: one tenant's objects, the host namespace's objects, and the policy. */
export interface PlanInput {
  tenant: string;
  policy: SyncPolicySpec;
  /** Tenant objects as plain JSON, each with its `kind` set; reasons cite them as `item N`, counting from 1. */
  tenantObjects: readonly unknown[];
  /** Objects in the tenant's host namespace, each with `kind` set (API list items omit it). */
  hostObjects: readonly unknown[];
  /**
   * Kinds whose listings are complete and current: garbage collection (Delete of sync
   * copies nobody claims) runs only for these, so a failed or partial list never deletes.
   * For a policy kind both the tenant and the host listing must be complete; a kind the
   * policy no longer syncs needs only its host listing, and its copies are deleted with a
   * reason naming the policy change. Absent: every policy kind, and no other (offline use).
   */
  completeKinds?: readonly string[] | undefined;
  /** What the tenant's objects may do to the host, from its IsolationProfile; absent: the default profile's rules. */
  rules?: HostRules | undefined;
  /**
   * Per-installation secret keying the content hash (HMAC-SHA256), so the hash on a host
   * copy reveals nothing about Secret values. Absent: an unkeyed hash (offline use only).
   */
  hashKey?: string | undefined;
  /**
   * Remembers what each tenant object (by reference) parsed and translated to, so a caller
   * that plans the same unchanged objects again (a cache of API objects) translates each
   * version once. See {@link PlanMemo}.
   */
  memo?: PlanMemo | undefined;
  /**
   * Where host Pods reach the tenant's API and DNS. Absent: read from the host objects
   * (the tenant's `k3s` and `tenant-dns` Services), else placeholders (offline). `"unknown"`:
   * Pods are held back with a Skip until the caller knows both addresses.
   */
  podEnvironment?: PodEnvironmentInput;
  /**
   * Names of the tenant's own Nodes: Nodes in its API without the virtual-node label, joined
   * to it by the tenant (Private mode). A Pod bound to one runs there, scheduled by the
   * tenant's own scheduler, and is never copied to the host. Absent: none known.
   */
  privateNodes?: ReadonlySet<string> | undefined;
}

/** What reading and translating one tenant object gave, before any host object is looked at. */
type SourceWork =
  | { type: "malformed"; problem: string }
  | { type: "ignored"; reason: string }
  | { type: "refused"; reason: string }
  | { type: "held" }
  | { type: "untranslatable"; message: string }
  | { type: "translated"; translation: Translation };

/**
 * Per-object results of the expensive, host-independent part of planning (parsing,
 * host-rule checks, translation and content hash), keyed by object identity: callers must
 * never mutate an object after planning it, nor the desired objects in the answers. Valid
 * for one tenant, rules object and hash key; asked with others, it forgets everything.
 */
export class PlanMemo {
  private entries: MemoEntries = new MemoEntries();
  private context:
    | { tenant: string; rules: HostRules; hashKey: string | undefined; pods: string; kinds: string }
    | undefined;

  /**
   * @internal Entries valid for this context (a new context clears the memo). A plan keeps the
   * entries it was given: one that pauses (see {@link planSteps}) while another plan switches
   * the context stores its work in the entries of its own context, never in the new ones.
   */
  for(
    tenant: string,
    rules: HostRules,
    hashKey: string | undefined,
    podEnvironment: PodEnvironment | "unknown",
    syncedKinds: ReadonlySet<string>,
  ): MemoEntries {
    // Pod translations depend on the pod environment, which each pass resolves anew, and
    // on which kinds the policy syncs (references to the others are settled in translation).
    const pods = JSON.stringify(podEnvironment);
    const kinds = [...syncedKinds].sort().join(",");
    const c = this.context;
    if (
      c === undefined ||
      c.tenant !== tenant ||
      c.rules !== rules ||
      c.hashKey !== hashKey ||
      c.pods !== pods ||
      c.kinds !== kinds
    ) {
      this.entries = new MemoEntries();
      this.context = { tenant, rules, hashKey, pods, kinds };
    }
    return this.entries;
  }

  /** @internal Whether `value`'s work is remembered in the current context. */
  hasSource(value: object): boolean {
    return this.entries.hasSource(value);
  }
}

/** @internal A {@link PlanMemo}'s entries for one context. */
class MemoEntries {
  private readonly sources = new WeakMap<object, SourceWork>();
  private readonly hosts = new WeakMap<object, HostEntry | null>();

  hasSource(value: object): boolean {
    return this.sources.has(value);
  }

  source(value: object, compute: () => SourceWork): SourceWork {
    let work = this.sources.get(value);
    if (work === undefined) this.sources.set(value, (work = compute()));
    return work;
  }

  host(value: object, compute: () => HostEntry | undefined): HostEntry | undefined {
    let entry = this.hosts.get(value);
    if (entry === undefined) this.hosts.set(value, (entry = compute() ?? null));
    return entry ?? undefined;
  }
}

/** One tenant object identity: what {@link planKey} plans for. */
export interface SourceKey {
  kind: string;
  namespace: string;
  name: string;
}

/** A source object and the host object it maps to. */
export interface PlannedTarget {
  tenant: string;
  kind: string;
  tenantRef: ObjectRef;
  hostRef: ObjectRef;
  /** Whether the host name had to be shortened with a hash. */
  hashed: boolean;
}

/** A planned decision, with the desired host object for Create and Update. */
export interface PlannedDecisionWithObject extends PlannedDecision, PlannedTarget {
  object?: HostObject;
  /** Set on the Skip of a tenant object that cannot be read or translated: bad input, not a rule. */
  malformed?: true;
  /**
   * Set on a Skip that states how the tenant runs rather than a problem (a Pod its own
   * scheduler places, see {@link privateModeReason}): news once per object (its uid), not on
   * every change of it, and no warning.
   */
  once?: true;
}

/** The planner's answer; every list is sorted by virtual namespace, name, kind, host name and action. */
export interface PlanResult {
  /** Actions for the applier (Create, Update, Delete) and conflicts or bad input it must report (Skip). */
  decisions: PlannedDecisionWithObject[];
  /**
   * Objects that are never synced by rule (kind outside the policy, tenant system
   * namespace, objects Kubernetes creates in every namespace): always `Skip`, no host
   * action and nothing to publish, listed so explain-sync can say why.
   */
  ignored: PlannedDecisionWithObject[];
  /** Sources whose host copy already carries the desired content hash: no write. */
  inSync: PlannedTarget[];
}

/**
 * Plans one sync pass for `tenant`: Create where the host copy is absent, Update where
 * its content hash differs, Skip where the name is held by another source or a foreign
 * object or the host rules refuse the object, Delete for sync copies nobody claims, of
 * kinds in `completeKinds`. Pure and deterministic; a malformed object becomes a Skip and
 * never stops the pass. Host objects outside `tp-<tenant>` are never considered.
 */
export function plan(input: PlanInput): PlanResult {
  return runSteps(planSteps(input));
}

/**
 * {@link plan} as steps: the generator pauses (yields) after each host object read, each
 * source planned (a large one also between slices of its content hash, see
 * {@link prepareSource}) and each host object judged for garbage collection, and returns the
 * plan, so a caller can serve its event loop during a pass over tens of thousands of objects.
 * The objects in `input` must not change meanwhile.
 */
export function* planSteps(input: PlanInput): Generator<void, PlanResult, void> {
  if (!isValidTenantName(input.tenant)) {
    throw new TypeError(`tenant name ${JSON.stringify(input.tenant)} ${TENANT_NAME_MESSAGE}`);
  }
  const pass = new Pass(input, []);
  for (const value of input.hostObjects) {
    pass.addHost(value);
    yield;
  }
  for (let i = 0; i < input.tenantObjects.length; i++) {
    const value = input.tenantObjects[i];
    if (isJsonObject(value)) yield* pass.prepare(value);
    pass.planSource(value, i + 1);
    yield;
  }
  for (const value of input.hostObjects) {
    pass.collectGarbageOf(value);
    yield;
  }
  return pass.result();
}

/**
 * Steps that fill `input.memo` with the expensive part of planning tenant object `value`
 * (parsing, host-rule checks, translation and content hash), pausing (yielding) between slices
 * of the hash, so a caller can serve its event loop while a megabyte object is hashed. A later
 * {@link plan} or {@link planKey} with that memo and the same tenant, rules, hash key, pod
 * environment and policy kinds takes the result from the memo and answers exactly as it
 * would have without these steps. Nothing to do without a memo or when `value` is remembered;
 * `value` must not change meanwhile (the memo's rule).
 */
export function* prepareSource(input: PlanInput, value: unknown): Generator<void, void, void> {
  if (input.memo === undefined || !isJsonObject(value)) return;
  if (!isValidTenantName(input.tenant)) {
    throw new TypeError(`tenant name ${JSON.stringify(input.tenant)} ${TENANT_NAME_MESSAGE}`);
  }
  yield* new Pass(input, []).prepare(value);
}

/**
 * Plans one tenant object identity: exactly the entries {@link plan} gives for `key` on
 * the same input (see {@link restrictToKey}), computed from the tenant objects with that
 * identity (none: deleted) and the host objects relevant to it, namely the object at its
 * target host name and any sync copy whose reverse mapping names it. Other objects in
 * `input` are ignored, so a caller may pass just those. Reasons keep their `item N`
 * positions in `input.tenantObjects`. A Delete in the answer may name another source
 * (a stray copy sitting at this key's name); a host copy without a readable source is
 * planned under the key `{kind, namespace: "", name: <its host name>}`.
 */
export function planKey(input: PlanInput, key: SourceKey): PlanResult {
  if (!isValidTenantName(input.tenant)) {
    throw new TypeError(`tenant name ${JSON.stringify(input.tenant)} ${TENANT_NAME_MESSAGE}`);
  }
  const target = hostName({ tenant: input.tenant, namespace: key.namespace, name: key.name }).name;
  const hostObjects = input.hostObjects.filter((value) => isRelevantHost(value, input.tenant, key, target));
  const pass = new Pass(input, hostObjects);
  input.tenantObjects.forEach((value, index) => {
    if (sameKey(sourceRef(value), key)) pass.planSource(value, index + 1);
  });
  pass.collectGarbage(hostObjects);
  return restrictToKey(pass.result(), input.tenant, key);
}

/**
 * The entries of `result` that concern `key`: those of its kind whose tenant reference is
 * the key, or whose host object is the key's target host name (a stray copy or an
 * unreadable one sitting there).
 */
export function restrictToKey(result: PlanResult, tenant: string, key: SourceKey): PlanResult {
  const target = hostName({ tenant, namespace: key.namespace, name: key.name }).name;
  const concerns = (entry: PlannedTarget) =>
    entry.kind === key.kind &&
    ((entry.tenantRef.namespace === key.namespace && entry.tenantRef.name === key.name) ||
      entry.hostRef.name === target);
  return {
    decisions: result.decisions.filter(concerns),
    ignored: result.ignored.filter(concerns),
    inSync: result.inSync.filter(concerns),
  };
}

/** Decisions and ignored entries together, in plan order: everything explain-sync shows. */
export function explanation(result: PlanResult): PlannedDecisionWithObject[] {
  return [...result.decisions, ...result.ignored].sort(byTarget);
}

interface HostEntry {
  kind: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The classes its claims were made with (a claim's, a Pod's ephemeral volumes'), which cannot change. */
  claimClasses?: StoredClaimClasses | undefined;
}

interface SourceRecord {
  item: number;
  ignoredReason?: string | undefined;
}

class Pass {
  readonly decisions: PlannedDecisionWithObject[] = [];
  readonly ignored: PlannedDecisionWithObject[] = [];
  readonly inSync: PlannedTarget[] = [];
  private readonly tenant: string;
  private readonly hostNamespace: string;
  private readonly kinds: Set<string>;
  private readonly completeKinds: Set<string>;
  private readonly hashKey: string | undefined;
  private readonly rules: HostRules;
  private readonly memo: MemoEntries | undefined;
  private readonly podEnvironment: PodEnvironment | "unknown";
  private readonly privateNodes: ReadonlySet<string>;
  private readonly hosts = new Map<string, HostEntry>();
  /** The rules with each other placement a host Pod copy was found in, by its annotation's text. */
  private readonly placementRules = new Map<string, HostRules>();
  /** Tenant Pods (`<namespace>/<name>`) with a host Pod: at their host name, or a copy naming them. */
  private readonly podsWithCopy = new Set<string>();
  /** Host keys owned by a source in this pass (synced, or kept while its source is malformed). */
  private readonly claimed = new Map<string, VirtualIdentity>();
  private readonly sources = new Map<string, SourceRecord>();

  constructor(input: PlanInput, hostObjects: readonly unknown[]) {
    this.tenant = input.tenant;
    this.hostNamespace = hostNamespaceFor(input.tenant);
    this.kinds = new Set(input.policy.toHost.map((rule) => rule.kind));
    this.completeKinds = new Set(input.completeKinds ?? this.kinds);
    this.hashKey = input.hashKey;
    this.rules = input.rules ?? defaultHostRules;
    this.podEnvironment = resolvePodEnvironment(input);
    this.privateNodes = input.privateNodes ?? new Set();
    this.memo = input.memo?.for(this.tenant, this.rules, this.hashKey, this.podEnvironment, this.kinds);
    for (const value of hostObjects) this.addHost(value);
  }

  /** Takes in one host object of the pass (before any source is planned). */
  addHost(value: unknown): void {
    const entry = this.hostEntry(value);
    if (entry !== undefined) this.hosts.set(hostKey(entry.kind, entry.name), entry);
    if (entry?.kind !== "Pod") return;
    const source = reverseLookup(entry);
    if (source !== undefined && source.tenant === labelValue(this.tenant) && source.kind === "Pod") {
      this.podsWithCopy.add(`${source.namespace}/${source.name}`);
    }
  }

  result(): PlanResult {
    return {
      decisions: this.decisions.sort(byTarget),
      ignored: this.ignored.sort(byTarget),
      inSync: this.inSync.sort(byTarget),
    };
  }

  planSource(value: unknown, item: number): void {
    const raw = rawEnvelope(value);
    const kind = raw.kind ?? UNKNOWN_KIND;
    const target = this.target(kind, raw.namespace ?? DEFAULT_NAMESPACE, raw.name);
    if (!isJsonObject(value)) {
      this.reject(
        target,
        `malformed object (item ${item}): expected a Kubernetes object, found ${describeValue(value)}`,
      );
      return;
    }
    if (raw.kind === undefined) {
      this.reject(target, `malformed object (item ${item}): kind: expected a kind`);
      return;
    }
    if (!this.kinds.has(kind)) {
      const supported = (SYNC_KINDS as readonly string[]).includes(kind)
        ? ""
        : ` (tenantplane syncs ${SYNC_KINDS.join(", ")})`;
      this.ignore(target, `kind ${kind} not in SyncPolicy toHost${supported}`);
      return;
    }
    const id: VirtualIdentity = { tenant: this.tenant, ...target.tenantRef };
    const label = `${kind} ${id.namespace}/${id.name}`;
    const key = sourceKey(kind, id.namespace, id.name);
    const first = this.sources.get(key);
    if (raw.name !== undefined && first !== undefined) {
      this.decide(target, "Skip", `duplicate of item ${first.item}: the first definition of ${label} wins`);
      return;
    }
    const source: SourceRecord = { item };
    if (raw.name !== undefined) this.sources.set(key, source);

    const own =
      systemNamespaceReason(id.namespace) === undefined ? this.ownNodesReason(kind, value, target) : undefined;
    if (own !== undefined) {
      // Never copied, and a host copy it has (made while it was pending) is a duplicate: it goes.
      source.ignoredReason = own;
      this.decisions.push({ ...target, action: "Skip", reason: boundedReason(own), once: true });
      return;
    }
    source.ignoredReason = systemNamespaceReason(id.namespace) ?? this.lostPodReason(kind, value, target);
    if (source.ignoredReason !== undefined) {
      this.ignore(target, source.ignoredReason);
      return;
    }
    const kept = kind === "Pod" ? this.copyPlacement(target) : undefined;
    const work =
      kept !== undefined
        ? this.work(value, kept.rules)
        : this.memo === undefined
          ? this.work(value)
          : this.memo.source(value, () => this.work(value));
    switch (work.type) {
      case "malformed":
        // Keep the existing host copy while its source cannot be read: deleting it would
        // punish a typo with an outage.
        if (raw.name !== undefined) this.claim(target, id);
        this.reject(target, `malformed ${kind} (item ${item}): ${work.problem}`);
        return;
      case "ignored":
        source.ignoredReason = work.reason;
        this.ignore(target, work.reason);
        return;
      case "refused":
        // A refused object is a Skip the tenant must hear about, and its old host copy goes:
        // the rules may have tightened since it was made.
        source.ignoredReason = work.reason;
        this.decide(target, "Skip", work.reason);
        return;
      case "untranslatable":
        this.claim(target, id);
        this.reject(target, `cannot translate ${label} (item ${item}): ${work.message}`);
        return;
      case "held":
        // Claimed, so a copy made earlier is kept while the addresses are unknown.
        this.claim(target, id);
        this.decide(target, "Skip", unknownPodEnvironmentReason(this.tenant));
        return;
      case "translated": {
        const { translation } = work;
        if (translation.refusals.length > 0) {
          // The copy made before (when its references could still be met) is kept: a
          // policy change must not turn into an outage, and no new copy can work.
          this.claim(target, id);
          this.decide(target, "Skip", `${CANNOT_SYNC}: ${describeViolations(translation.refusals)}`);
          return;
        }
        let note = this.unsyncedReferences(translation.references);
        if (translation.rewrites.length > 0) note += `; ${translation.rewrites.join("; ")}`;
        if (kept !== undefined) note += `; ${kept.note}`;
        this.reconcile(target, id, translation.object, note);
      }
    }
  }

  /** Whether a tenant Pod has a host Pod: at its host name, or a copy naming it. */
  private hasPodCopy(target: PlannedTarget): boolean {
    const { namespace, name } = target.tenantRef;
    return this.hosts.has(hostKey("Pod", target.hostRef.name)) || this.podsWithCopy.has(`${namespace}/${name}`);
  }

  /**
   * Why a tenant Pod runs on the tenant's own nodes and is not copied: bound to a Node joined
   * to the tenant's API (not a virtual node), in any mode, or in Private mode any Pod without a
   * host copy (the tenant's own scheduler places it). A Pod with a host copy made before keeps
   * it in Private mode until the migration evicts it: deleting a running copy would bypass the
   * tenant's PodDisruptionBudgets. Undefined for any other object.
   */
  private ownNodesReason(kind: string, value: JsonObject, target: PlannedTarget): string | undefined {
    if (kind !== "Pod") return undefined;
    const spec = value["spec"];
    const node = isJsonObject(spec) && typeof spec["nodeName"] === "string" ? spec["nodeName"] : "";
    const onOwnNode = node !== "" && this.privateNodes.has(node);
    const { namespace, name } = target.tenantRef;
    if (this.rules.placement?.mode === "Private" && (onOwnNode || (node === "" && !this.hasPodCopy(target)))) {
      return privateModeReason(namespace, name);
    }
    return onOwnNode ? privateNodeReason(namespace, name, node) : undefined;
  }

  /**
   * Why a tenant Pod is never made again: it is bound to a node (back-sync binds it only
   * after its host copy was scheduled) and no host Pod is left, so the host lost it
   * (eviction, node loss, a manual delete) and back-sync marks it Failed, as a kubelet
   * would. Making it again would run a second copy the tenant believes failed. A Pod the
   * tenant created already bound (its own spec.nodeName, no PodScheduled from a binding) is
   * refused the same way: copying it with the node stripped would run it on a node other than
   * the one the tenant's API shows, and keeping the node would let the tenant pick host nodes.
   */
  private lostPodReason(kind: string, value: JsonObject, target: PlannedTarget): string | undefined {
    if (kind !== "Pod") return undefined;
    const spec = value["spec"];
    const node = isJsonObject(spec) ? spec["nodeName"] : undefined;
    if (typeof node !== "string" || node === "") return undefined;
    const { namespace, name } = target.tenantRef;
    if (this.hasPodCopy(target)) return undefined;
    // Binding (what back-sync does once the host placed the copy) sets PodScheduled; a Pod
    // created with spec.nodeName has none: the tenant chose a host node, which never passes.
    const conditions = isJsonObject(value["status"]) ? value["status"]["conditions"] : undefined;
    if (!Array.isArray(conditions) || !conditions.some((c) => isJsonObject(c) && c["type"] === "PodScheduled")) {
      return `Pod ${namespace}/${name} sets spec.nodeName ${node} itself: the host scheduler places every host Pod (steer it with nodeSelector or affinity), so a Pod bound in the tenant is not made and the tenant sees it Failed`;
    }
    return `Pod ${namespace}/${name} is bound to node ${node} but its host Pod is gone: lost on the host, so the tenant sees it Failed and it is not made again`;
  }

  /**
   * The rules a Pod whose host copy was made for another placement (the tenant's mode or
   * dedicated node selector changed since) is planned with: that copy's own placement, since a
   * scheduled Pod's node selector and tolerations cannot change. The copy keeps its nodes, and
   * every other change still reaches it, until the migration driver evicts the tenant Pod and
   * its replacement is made for the new placement. Undefined when the copy is placed as the
   * rules say, absent, or its placement cannot be read.
   */
  private copyPlacement(target: PlannedTarget): { rules: HostRules; note: string } | undefined {
    const host = this.hosts.get(hostKey("Pod", target.hostRef.name));
    if (host === undefined || !isSyncCopy(host)) return undefined;
    const text = host.annotations[ANNOTATION_PLACEMENT];
    const placement = parsePlacement(text);
    if (placement === undefined || samePlacement(placement, this.rules.placement ?? SHARED_PLACEMENT)) return undefined;
    let rules = this.placementRules.get(text ?? "");
    if (rules === undefined) this.placementRules.set(text ?? "", (rules = withPlacement(this.rules, placement)));
    const where = placement.mode === "Shared" ? "the shared nodes" : `its dedicated nodes (${text ?? ""})`;
    return {
      rules,
      note: `the host Pod stays on ${where} it was placed for: a scheduled Pod's placement cannot change, so it moves when the isolation migration evicts the tenant Pod`,
    };
  }

  /** The host-independent part of planning one tenant object: parse, rule checks, translation. */
  /** {@link prepareSource} for this pass's memo. */
  *prepare(value: JsonObject): Generator<void, void, void> {
    if (this.memo === undefined || this.memo.hasSource(value)) return;
    if (typeof value["kind"] !== "string" || !this.kinds.has(value["kind"])) return;
    // Never translated (planSource stops before the memo): a tenant system namespace.
    if (systemNamespaceReason(rawEnvelope(value).namespace ?? DEFAULT_NAMESPACE) !== undefined) return;
    const work = yield* this.workSteps(value);
    this.memo.source(value, () => work);
  }

  private work(value: unknown, rules: HostRules = this.rules): SourceWork {
    return runSteps(this.workSteps(value, rules));
  }

  private *workSteps(value: unknown, rules: HostRules = this.rules): Generator<void, SourceWork, void> {
    const parsed = parseTenantObject(value);
    if (!parsed.ok) return { type: "malformed", problem: parsed.problem };
    const obj = parsed.object;
    const nativeReason = nativeObjectReason(obj);
    if (nativeReason !== undefined) return { type: "ignored", reason: nativeReason };
    const refusal = hostRulesReason(obj, rules, this.tenant);
    if (refusal !== undefined) return { type: "refused", reason: refusal };
    if (obj.kind === "Pod" && this.podEnvironment === "unknown") return { type: "held" };
    try {
      return {
        type: "translated",
        translation: yield* translateSteps(obj, this.tenant, {
          hashKey: this.hashKey,
          rules,
          syncedKinds: [...this.kinds],
          ...(this.podEnvironment === "unknown" ? {} : { podEnvironment: this.podEnvironment }),
        }),
      };
    } catch (error) {
      return { type: "untranslatable", message: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * A note for references to kinds the policy does not sync that translation left in place
   * (a Pod's subdomain names a Service): their host names will never exist.
   */
  private unsyncedReferences(references: readonly Reference[]): string {
    const missing = references.filter((ref) => !this.kinds.has(ref.kind));
    if (missing.length === 0) return "";
    const kinds = [...new Set(missing.map((ref) => ref.kind))].join(", ");
    const names = missing.map((ref) => `${ref.kind} ${ref.name}`).join(", ");
    return `; refers to ${names}, but SyncPolicy toHost does not list ${kinds}: no host copy will ever exist under ${missing.length === 1 ? "that name" : "those names"}`;
  }

  private reconcile(target: PlannedTarget, id: VirtualIdentity, desired: HostObject, note: string): void {
    const hostRefText = `${target.hostRef.namespace}/${target.hostRef.name}`;
    const key = hostKey(target.kind, target.hostRef.name);
    const rival = this.claimed.get(key);
    if (rival !== undefined) {
      this.decide(target, "Skip", heldByTenant({ ...rival, kind: target.kind }, target.kind));
      return;
    }
    this.claim(target, id);
    const host = this.hosts.get(key);
    if (host === undefined) {
      this.decide(target, "Create", `host ${target.kind} ${hostRefText} absent${note}`, desired);
      return;
    }
    if (!isManaged(host)) {
      this.decide(target, "Skip", "held by foreign object (not managed by tenantplane)");
      return;
    }
    if (!isSyncCopy(host)) {
      this.decide(target, "Skip", `held by a tenantplane object that is not a sync copy (no ${LABEL_KIND} label)`);
      return;
    }
    const holder = reverseLookup(host);
    if (holder === undefined) {
      const holderTenant = host.labels[LABEL_TENANT];
      if (holderTenant === labelValue(this.tenant)) {
        this.decide(target, "Update", `host copy has incomplete reverse-mapping metadata${note}`, desired);
      } else {
        this.decide(
          target,
          "Skip",
          `held by object managed by tenantplane with incomplete reverse mapping (tenant ${holderTenant ?? "unknown"})`,
        );
      }
      return;
    }
    if (!sameSource(holder, id, target.kind)) {
      this.decide(target, "Skip", heldByTenant(holder, target.kind));
      return;
    }
    const keptClasses = keepStoredClaimClasses(desired, host.claimClasses, this.hashKey);
    if (keptClasses !== undefined) {
      desired = keptClasses.object;
      note += `; ${keptClasses.note}`;
    }
    const recorded = recordedContentHash(host);
    const wanted = recordedContentHash(desired.metadata);
    if (recorded === wanted) {
      this.inSync.push(target);
    } else if (recorded === undefined) {
      this.decide(target, "Update", `host copy has no content hash${note}`, desired);
    } else {
      // Hashes stay out of reasons: Decisions are published and become Events.
      this.decide(target, "Update", `host copy differs from the desired object${note}`, desired);
    }
  }

  /**
   * Deletes sync copies of this tenant, in the host namespace, of kinds whose listings are
   * complete, that no source claims: copies of policy kinds whose source is gone or not
   * synced, stray copies (not at the name their source maps to, even if another source
   * wants that name: it waits for the Delete), and every copy of a kind the policy no
   * longer lists. Other tenantplane objects there (the control plane, its Secrets) carry
   * managed-by and tenant labels too, but never the kind label, so they are never touched.
   */
  collectGarbage(hostObjects: readonly unknown[]): void {
    for (const value of hostObjects) this.collectGarbageOf(value);
  }

  /** {@link collectGarbage} for one host object, once every source is planned. */
  collectGarbageOf(value: unknown): void {
    const host = this.hostEntry(value);
    if (host === undefined || !isSyncCopy(host) || !this.completeKinds.has(host.kind)) return;
    if (host.labels[LABEL_TENANT] !== labelValue(this.tenant) || host.labels[LABEL_KIND] !== labelValue(host.kind))
      return;
    const source = reverseLookup(host);
    const tenantRef =
      source === undefined ? { namespace: "", name: host.name } : { namespace: source.namespace, name: source.name };
    const mapped = source === undefined ? undefined : hostName({ ...tenantRef, tenant: this.tenant });
    const target: PlannedTarget = {
      tenant: this.tenant,
      kind: host.kind,
      tenantRef,
      hostRef: { namespace: this.hostNamespace, name: host.name },
      hashed: mapped?.hashed ?? false,
    };
    if (!this.kinds.has(host.kind)) {
      this.decide(target, "Delete", `kind ${host.kind} left the SyncPolicy: toHost no longer lists it`);
      return;
    }
    if (source !== undefined && mapped !== undefined && mapped.name !== host.name) {
      const label = `${host.kind} ${source.namespace}/${source.name}`;
      this.decide(target, "Delete", `stray copy: source ${label} maps to ${this.hostNamespace}/${mapped.name}`);
      return;
    }
    if (this.claimed.has(hostKey(host.kind, host.name))) return;
    this.decide(target, "Delete", this.orphanReason(host, source));
  }

  private orphanReason(host: HostEntry, source: SourceIdentity | undefined): string {
    if (source === undefined) return "managed copy has incomplete reverse-mapping metadata and no source claims it";
    const label = `${host.kind} ${source.namespace}/${source.name}`;
    const ignoredReason = this.sources.get(sourceKey(host.kind, source.namespace, source.name))?.ignoredReason;
    if (ignoredReason !== undefined) return `source ${label} is not synced: ${ignoredReason}`;
    return `source ${label} gone from tenant ${this.tenant}${host.kind === "Pod" ? privateDeleteNote(this.rules) : ""}`;
  }

  private hostEntry(value: unknown): HostEntry | undefined {
    if (this.memo === undefined || typeof value !== "object" || value === null) return this.readHostEntry(value);
    return this.memo.host(value, () => this.readHostEntry(value));
  }

  private readHostEntry(value: unknown): HostEntry | undefined {
    const parsed = HostObjectEnvelopeSchema.safeParse(value);
    if (!parsed.success) return undefined;
    const { metadata } = parsed.data;
    const labels = metadata.labels ?? {};
    const kind = parsed.data.kind ?? labels[LABEL_KIND];
    if (kind === undefined || (metadata.namespace ?? this.hostNamespace) !== this.hostNamespace) return undefined;
    const entry: HostEntry = { kind, name: metadata.name, labels, annotations: metadata.annotations ?? {} };
    const claimClasses = storedClaimClasses(kind, value);
    if (claimClasses !== undefined) entry.claimClasses = claimClasses;
    return entry;
  }

  private target(kind: string, namespace: string, name: string | undefined): PlannedTarget {
    const mapped =
      name === undefined ? { name: "(unknown)", hashed: false } : hostName({ tenant: this.tenant, namespace, name });
    return {
      tenant: this.tenant,
      kind,
      tenantRef: { namespace, name: name ?? UNNAMED },
      hostRef: { namespace: this.hostNamespace, name: mapped.name },
      hashed: mapped.hashed,
    };
  }

  private claim(target: PlannedTarget, id: VirtualIdentity): void {
    this.claimed.set(hostKey(target.kind, target.hostRef.name), id);
  }

  private decide(target: PlannedTarget, action: PlannedDecision["action"], why: string, object?: HostObject): void {
    const reason = boundedReason(why);
    this.decisions.push(object === undefined ? { ...target, action, reason } : { ...target, action, reason, object });
  }

  private reject(target: PlannedTarget, why: string): void {
    this.decisions.push({ ...target, action: "Skip", reason: boundedReason(why), malformed: true });
  }

  private ignore(target: PlannedTarget, why: string): void {
    this.ignored.push({ ...target, action: "Skip", reason: boundedReason(why) });
  }
}

/**
 * The Skip reason of a tenant Pod that a Private tenant's own scheduler places: it names the
 * mode, so it answers "why is there no host copy".
 */
export function privateModeReason(namespace: string, name: string): string {
  return `Pod ${namespace}/${name} has no host copy: ${ISOLATION_MODE_FIELD} is Private, so the tenant's own scheduler places it on nodes joined to the tenant's API and tenantplane syncs no Pod to the host`;
}

/** The Skip reason of a tenant Pod bound to a Node joined to the tenant's API (not a virtual node). */
export function privateNodeReason(namespace: string, name: string, node: string): string {
  return `Pod ${namespace}/${name} runs on node ${node}, which joined the tenant's own API (not a virtual node of tenantplane): it is never copied to the host`;
}

/**
 * What the Delete of a host Pod copy adds in Private mode: no copy is made again, and what
 * only host Pods needed (its token Secret, which the host Pod owns) goes with it.
 */
export function privateDeleteNote(rules: HostRules | undefined): string {
  if (rules?.placement?.mode !== "Private") return "";
  return `; ${ISOLATION_MODE_FIELD} is Private: no host copy is made again, and its token Secret (owned by the host Pod) goes with it`;
}

// Explicit, else the host namespace's Services, else placeholders for offline planning.
function resolvePodEnvironment(input: PlanInput): PodEnvironment | "unknown" {
  if (input.podEnvironment !== undefined) return input.podEnvironment;
  const found = podEnvironmentFrom(input.hostObjects, input.tenant);
  return found === "unknown" ? placeholderPodEnvironment() : found;
}

// Only the sync engine sets the kind label; managed-by alone also marks the tenant's
// control plane, its Services and its Secrets in the same namespace.
function isSyncCopy(host: HostEntry): boolean {
  return isManaged(host) && host.labels[LABEL_KIND] !== undefined;
}

function heldByTenant(holder: SourceIdentity, kind: string): string {
  const suffix = holder.kind === kind ? "" : ` (kind ${holder.kind})`;
  return `held by tenant ${holder.tenant}/${holder.namespace}/${holder.name}${suffix}`;
}

function sameSource(holder: SourceIdentity, id: VirtualIdentity, kind: string): boolean {
  return (
    holder.tenant === id.tenant && holder.namespace === id.namespace && holder.name === id.name && holder.kind === kind
  );
}

function hostKey(kind: string, name: string): string {
  return `${kind}\n${name}`;
}

function sourceKey(kind: string, namespace: string, name: string): string {
  return `${kind}\n${namespace}\n${name}`;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const UNKNOWN_KIND = "Unknown";
/** How a Skip for an object whose host copy could not work as written begins. */
const CANNOT_SYNC = "cannot be synced as written";
const UNNAMED = "(unnamed)";

/** The identity the planner files a tenant object under, read before any validation. */
function sourceRef(value: unknown): SourceKey {
  const raw = rawEnvelope(value);
  return { kind: raw.kind ?? UNKNOWN_KIND, namespace: raw.namespace ?? DEFAULT_NAMESPACE, name: raw.name ?? UNNAMED };
}

function sameKey(a: SourceKey, b: SourceKey): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

/** A host object at the key's target name, or one whose reverse mapping names the key; see {@link planKey}. */
function isRelevantHost(value: unknown, tenant: string, key: SourceKey, target: string): boolean {
  const parsed = HostObjectEnvelopeSchema.safeParse(value);
  if (!parsed.success) return false;
  const { metadata } = parsed.data;
  const kind = parsed.data.kind ?? metadata.labels?.[LABEL_KIND];
  if (kind !== key.kind) return false;
  if (metadata.name === target) return true;
  const source = reverseLookup({ labels: metadata.labels, annotations: metadata.annotations });
  // A copy without a readable source is reported under namespace "" and its own name.
  if (source === undefined) return key.namespace === "" && key.name === metadata.name;
  return source.tenant === labelValue(tenant) && source.namespace === key.namespace && source.name === key.name;
}

// Best-effort reading of kind, namespace and name before validation, so even a
// malformed object is reported under the name its author gave it.
function rawEnvelope(value: unknown): { kind?: string; namespace?: string; name?: string } {
  if (!isJsonObject(value)) return {};
  const metadata = isJsonObject(value["metadata"]) ? value["metadata"] : {};
  return {
    ...nonEmpty("kind", value["kind"]),
    ...nonEmpty("namespace", metadata["namespace"]),
    ...nonEmpty("name", metadata["name"]),
  };
}

function nonEmpty<K extends string>(key: K, value: unknown): Partial<Record<K, string>> {
  return typeof value === "string" && value !== "" ? ({ [key]: value } as Record<K, string>) : {};
}

function byTarget(a: PlannedTarget & { action?: string; reason?: string }, b: typeof a): number {
  const keys = (x: typeof a) => [
    x.tenantRef.namespace,
    x.tenantRef.name,
    x.kind,
    x.hostRef.name,
    x.action ?? "",
    x.reason ?? "",
  ];
  const left = keys(a);
  const right = keys(b);
  for (let i = 0; i < left.length; i++) {
    const l = left[i] ?? "";
    const r = right[i] ?? "";
    if (l !== r) return l < r ? -1 : 1;
  }
  return 0;
}
