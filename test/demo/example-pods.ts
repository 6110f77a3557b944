// What "every example Pod runs" means for a set of tenant manifests, judged from the Pods a
// tenant API lists. Pure: the demo reads the manifests and the Pods, this decides.

/** The parts of a manifest that decide how many Pods it makes. */
export interface WorkloadManifest {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: { replicas?: number; completions?: number | null; parallelism?: number | null };
}

/** The Pods a set of manifests makes once the tenant's controllers have run. */
export interface ExpectedPods {
  /** Pods in all: bare Pods, each Deployment's and StatefulSet's replicas, each Job's completions. */
  total: number;
  /** The namespaces the Pods live in. */
  namespaces: string[];
}

/** A Pod as the judgement needs it. */
export interface PodView {
  namespace: string;
  name: string;
  /** `status.phase`, `Pending` when unset. */
  phase: string;
  /** Kind of the controlling owner, when there is one. */
  ownerKind?: string;
  deleting: boolean;
  /** Why it is not running, when the Pod says so (an unready condition's message, a waiting reason). */
  why?: string;
}

/** Whether the example Pods all run, with a one-line summary that names the ones that do not. */
export interface PodJudgement {
  done: boolean;
  /** Pods that run (or, for a Job, succeeded). */
  running: number;
  /** `namespace/name` of each live Pod that does not, sorted. */
  notRunning: string[];
  summary: string;
}

// Kinds whose Pod count depends on something other than the manifest (nodes, a schedule):
// the demo could not say when it is done, so an example using them is refused by name.
const UNCOUNTABLE = new Set(["DaemonSet", "CronJob"]);

/**
 * How many Pods `manifests` make and where, as the tenant's controllers would make them: a Pod
 * is one, a Deployment, ReplicaSet or StatefulSet its `replicas` (1 when unset), a Job its
 * `completions` (1 when unset). Throws, naming the object, for a DaemonSet or CronJob.
 */
export function expectedPods(manifests: readonly WorkloadManifest[]): ExpectedPods {
  let total = 0;
  const namespaces = new Set<string>();
  for (const m of manifests) {
    const kind = m.kind ?? "";
    const where = `${m.metadata?.namespace ?? "default"}/${m.metadata?.name ?? "?"}`;
    if (UNCOUNTABLE.has(kind)) throw new Error(`${kind} ${where}: the demo cannot count its Pods; use a Deployment`);
    const count = podsOf(kind, m.spec);
    if (count === 0) continue;
    total += count;
    namespaces.add(m.metadata?.namespace ?? "default");
  }
  return { total, namespaces: [...namespaces].sort() };
}

function podsOf(kind: string, spec: WorkloadManifest["spec"]): number {
  switch (kind) {
    case "Pod":
      return 1;
    case "Deployment":
    case "ReplicaSet":
    case "StatefulSet":
      return spec?.replicas ?? 1;
    case "Job":
      return spec?.completions ?? 1;
    default:
      return 0;
  }
}

/**
 * Done when exactly `expected` Pods exist (not being deleted), each Running, or Succeeded when a
 * Job owns it. A failed or extra Pod keeps it not done: the tenant would see it too.
 */
export function judgePods(expected: number, pods: readonly PodView[]): PodJudgement {
  const live = pods.filter((p) => !p.deleting);
  const ok = (p: PodView) => (p.ownerKind === "Job" ? p.phase === "Succeeded" : p.phase === "Running");
  const waiting = live.filter((p) => !ok(p));
  const running = live.length - waiting.length;
  const done = waiting.length === 0 && live.length === expected;
  const byName = (a: PodView, b: PodView) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`);
  const sorted = [...waiting].sort(byName);
  const notRunning = sorted.map((p) => `${p.namespace}/${p.name}`);
  const named = sorted.map((p) => `${p.namespace}/${p.name} ${p.phase}${p.why ? ` (${p.why})` : ""}`).join("; ");
  const counts = `${running} of ${expected} example Pods running`;
  if (done) return { done, running, notRunning, summary: `all ${expected} example Pods running` };
  const missing = expected - live.length;
  const parts = [counts];
  if (missing > 0) parts.push(`${missing} not created yet`);
  if (missing < 0) parts.push(`${-missing} more than the examples make`);
  if (named !== "") parts.push(`not running: ${named}`);
  return { done, running, notRunning, summary: parts.join("; ") };
}
