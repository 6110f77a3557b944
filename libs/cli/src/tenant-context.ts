import {
  API_VERSION,
  defaultIsolationProfileSpec,
  defaultSyncPolicySpec,
  IsolationProfileSpecSchema,
  IsolationSpecSchema,
  KIND_ISOLATION_PROFILE,
  KIND_SYNC_POLICY,
  KIND_TENANT_CLUSTER,
  SYNC_KINDS,
  SyncPolicySpecSchema,
  type SyncPolicySpec,
} from "@tenantplane/api";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { compileHostRules, defaultStorageClass, placementOf, withPlacement, type HostRules } from "@tenantplane/sync";
import { CliError } from "./cli-io.js";
import { type Cluster, onCluster } from "./host.js";

/** A host object as the API returns it, read loosely: the CLI only looks at a few fields. */
export interface RawObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What the sync worker plans one tenant with, read from the host cluster. */
export interface TenantPlanContext {
  tenant: string;
  tenantCluster: RawObject;
  policy: SyncPolicySpec;
  /** The SyncPolicy's name; undefined when the TenantCluster names none (every kind syncs). */
  policyName: string | undefined;
  rules: HostRules;
  /** The IsolationProfile's name; undefined for the built-in profile. */
  profileName: string | undefined;
}

/** The TenantCluster `tenant`; exit 1 naming it when it does not exist. */
export async function readTenantCluster(host: Cluster, tenant: string): Promise<RawObject> {
  const tc = await onCluster(host, `read TenantCluster ${tenant}`, (o) =>
    o.get<RawObject & { apiVersion: string; kind: string }>(API_VERSION, KIND_TENANT_CLUSTER, tenant),
  );
  if (tc === undefined) {
    throw new CliError(
      `TenantCluster ${tenant} does not exist on ${host.server} (list them with 'tenantplane get tenants')`,
    );
  }
  return tc;
}

/** The name in `spec.<field>.name` of a TenantCluster, if any. */
export function refName(tc: RawObject, field: "syncPolicyRef" | "isolationProfileRef"): string | undefined {
  const ref = tc.spec?.[field] as { name?: unknown } | undefined;
  return typeof ref?.name === "string" && ref.name !== "" ? ref.name : undefined;
}

/**
 * Reads the tenant's TenantCluster, SyncPolicy and IsolationProfile host rules exactly as the
 * sync worker does. A named policy or profile that is missing or invalid is exit 1: the
 * worker does not sync such a tenant at all, so there is nothing to predict.
 */
export async function readPlanContext(host: Cluster, tenant: string): Promise<TenantPlanContext> {
  const tenantCluster = await readTenantCluster(host, tenant);
  const policyName = refName(tenantCluster, "syncPolicyRef");
  const profileName = refName(tenantCluster, "isolationProfileRef");
  let policy = defaultSyncPolicySpec;
  if (policyName !== undefined) {
    const object = await onCluster(host, `read SyncPolicy ${policyName}`, (o) =>
      o.get<RawObject & { apiVersion: string }>(API_VERSION, KIND_SYNC_POLICY, policyName),
    );
    policy = checkSpec(SyncPolicySpecSchema, object, `SyncPolicy ${policyName}`, tenant, "spec.syncPolicyRef.name");
  }
  // A claim naming no class gets the host's default StorageClass, as the sync worker reads it.
  const classes = await onCluster(
    host,
    "list StorageClasses",
    (o) => o.list<RawObject & { apiVersion: string }>("storage.k8s.io/v1", "StorageClass"),
    "list on storageclasses.storage.k8s.io",
  );
  const hostDefaultClass = defaultStorageClass(classes);
  let rules = compileHostRules(defaultIsolationProfileSpec, undefined, hostDefaultClass);
  if (profileName !== undefined) {
    const object = await onCluster(host, `read IsolationProfile ${profileName}`, (o) =>
      o.get<RawObject & { apiVersion: string }>(API_VERSION, KIND_ISOLATION_PROFILE, profileName),
    );
    const spec = checkSpec(
      IsolationProfileSpecSchema,
      object,
      `IsolationProfile ${profileName}`,
      tenant,
      "spec.isolationProfileRef.name",
    );
    rules = compileHostRules(spec, undefined, hostDefaultClass);
  }
  // Where its Pods run (spec.isolation), as the sync worker's planTenant adds it: a Dedicated
  // tenant's Pods get the dedicated node selector and the toleration of its own taint.
  rules = withPlacement(rules, placementOf(isolationOf(tenantCluster, tenant)));
  return { tenant, tenantCluster, policy, policyName, rules, profileName };
}

/**
 * The TenantCluster's parsed spec.isolation; exit 1 naming the field when it does not parse
 * (the CRD refuses such a spec, and the sync worker syncs nothing for a TenantCluster that
 * does not parse).
 */
function isolationOf(tc: RawObject, tenant: string) {
  const parsed = IsolationSpecSchema.safeParse(tc.spec?.["isolation"] ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .map((i) => `spec.isolation${i.path.length === 0 ? "" : `.${i.path.join(".")}`}: ${i.message}`)
    .join("; ");
  throw new CliError(
    `TenantCluster ${tenant} ${issues}, so the sync worker syncs nothing for this tenant; fix spec.isolation`,
  );
}

interface SpecSchema<T> {
  safeParse(
    value: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> } };
}

function checkSpec<T>(
  schema: SpecSchema<T>,
  object: RawObject | undefined,
  what: string,
  tenant: string,
  field: string,
): T {
  if (object === undefined) {
    throw new CliError(
      `TenantCluster ${tenant} ${field}: ${what} does not exist, so the sync worker syncs nothing for this tenant; create it or change ${field}`,
    );
  }
  const parsed = schema.safeParse(object.spec);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `spec.${i.path.join(".")}: ${i.message}`).join("; ");
    throw new CliError(`${what} is invalid (${issues}), so the sync worker syncs nothing for tenant ${tenant}; fix it`);
  }
  return parsed.data;
}

/**
 * Every object of the syncable kinds in the tenant's host namespace (`tp-<tenant>`), each
 * with its kind set; sync copies, foreign objects and tenantplane's own objects alike, since
 * the planner decides which are whose. Returns the kinds listed, all complete.
 */
export async function listHostObjects(
  host: Cluster,
  tenant: string,
): Promise<{ objects: RawObject[]; completeKinds: string[] }> {
  const namespace = hostNamespaceFor(tenant);
  const lists = await Promise.all(
    SYNC_KINDS.map((kind) =>
      onCluster(
        host,
        `list ${kind}s in ${namespace}`,
        (o) => o.list<RawObject & { apiVersion: string }>("v1", kind, { namespace }),
        `list on ${kind.toLowerCase()}s in namespace ${namespace}`,
      ),
    ),
  );
  return { objects: lists.flat(), completeKinds: [...SYNC_KINDS] };
}
