import {
  MAX_BLOCKED_WORKLOADS,
  type BlockedWorkload,
  type IsolationMode,
  type MigrationStatus,
} from "@tenantplane/api";
import { labelValue, reverseLookup } from "@tenantplane/mapping";
import { ANNOTATION_PLACEMENT, parsePlacement, samePlacement, type Placement } from "@tenantplane/sync";

/** The parts of a Pod (tenant Pod or host copy) the migration planner reads. */
export interface MigrationPod {
  metadata: {
    name: string;
    namespace?: string | undefined;
    uid?: string | undefined;
    creationTimestamp?: string | undefined;
    deletionTimestamp?: string | undefined;
    labels?: Record<string, string> | undefined;
    annotations?: Record<string, string> | undefined;
    ownerReferences?: ReadonlyArray<{ kind?: string; name?: string; uid?: string; controller?: boolean }> | undefined;
  };
  spec?:
    | {
        nodeName?: string | undefined;
        volumes?:
          | ReadonlyArray<{
              name?: string | undefined;
              persistentVolumeClaim?: { claimName?: string | undefined } | undefined;
              ephemeral?: unknown;
            }>
          | undefined;
      }
    | undefined;
  status?: { phase?: string; conditions?: ReadonlyArray<{ type?: string; status?: string }> } | undefined;
}

/** The metadata of a host copy the planner reads (a claim's). */
export interface MigrationObject {
  metadata: {
    name: string;
    namespace?: string | undefined;
    labels?: Record<string, string> | undefined;
    annotations?: Record<string, string> | undefined;
  };
}

/** The migration driver's part of `status.isolation`: the effective mode and the migration block. */
export interface MigrationState {
  mode: IsolationMode;
  migration?: MigrationStatus | undefined;
}

/** What one pass of the migration driver looks at, all of it read from the APIs (nothing remembered). */
export interface MigrationInput {
  tenant: string;
  now: Date;
  /** spec.isolation: the mode asked for, where its Pods go, and whether bare Pods may be evicted. */
  spec: { mode: IsolationMode; placement: Placement; evictBarePods: boolean };
  /** status.isolation as the TenantCluster shows it (or as this driver last wrote it). */
  status: { mode?: IsolationMode | undefined; migration?: MigrationStatus | undefined };
  /** The tenant's Pods. */
  tenantPods: readonly MigrationPod[];
  /** The host copies of the tenant's Pods (in its host namespace). */
  hostPods: readonly MigrationPod[];
  /**
   * Names of the tenant's own Nodes (joined to its API, not virtual nodes): where Private
   * runs its Pods. Absent: none.
   */
  privateNodes?: ReadonlySet<string> | undefined;
  /** The host copies of the tenant's PersistentVolumeClaims: storage that cannot follow a Pod to its own nodes. */
  hostClaims?: readonly MigrationObject[] | undefined;
}

/** A tenant Pod to evict through the tenant API (its uid a precondition, so a replacement is never hit). */
export interface Eviction {
  namespace: string;
  name: string;
  uid: string | undefined;
}

/** One step of a migration worth telling: a Decision (and so an Event), published once under `key`. */
export interface MigrationNote {
  /** Identifies the step within its migration: the Decision's id is derived from it. */
  key: string;
  action: "Update" | "Skip";
  kind: string;
  tenantRef: { namespace: string; name: string };
  reason: string;
}

/** What the driver should do now. */
export interface MigrationStep {
  /** status.isolation as it should read (mode and migration); undefined: nothing to write. */
  status: MigrationState | undefined;
  /** Tenant Pods to evict now: the Pods of one controller (or one bare Pod) at a time. */
  evict: Eviction[];
  notes: MigrationNote[];
  /** Why no Pod is evicted while work remains (for logs and the Moving reason), or undefined. */
  waiting: string | undefined;
}

/** The reason a bare Pod blocks a migration. */
export const BARE_POD_REASON = "bare Pod: nobody recreates it; delete it or set spec.isolation.migration.evictBarePods";

/**
 * Where a tenant Pod stands in a migration. Going Private, a Pod with a host copy is stale and
 * one bound to the tenant's own node is placed once Running and Ready; leaving Private, a Pod
 * on the tenant's own node (no host copy) is stale.
 */
type Standing =
  /** It runs in the old placement: its host copy's, or the tenant's own node when leaving Private. */
  | "stale"
  /** Terminating, not placed yet, or placed as asked and not Running and Ready yet. */
  | "inFlight"
  /** Placed as asked (copied for the new placement, or on the tenant's own node for Private), Running and Ready. */
  | "placed";

interface PodWork {
  pod: MigrationPod;
  namespace: string;
  standing: Standing;
  /** `<namespace>/<Kind>/<name>` of its controller, or undefined for a bare Pod. */
  owner: string | undefined;
  ownerLabel: string;
  /** Why it cannot move (going Private, its claims' storage is on the host), or undefined. */
  stuck: string | undefined;
}

/**
 * Plans one pass of a tenant's isolation migration from what the APIs show: every tenant Pod
 * whose host copy was made for another placement than `spec` asks for is moved by evicting it
 * through the tenant API, one controller at a time (a controller's replacements must be
 * Running before the next controller's Pods are evicted), so the tenant's own controllers
 * make the replacements, which the planner places as asked. A bare Pod is evicted only with
 * `evictBarePods`, else it is listed as blocked. The phase is Moving while anything can still
 * move, Blocked when only blocked Pods are left, Complete when every Pod runs in the new
 * placement; then the effective mode becomes the one asked for. Pure: the same input gives the
 * same step, so a driver killed at any point is continued by its successor.
 */
export function planMigration(input: MigrationInput): MigrationStep {
  const { spec, status, now } = input;
  const effective = status.mode ?? "Shared";
  const previous = status.migration;
  const unfinished = previous !== undefined && previous.phase !== "Complete";
  // The migration under way continues while it goes where the spec says; a new target starts a new one.
  const continuing = unfinished && previous.to === spec.mode;
  const startedAt = continuing && previous.startedAt !== undefined ? previous.startedAt : now.toISOString();
  const pods = standings(input, startedAt);
  const stale = pods.filter((p) => p.standing === "stale");
  const none: MigrationStep = { status: undefined, evict: [], notes: [], waiting: undefined };

  if (effective === spec.mode && stale.length === 0 && !unfinished) {
    // Nothing to move. A TenantCluster that never showed a mode gets it once.
    if (status.mode === undefined) return { ...none, status: { mode: spec.mode, migration: previous } };
    return none;
  }
  if (status.mode === undefined && stale.length === 0 && previous === undefined) {
    // A tenant made in its mode from the start (or before any Pod): nothing ever ran elsewhere.
    return { ...none, status: { mode: spec.mode } };
  }

  const from: IsolationMode = continuing
    ? previous.from
    : effective !== spec.mode
      ? effective
      : (previous?.to ?? effective);
  const label = `${from} → ${spec.mode}`;
  const notes: MigrationNote[] = [];
  const tenantRef = { namespace: "", name: input.tenant };
  const base = { kind: "TenantCluster", tenantRef };
  if (!continuing) {
    const owners = new Set(stale.map((p) => p.owner ?? `bare/${p.namespace}/${p.pod.metadata.name}`));
    notes.push({
      ...base,
      key: "started",
      action: "Update",
      reason: `isolation migration ${label} started: ${stale.length} Pod(s) of ${owners.size} workload(s) run in the old placement and move by eviction through the tenant API, one controller at a time, honouring its PodDisruptionBudgets`,
    });
  }

  const blocked: Array<BlockedWorkload & { uid: string | undefined }> = [];
  const movable = stale.filter((p) => {
    if (p.stuck !== undefined) {
      blocked.push({ namespace: p.namespace, name: p.pod.metadata.name, reason: p.stuck, uid: p.pod.metadata.uid });
      return false;
    }
    if (p.owner !== undefined || spec.evictBarePods) return true;
    blocked.push({
      namespace: p.namespace,
      name: p.pod.metadata.name,
      reason: BARE_POD_REASON,
      uid: p.pod.metadata.uid,
    });
    return false;
  });
  for (const b of blocked) {
    notes.push({
      key: `blocked/${b.namespace}/${b.name}/${b.uid ?? ""}`,
      action: "Skip",
      kind: "Pod",
      tenantRef: { namespace: b.namespace, name: b.name },
      reason: `isolation migration ${label} cannot move Pod ${b.namespace}/${b.name}: ${b.reason === BARE_POD_REASON ? `${BARE_POD_REASON}: true` : b.reason}`,
    });
  }

  // Per controller (a bare Pod evicted on request is a group of its own).
  const groups = new Map<string, PodWork[]>();
  for (const p of pods) {
    // A Pod that cannot move is never evicted, whatever its controller's other Pods do.
    if (p.stuck !== undefined) continue;
    const key =
      p.owner ??
      (p.standing === "stale" && spec.evictBarePods ? `${p.namespace}/Pod/${p.pod.metadata.name}` : undefined);
    if (key === undefined) continue;
    let list = groups.get(key);
    if (list === undefined) groups.set(key, (list = []));
    list.push(p);
  }
  const inFlight = pods.filter((p) => p.standing === "inFlight");
  const placed = pods.filter((p) => p.standing === "placed");
  for (const [key, members] of [...groups].sort(([a], [b]) => compare(a, b))) {
    const done = members.every((m) => m.standing === "placed");
    const movedHere = members.some((m) => createdSince(m.pod, startedAt));
    if (!done || !movedHere) continue;
    notes.push({
      ...base,
      key: `moved/${key}`,
      action: "Update",
      reason: `isolation migration ${label}: ${members[0]?.ownerLabel ?? key} moved, its ${members.length} Pod(s) run in the new placement`,
    });
  }

  let phase: MigrationStatus["phase"];
  let evict: Eviction[] = [];
  let waiting: string | undefined;
  if (stale.length === 0 && inFlight.length === 0) {
    phase = "Complete";
  } else if (movable.length === 0 && inFlight.length === 0) {
    phase = "Blocked";
  } else {
    phase = "Moving";
    const chosen = activeGroup(groups, inFlight);
    if (chosen.key === undefined) {
      waiting = chosen.waiting;
    } else {
      const members = groups.get(chosen.key) ?? [];
      evict = members
        .filter((m) => m.standing === "stale")
        .map((m) => ({ namespace: m.namespace, name: m.pod.metadata.name, uid: m.pod.metadata.uid }));
      notes.push({
        ...base,
        key: `moving/${chosen.key}`,
        action: "Update",
        reason: `isolation migration ${label}: moving ${members[0]?.ownerLabel ?? chosen.key}: evicting its ${evict.length} Pod(s) in the old placement through the tenant API; its controller makes the replacements`,
      });
    }
  }

  const migration: MigrationStatus = {
    from,
    to: spec.mode,
    phase,
    moved: placed.length,
    left: stale.length,
    ...(blocked.length === 0
      ? {}
      : { blocked: blocked.slice(0, MAX_BLOCKED_WORKLOADS).map(({ uid: _uid, ...b }) => b) }),
    startedAt,
    ...(phase === "Complete"
      ? { finishedAt: continuing && previous.finishedAt ? previous.finishedAt : now.toISOString() }
      : {}),
  };
  if (phase === "Complete") {
    notes.push({
      ...base,
      key: "finished",
      action: "Update",
      reason: `isolation migration ${label} complete: every Pod runs in the new placement (${placed.length} Pod(s)); the effective mode is ${spec.mode}`,
    });
  }
  const mode = phase === "Complete" ? spec.mode : effective;
  return { status: { mode, migration }, evict, notes, waiting };
}

/**
 * The controller whose Pods are evicted now: one that is part way through (some Pods already
 * moved or moving, some left), else, when nothing is in flight anywhere, the first one left.
 * While replacements are in flight no new controller starts.
 */
function activeGroup(groups: Map<string, PodWork[]>, inFlight: PodWork[]): { key?: string; waiting?: string } {
  const sorted = [...groups].sort(([a], [b]) => compare(a, b));
  for (const [key, members] of sorted) {
    const left = members.some((m) => m.standing === "stale");
    const started = members.some((m) => m.standing !== "stale");
    if (left && started) return { key };
  }
  if (inFlight.length > 0) {
    const first = inFlight[0]!;
    return {
      waiting: `waiting for ${inFlight.length} Pod(s) to run in the new placement before the next controller (${first.namespace}/${first.pod.metadata.name} first)`,
    };
  }
  for (const [key, members] of sorted) if (members.some((m) => m.standing === "stale")) return { key };
  return { waiting: "nothing movable" };
}

/**
 * Each live tenant Pod with where it stands against the placement the spec asks for. A Pod
 * without a host copy made before the migration started is not the migration's (never
 * synced: a kind the policy leaves out, a Skip); one made since is a replacement on its way.
 */
function standings(input: MigrationInput, startedAt: string): PodWork[] {
  const copies = new Map<string, MigrationPod>();
  const tenantLabel = labelValue(input.tenant);
  for (const host of input.hostPods) {
    const source = reverseLookup(host.metadata);
    if (source === undefined || source.tenant !== tenantLabel || source.kind !== "Pod") continue;
    copies.set(`${source.namespace}/${source.name}`, host);
  }
  const claimCopies = new Map<string, string>();
  for (const host of input.hostClaims ?? []) {
    const source = reverseLookup(host.metadata);
    if (source === undefined || source.tenant !== tenantLabel || source.kind !== "PersistentVolumeClaim") continue;
    claimCopies.set(`${source.namespace}/${source.name}`, `${host.metadata.namespace ?? ""}/${host.metadata.name}`);
  }
  const privateNodes = input.privateNodes ?? new Set<string>();
  const toPrivate = input.spec.mode === "Private";
  const found: PodWork[] = [];
  for (const pod of input.tenantPods) {
    const phase = pod.status?.phase;
    // A finished Pod runs nowhere: there is nothing to move.
    if (phase === "Succeeded" || phase === "Failed") continue;
    const namespace = pod.metadata.namespace ?? "default";
    const copy = copies.get(`${namespace}/${pod.metadata.name}`);
    const node = pod.spec?.nodeName;
    const onOwnNode = copy === undefined && node !== undefined && privateNodes.has(node);
    if (copy === undefined && !onOwnNode && !isTerminating(pod) && !createdSince(pod, startedAt)) continue;
    const owner = pod.metadata.ownerReferences?.find((r) => r.controller === true && r.kind && r.name);
    const standing = toPrivate
      ? privateStanding(pod, copy, onOwnNode)
      : onOwnNode && !isTerminating(pod)
        ? "stale"
        : standingOf(pod, copy, input.spec.placement);
    found.push({
      pod,
      namespace,
      standing,
      stuck: toPrivate && standing === "stale" ? hostStorage(pod, namespace, claimCopies) : undefined,
      owner: owner === undefined ? undefined : `${namespace}/${owner.kind}/${owner.name}`,
      ownerLabel:
        owner === undefined ? `Pod ${namespace}/${pod.metadata.name}` : `${owner.kind} ${namespace}/${owner.name}`,
    });
  }
  return found.sort((a, b) =>
    compare(`${a.namespace}/${a.pod.metadata.name}`, `${b.namespace}/${b.pod.metadata.name}`),
  );
}

/** Going Private: a host copy is the old placement; the tenant's own node, Running and Ready, the new one. */
function privateStanding(pod: MigrationPod, copy: MigrationPod | undefined, onOwnNode: boolean): Standing {
  if (isTerminating(pod)) return "inFlight";
  if (copy !== undefined) return copy.metadata.deletionTimestamp === undefined ? "stale" : "inFlight";
  return onOwnNode && isRunningAndReady(pod) ? "placed" : "inFlight";
}

/**
 * Why a Pod cannot follow to the tenant's own nodes: it mounts claims (its own, or those of its
 * ephemeral volumes, named `<pod>-<volume>`) whose storage the host holds; undefined when none.
 */
function hostStorage(
  pod: MigrationPod,
  namespace: string,
  claimCopies: ReadonlyMap<string, string>,
): string | undefined {
  const held: string[] = [];
  for (const volume of pod.spec?.volumes ?? []) {
    const claim =
      volume.persistentVolumeClaim?.claimName ??
      (volume.ephemeral !== undefined && volume.name !== undefined ? `${pod.metadata.name}-${volume.name}` : undefined);
    if (claim === undefined) continue;
    const copy = claimCopies.get(`${namespace}/${claim}`);
    if (copy !== undefined && !held.some((h) => h.startsWith(`${claim} `))) held.push(`${claim} (host copy ${copy})`);
  }
  if (held.length === 0) return undefined;
  // status.isolation.migration.blocked[].reason holds 1024 characters: a few claims named, the rest counted.
  const named = held.slice(0, LISTED_CLAIMS).join(", ");
  const more = held.length > LISTED_CLAIMS ? `, and ${held.length - LISTED_CLAIMS} more` : "";
  return `${HOST_STORAGE_REASON}: PersistentVolumeClaim ${named}${more}`;
}

/** Most claims a blocked Pod's reason names. */
const LISTED_CLAIMS = 3;

/** How the reason of a Pod that cannot go Private for its storage begins. */
export const HOST_STORAGE_REASON =
  "host-backed storage cannot follow to the tenant's own nodes (move the data to a claim there and recreate the workload, or stay Shared or Dedicated)";

function isTerminating(pod: MigrationPod): boolean {
  return pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

function standingOf(pod: MigrationPod, copy: MigrationPod | undefined, placement: Placement): Standing {
  if (isTerminating(pod)) return "inFlight";
  if (copy === undefined) return "inFlight";
  const copyPlacement = parsePlacement(copy.metadata.annotations?.[ANNOTATION_PLACEMENT]);
  // An unreadable placement is not the one asked for: the Pod moves and its replacement gets it right.
  if (copyPlacement === undefined || !samePlacement(copyPlacement, placement)) {
    return copy.metadata.deletionTimestamp === undefined ? "stale" : "inFlight";
  }
  return isRunningAndReady(pod) ? "placed" : "inFlight";
}

function isRunningAndReady(pod: MigrationPod): boolean {
  if (pod.status?.phase !== "Running") return false;
  return pod.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

function createdSince(pod: MigrationPod, since: string): boolean {
  const created = pod.metadata.creationTimestamp;
  return created !== undefined && Date.parse(created) >= Date.parse(since) - 1_000;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
