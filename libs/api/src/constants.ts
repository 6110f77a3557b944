/** API group of every tenantplane custom resource. */
export const GROUP = "tenantplane.io";
/** The single served and stored version of the tenantplane API. */
export const VERSION = "v1alpha1";
/** `apiVersion` value carried by every tenantplane object. */
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Kind names of the three custom resources. */
export const KIND_TENANT_CLUSTER = "TenantCluster";
export const KIND_ISOLATION_PROFILE = "IsolationProfile";
export const KIND_SYNC_POLICY = "SyncPolicy";

/** Plural resource names, as used in REST paths and RBAC rules. */
export const PLURAL_TENANT_CLUSTERS = "tenantclusters";
export const PLURAL_ISOLATION_PROFILES = "isolationprofiles";
export const PLURAL_SYNC_POLICIES = "syncpolicies";

/** Condition owned by the provisioner: the tenant API server answers through its kubeconfig. */
export const CONDITION_CONTROL_PLANE_READY = "ControlPlaneReady";
/** Condition owned by the isolation service: the profile's objects exist in the host namespace. */
export const CONDITION_ISOLATION_APPLIED = "IsolationApplied";
/** Condition owned by the sync workers: the last sync pass completed without object errors. */
export const CONDITION_SYNCED = "Synced";

/** Lifecycle phases shown in `status.phase`, in the order a healthy tenant moves through them. */
export const TENANT_PHASES = ["Pending", "Provisioning", "Ready", "Failed", "Terminating"] as const;

/** Longest tenant name; leaves room for the `tp-` prefix inside a 63-character namespace name. */
export const MAX_TENANT_NAME_LENGTH = 60;

/**
 * Annotation on a host namespace naming the uid of the TenantCluster that created it, so a
 * TenantCluster re-created under the same name never claims an older one's leftovers.
 */
export const ANNOTATION_TENANT_UID = "tenantplane.io/tenant-uid";
/** Reason of a condition saying a name tenantplane needs is held by an object it did not create. */
export const REASON_NAME_HELD_BY_FOREIGN_OBJECT = "NameHeldByForeignObject";
/** Condition owned by the isolation service: the host nodes of a Dedicated tenant are reserved (tainted) for it. */
export const CONDITION_NODES_RESERVED = "NodesReserved";

/**
 * Key of the taint the isolation service puts on the host nodes reserved for a Dedicated tenant
 * (`tenantplane.io/dedicated=<tenant>:NoSchedule`); the chart's admission policy refuses a Pod
 * outside `tp-<tenant>` that tolerates it.
 */
export const TAINT_KEY_DEDICATED = "tenantplane.io/dedicated";
/** Effect of the dedicated-node taint: nothing new is scheduled there; Pods already running stay. */
export const TAINT_EFFECT_DEDICATED = "NoSchedule";
