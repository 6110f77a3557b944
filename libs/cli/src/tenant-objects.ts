import { SYNC_KINDS } from "@tenantplane/api";
import type { PlannedTarget, PlanResult } from "@tenantplane/sync";
import { clusterError, onCluster, openTenant, type Cluster } from "./host.js";
import { readTenantKubeconfig } from "./kubeconfig.js";
import type { RawObject, TenantPlanContext } from "./tenant-context.js";

/** What the tenant API holds now, for the kinds its policy syncs; `listed` is false when it could not be read. */
export interface TenantListing {
  objects: RawObject[];
  listed: boolean;
  /** Why the tenant API could not be listed. */
  problem?: string;
  /** The tenant API, when it was listed. */
  api?: Cluster;
}

/**
 * Lists the policy's kinds in every namespace of the tenant API, through the admin
 * kubeconfig the host stores (pointed at the external endpoint when there is one, since the
 * CLI runs outside the host cluster). Never throws for the tenant side: a tenant API that
 * cannot be read is reported in `problem`.
 */
export async function listTenantObjects(host: Cluster, context: TenantPlanContext): Promise<TenantListing> {
  try {
    const external = typeof context.tenantCluster.status?.["externalEndpoint"] === "string";
    const kubeconfig = await readTenantKubeconfig(host, context.tenant, external, context.tenantCluster);
    const tenantApi = openTenant(context.tenant, kubeconfig);
    const [namespaces, ...lists] = await Promise.all([
      onCluster(tenantApi, "list Namespaces", (o) => o.list<RawObject & { apiVersion: string }>("v1", "Namespace")),
      ...context.policy.toHost.map(({ kind }) =>
        onCluster(tenantApi, `list ${kind}s`, (o) => o.list<RawObject & { apiVersion: string }>("v1", kind)),
      ),
    ]);
    return { objects: withoutTerminating(lists.flat(), namespaces), listed: true, api: tenantApi };
  } catch (error) {
    return {
      objects: [],
      listed: false,
      problem: error instanceof Error ? error.message.split("\n")[0]! : String(error),
    };
  }
}

/** `objects` minus those in a namespace being deleted: the sync worker counts them as gone. */
export function withoutTerminating(objects: readonly RawObject[], namespaces: readonly RawObject[]): RawObject[] {
  const terminating = new Set(
    namespaces.filter((ns) => isDeleting(ns) || ns.status?.["phase"] === "Terminating").map((ns) => ns.metadata?.name),
  );
  return objects.filter((object) => !terminating.has(object.metadata?.namespace));
}

function isDeleting(object: RawObject): boolean {
  const deleting = (object.metadata as { deletionTimestamp?: unknown } | undefined)?.deletionTimestamp;
  return deleting !== undefined && deleting !== null;
}

/** `kind/namespace/name` of a tenant object read loosely (namespace "" or absent is `default`), or undefined. */
export function sourceKeyOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { kind, metadata } = value as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  if (typeof kind !== "string" || typeof metadata?.name !== "string") return undefined;
  return `${kind}/${namespaceOf(metadata)}/${metadata.name}`;
}

/**
 * The tenant's objects once the manifest is applied: the manifest's objects first (so the
 * planner's `item N` still counts manifest objects), then every listed object the manifest
 * does not replace. Listed objects being deleted count as gone, as the sync worker sees them.
 * With `prune`, the manifest is the complete desired state of each namespace it names (as
 * `kubectl apply --prune` treats it): listed objects there that it lacks count as deleted.
 */
export function applyManifest(
  manifest: readonly unknown[],
  listed: readonly RawObject[],
  options: { prune?: boolean } = {},
): unknown[] {
  const replaced = new Set(manifest.map(sourceKeyOf).filter((key) => key !== undefined));
  const pruned = options.prune === true ? manifestNamespaces(manifest) : new Set<string>();
  const kept = listed.filter(
    (object) =>
      !replaced.has(sourceKeyOf(object) ?? "") && !isDeleting(object) && !pruned.has(namespaceOf(object.metadata)),
  );
  return [...manifest, ...kept];
}

/** Tenant namespaces the manifest's objects are in (`default` for those without one). */
export function manifestNamespaces(manifest: readonly unknown[]): Set<string> {
  const namespaces = new Set<string>();
  for (const value of manifest) {
    if (typeof value !== "object" || value === null) continue;
    namespaces.add(namespaceOf((value as { metadata?: { namespace?: unknown } }).metadata));
  }
  return namespaces;
}

function namespaceOf(metadata: { namespace?: unknown } | undefined): string {
  return typeof metadata?.namespace === "string" && metadata.namespace !== "" ? metadata.namespace : "default";
}

/**
 * Kinds whose copies may be planned for deletion: every kind when the tenant was listed;
 * otherwise only kinds the policy no longer syncs (their host listing alone decides), as
 * the sync worker never deletes on a failed tenant listing.
 */
export function deletableKinds(policyKinds: readonly string[], tenantListed: boolean): string[] {
  return SYNC_KINDS.filter((kind) => tenantListed || !policyKinds.includes(kind));
}

/**
 * What a live plan shows: every action the sync worker will take (for any tenant object),
 * and for the manifest's own objects also those it ignores and those already in sync.
 */
export function manifestView(result: PlanResult, manifest: readonly unknown[]): PlanResult {
  const keys = new Set(manifest.map(sourceKeyOf).filter((key) => key !== undefined));
  const inManifest = (t: PlannedTarget) => keys.has(`${t.kind}/${t.tenantRef.namespace}/${t.tenantRef.name}`);
  return {
    decisions: result.decisions,
    ignored: result.ignored.filter(inManifest),
    inSync: result.inSync.filter(inManifest),
  };
}

/** The manifest's objects as the tenant API would store them, and what could not be checked. */
export interface StoredForms {
  objects: unknown[];
  /** One line per object kept as written because the tenant API refused the dry run. */
  notes: string[];
}

/**
 * The manifest's objects as the tenant API would store them once applied: each object of
 * one of `kinds` is server-side applied with dry run, so defaults are filled in, stringData is
 * folded into data and admission has mutated it, and nothing is stored. The sync worker hashes
 * the stored object, so planning with it predicts the same content hash. An object the tenant
 * API refuses, or that is not a named core object, is kept as written (and the planner reports
 * it if it is malformed); a note says why for each refusal.
 */
export async function asStored(
  api: Cluster,
  manifest: readonly unknown[],
  kinds: readonly string[],
): Promise<StoredForms> {
  const notes: string[] = [];
  const objects = await Promise.all(
    manifest.map(async (value) => {
      const object = dryRunnable(value, kinds);
      if (object === undefined) return value;
      try {
        const stored = await api.objects.apply(object, { dryRun: true });
        return { ...stored, apiVersion: object.apiVersion, kind: object.kind };
      } catch (error) {
        const refused = clusterError(api, `apply ${sourceKeyOf(object)}`, error);
        notes.push(
          `${object.kind} ${object.metadata.namespace}/${object.metadata.name}: planned as written, since a dry run on ${api.label} failed (${refused instanceof Error ? refused.message : String(refused)})`,
        );
        return value;
      }
    }),
  );
  return { objects, notes };
}

type DryRunnable = RawObject & { apiVersion: string; kind: string; metadata: { name: string; namespace: string } };

/** A named core/v1 object of one of `kinds`, with its namespace filled in, or undefined. */
function dryRunnable(value: unknown, kinds: readonly string[]): DryRunnable | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const object = value as RawObject;
  if (object.apiVersion !== "v1" || typeof object.kind !== "string" || !kinds.includes(object.kind)) return undefined;
  if (typeof object.metadata?.name !== "string" || object.metadata.name === "") return undefined;
  return {
    ...object,
    apiVersion: "v1",
    kind: object.kind,
    metadata: { ...object.metadata, name: object.metadata.name, namespace: namespaceOf(object.metadata) },
  } as DryRunnable;
}
