import { API_VERSION, canonicalJson, KIND_TENANT_CLUSTER } from "@tenantplane/api";
import {
  ANNOTATION_STORAGE_CLASS_SOURCE,
  isManaged,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  labelValue,
  MANAGED_BY,
  storageClassCopyName,
} from "@tenantplane/mapping";
import { BETA_DEFAULT_CLASS_ANNOTATION, DEFAULT_CLASS_ANNOTATION } from "./default-storage-class.js";
import type { StorageRules } from "./host-rules.js";

/** A StorageClass as the host API serves it (the fields a copy carries). */
export interface StorageClassObject {
  apiVersion: "storage.k8s.io/v1";
  kind: "StorageClass";
  metadata: {
    name: string;
    uid?: string | undefined;
    resourceVersion?: string | undefined;
    labels?: Record<string, string> | undefined;
    annotations?: Record<string, string> | undefined;
    ownerReferences?: OwnerReference[] | undefined;
    deletionTimestamp?: string | undefined;
  };
  provisioner: string;
  parameters?: Record<string, string> | undefined;
  reclaimPolicy?: string | undefined;
  volumeBindingMode?: string | undefined;
  allowVolumeExpansion?: boolean | undefined;
  mountOptions?: string[] | undefined;
  allowedTopologies?: unknown[] | undefined;
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** One action on one of a tenant's StorageClass copies, and why. */
export interface StorageClassCopyDecision {
  action: "Create" | "Update" | "Delete" | "Skip";
  /** The copy's name. */
  name: string;
  /** The host class it copies. */
  hostClass: string;
  reason: string;
  /** The desired copy (Create, Update). */
  object?: StorageClassObject;
  /** The copy on the host (Update, Delete): its uid and resourceVersion are the write's preconditions. */
  current?: StorageClassObject;
}

/** What {@link planStorageClassCopies} compares. */
export interface StorageClassCopyInput {
  tenant: string;
  /** The TenantCluster's uid: it owns every copy, so the host's garbage collector deletes them with it. */
  tenantUid: string;
  storage: StorageRules;
  /** Every StorageClass on the host, copies included. */
  hostClasses: readonly StorageClassObject[];
}

/** Fields a StorageClass cannot change once made: a copy that differs in one is made again. */
const IMMUTABLE_FIELDS = ["provisioner", "parameters", "reclaimPolicy", "volumeBindingMode"] as const;
/** Fields an update may change in place. */
const MUTABLE_FIELDS = ["allowVolumeExpansion", "mountOptions", "allowedTopologies"] as const;
/** What the API server fills in when a class leaves them out. */
const SERVER_DEFAULTS: Partial<Record<(typeof IMMUTABLE_FIELDS)[number], string>> = {
  reclaimPolicy: "Delete",
  volumeBindingMode: "Immediate",
};

const ALLOWED = "IsolationProfile spec.workloads.storage.allowedClasses";

/**
 * The host classes `tenant`'s claims may use (its profile's allowedClasses, else the host's
 * default class), each of which gets a copy; undefined when that is not known (the host's
 * default class unknown and no allowedClasses), in which case nothing is planned at all.
 */
export function copiedClasses(storage: StorageRules): readonly string[] | undefined {
  if (storage.allowedClasses !== undefined) return storage.allowedClasses;
  if (storage.hostDefaultClass === undefined) return undefined;
  return storage.hostDefaultClass === null ? [] : [storage.hostDefaultClass];
}

/**
 * Plans `tenant`'s StorageClass copies: one per host class its claims may use (see
 * {@link copiedClasses}) that exists on the host, named {@link storageClassCopyName}, with the
 * host class's provisioner, parameters, reclaim policy, binding mode, expansion, mount options
 * and topologies, tenantplane's labels, the host class named in an annotation, and the
 * TenantCluster as owner. Never the default-class annotation: a copy is never a host default.
 * A copy whose host class changed a field that cannot change is deleted (made again on the
 * next pass); other changes are updates; a copy whose class is no longer allowed or gone is
 * deleted; a name held by anything else is a Skip. Pure: the caller applies the decisions.
 */
export function planStorageClassCopies(input: StorageClassCopyInput): StorageClassCopyDecision[] {
  const classes = copiedClasses(input.storage);
  if (classes === undefined) return [];
  const byName = new Map(input.hostClasses.map((c) => [c.metadata.name, c]));
  const decisions: StorageClassCopyDecision[] = [];
  const wanted = new Set<string>();
  const why =
    input.storage.allowedClasses === undefined
      ? `the host's default StorageClass, the only one ${ALLOWED} (absent) allows`
      : `allowed by ${ALLOWED}`;
  for (const hostClass of classes) {
    const source = byName.get(hostClass);
    // A class that is itself a copy is never copied again (a profile could list one by name).
    if (source === undefined || isManaged(source.metadata)) continue;
    const name = storageClassCopyName(input.tenant, hostClass);
    wanted.add(name);
    const desired = copyOf(source, name, input.tenant, input.tenantUid);
    const current = byName.get(name);
    if (current === undefined) {
      decisions.push({
        action: "Create",
        name,
        hostClass,
        object: desired,
        reason:
          `copy of host StorageClass ${hostClass} (${why}) for tenant ${input.tenant}'s claims: ` +
          `their host copies ask for it, so only volumes provisioned for them (or made for this copy) can bind`,
      });
      continue;
    }
    if (!ownedBy(current, input.tenant)) {
      decisions.push({
        action: "Skip",
        name,
        hostClass,
        reason: `StorageClass ${name} exists and is not tenant ${input.tenant}'s copy of ${hostClass}: left alone; claims of ${hostClass} stay Pending until it is removed`,
      });
      continue;
    }
    if (current.metadata.deletionTimestamp !== undefined) continue;
    const immutable = IMMUTABLE_FIELDS.filter((f) => !same(normalised(current, f), normalised(desired, f)));
    if (immutable.length > 0) {
      decisions.push({
        action: "Delete",
        name,
        hostClass,
        current,
        reason:
          `host StorageClass ${hostClass} changed ${immutable.join(", ")}, which a StorageClass cannot change: ` +
          `the copy is made again; claims already bound keep their volumes (a class is read only to provision or expand)`,
      });
      continue;
    }
    const changed = [
      ...MUTABLE_FIELDS.filter((f) => !same(current[f], desired[f])),
      ...(same(ourMetadata(current), ourMetadata(desired)) ? [] : ["metadata"]),
    ];
    if (changed.length > 0) {
      decisions.push({
        action: "Update",
        name,
        hostClass,
        current,
        object: desired,
        reason: `copy of host StorageClass ${hostClass} brought in step: ${changed.join(", ")}`,
      });
    }
  }
  for (const current of input.hostClasses) {
    if (!ownedBy(current, input.tenant) || wanted.has(current.metadata.name)) continue;
    if (current.metadata.deletionTimestamp !== undefined) continue;
    const hostClass = current.metadata.annotations?.[ANNOTATION_STORAGE_CLASS_SOURCE] ?? "(unknown)";
    const gone = !classes.includes(hostClass)
      ? `host class ${hostClass} is no longer ${input.storage.allowedClasses === undefined ? "the host's default StorageClass" : `in ${ALLOWED}`}`
      : `host StorageClass ${hostClass} is gone`;
    decisions.push({
      action: "Delete",
      name: current.metadata.name,
      hostClass,
      current,
      reason: `${gone}: no new claim of tenant ${input.tenant} asks for this copy; claims already bound keep their volumes`,
    });
  }
  return decisions;
}

/** True for a StorageClass that is `tenant`'s copy (tenantplane's labels for that tenant). */
export function isStorageClassCopyOf(sc: StorageClassObject, tenant: string): boolean {
  return ownedBy(sc, tenant);
}

function ownedBy(sc: StorageClassObject, tenant: string): boolean {
  const labels = sc.metadata.labels ?? {};
  return (
    labels[LABEL_MANAGED_BY] === MANAGED_BY &&
    labels[LABEL_TENANT] === labelValue(tenant) &&
    sc.metadata.annotations?.[ANNOTATION_STORAGE_CLASS_SOURCE] !== undefined
  );
}

function copyOf(source: StorageClassObject, name: string, tenant: string, tenantUid: string): StorageClassObject {
  const copy: StorageClassObject = {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name,
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_TENANT]: labelValue(tenant) },
      annotations: { [ANNOTATION_STORAGE_CLASS_SOURCE]: source.metadata.name },
      ownerReferences: [
        { apiVersion: API_VERSION, kind: KIND_TENANT_CLUSTER, name: tenant, uid: tenantUid, controller: true },
      ],
    },
    provisioner: source.provisioner,
  };
  for (const field of [
    "parameters",
    "reclaimPolicy",
    "volumeBindingMode",
    "allowVolumeExpansion",
    "mountOptions",
    "allowedTopologies",
  ] as const) {
    if (source[field] !== undefined) (copy as unknown as Record<string, unknown>)[field] = source[field];
  }
  return copy;
}

// The metadata a copy's writer owns; the host's own (uid, managedFields, other labels) is not compared.
function ourMetadata(sc: StorageClassObject): unknown {
  const labels = sc.metadata.labels ?? {};
  const annotations = sc.metadata.annotations ?? {};
  return {
    managedBy: labels[LABEL_MANAGED_BY],
    tenant: labels[LABEL_TENANT],
    source: annotations[ANNOTATION_STORAGE_CLASS_SOURCE],
    default: annotations[DEFAULT_CLASS_ANNOTATION] ?? annotations[BETA_DEFAULT_CLASS_ANNOTATION],
    owners: (sc.metadata.ownerReferences ?? []).map((o) => `${o.apiVersion}/${o.kind}/${o.name}/${o.uid}`),
  };
}

function normalised(sc: StorageClassObject, field: (typeof IMMUTABLE_FIELDS)[number]): unknown {
  const value = sc[field];
  if (field === "parameters") return value ?? {};
  return value ?? SERVER_DEFAULTS[field];
}

function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}
