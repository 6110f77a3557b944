import { ANNOTATION_CONTENT_HASH, storageClassCopyName } from "@tenantplane/mapping";
import { contentHash } from "../content-hash.js";
import type { StorageRules } from "../host-rules.js";
import type { HostObject } from "../kube-object.js";
import { isJsonObject, type JsonObject, join, objectAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";
import { hostReference } from "./translate-reference.js";
import { MAX_TENANT_KEY, tenantText } from "./violation.js";

const STORAGE = "IsolationProfile spec.workloads.storage";
/** Prefixes of the annotations Kubernetes' volume controllers write on a claim to record or steer its binding. */
const BINDING_ANNOTATION_PREFIXES = ["pv.kubernetes.io/", "volume.kubernetes.io/", "volume.beta.kubernetes.io/"];
/** The storage class annotation that predates `spec.storageClassName`: a class request, settled on its own. */
export const BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class";
/** Most stripped fields a reason names before counting the rest. */
const MAX_NAMED = 4;

/** True for annotations a claim's host copy must not inherit (binding state, provisioner, selected node, class). */
export function isVolumeBindingAnnotation(key: string): boolean {
  return BINDING_ANNOTATION_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/**
 * What a tenant claim (a PersistentVolumeClaim, or an ephemeral volume's template) may ask
 * of the host's volume controllers, applied to its host copy: the fields that pick or
 * pre-bind a particular host volume are dropped and named, the storage class is mapped and
 * must be one the profile allows, and data sources may only be the tenant's own claims.
 * `annotations` are the claim's own (the caller drops the binding ones; they are only named
 * here). A claim that cannot be honoured is refused through `ctx.refuse`.
 */
export function settleClaim(
  spec: JsonObject,
  specPath: string,
  annotations: Readonly<Record<string, unknown>>,
  metadataPath: string,
  ctx: TranslateContext,
): void {
  dropBinding(spec, specPath, annotations, metadataPath, ctx);
  settleStorageClass(spec, specPath, ctx.rules.storage, ctx);
  settleDataSources(spec, specPath, ctx);
}

// A tenant names no host volume: `volumeName` would bind one by name, `selector` would pick
// one by its labels (and most provisioners refuse to provision for a claim with a selector),
// and the binding annotations would tell the host's controllers a binding already happened.
function dropBinding(
  spec: JsonObject,
  specPath: string,
  annotations: Readonly<Record<string, unknown>>,
  metadataPath: string,
  ctx: TranslateContext,
): void {
  const dropped: string[] = [];
  for (const key of ["volumeName", "selector"]) {
    const value = spec[key];
    if (value === undefined) continue;
    delete spec[key];
    if (value !== null && value !== "") dropped.push(join(specPath, key));
  }
  for (const key of Object.keys(annotations)) {
    if (isVolumeBindingAnnotation(key) && key !== BETA_STORAGE_CLASS_ANNOTATION)
      dropped.push(`${metadataPath}.annotations[${tenantText(key, MAX_TENANT_KEY)}]`);
  }
  if (dropped.length === 0) return;
  const named = dropped.slice(0, MAX_NAMED);
  const rest = dropped.length - named.length;
  ctx.explain(
    `${named.join(", ")}${rest > 0 ? ` and ${rest} more` : ""} dropped: a tenant claim may not pick, ` +
      `pre-bind or mark as bound a host volume`,
  );
}

/**
 * Resolves the claim's class to the host class it will use: no class means the host's
 * default StorageClass (written into the copy, so the check below is the one the host
 * acts on), a tenant name is mapped through `classMap`, and the result must be allowed.
 * The copy then names the tenant's own copy of that class (`storageClassCopyName`), which
 * the sync worker keeps in step with the host class (storage-class-copies.ts).
 */
function settleStorageClass(spec: JsonObject, specPath: string, rules: StorageRules, ctx: TranslateContext): void {
  const field = join(specPath, "storageClassName");
  const asked = spec["storageClassName"];
  if (asked !== undefined && asked !== null && typeof asked !== "string") return;
  const hostDefault = rules.hostDefaultClass;
  // Without allowedClasses only the host's default class is allowed; offline it is unknown.
  const allowed =
    rules.allowedClasses ?? (hostDefault === undefined ? undefined : hostDefault === null ? [] : [hostDefault]);
  const allowedText =
    rules.allowedClasses === undefined
      ? `absent, so only the host's default StorageClass, ${hostDefault ?? "and the host has none"}`
      : rules.allowedClasses.length === 0
        ? "none allowed"
        : `allowed: ${rules.allowedClasses.join(", ")}`;
  const rule = `${STORAGE}.allowedClasses (${allowedText})`;
  if (asked === "") {
    ctx.refuse(
      field,
      `class "" asks for a pre-made volume without a class, which the host would bind whoever made it: ask for a class in ${rule}`,
    );
    return;
  }
  let hostClass: string;
  if (asked === undefined || asked === null) {
    if (hostDefault === undefined) return;
    if (hostDefault === null) {
      ctx.refuse(
        field,
        `no class asked and the host has no default StorageClass (none is annotated storageclass.kubernetes.io/is-default-class=true): ask for a class in ${rule}`,
      );
      return;
    }
    hostClass = hostDefault;
    spec["storageClassName"] = hostClass;
    ctx.explain(`${field} set to the host's default StorageClass ${hostClass}`);
  } else {
    const mapped = rules.classMap[asked];
    hostClass = mapped ?? asked;
    if (mapped !== undefined && mapped !== asked) {
      spec["storageClassName"] = mapped;
      ctx.explain(`${field} ${asked} mapped to host class ${mapped} by ${STORAGE}.classMap`);
    }
  }
  if (allowed !== undefined && !allowed.includes(hostClass)) {
    ctx.refuse(field, `storage class ${tenantText(hostClass)} is not in ${rule}`);
    return;
  }
  // The host's volume controllers bind a claim to any Available volume of its class: under the
  // tenant's own copy of the class, only volumes provisioned for the tenant's claims (or handed
  // to it by an operator under that class) are candidates, and provisioners still serve it.
  const copy = storageClassCopyName(ctx.tenant, hostClass);
  spec["storageClassName"] = copy;
  ctx.explain(
    `${field} ${tenantText(hostClass)} becomes ${tenantText(copy)}, the tenant's own copy of that host class: ` +
      `no volume made for anyone else can bind`,
  );
}

const SNAPSHOT_GROUP = "snapshot.storage.k8s.io";

/**
 * A claim may be filled only from the tenant's own claims, by their host copies in the same
 * namespace. A source in another namespace, a VolumeSnapshot (tenantplane copies none, so a
 * same-named host snapshot would not be the tenant's) and any other kind (a populator's
 * object the tenant cannot have made on the host) are refused, naming the field.
 */
function settleDataSources(spec: JsonObject, specPath: string, ctx: TranslateContext): void {
  for (const key of ["dataSource", "dataSourceRef"]) {
    const path = join(specPath, key);
    const source = objectAt(spec, key, specPath);
    if (source === undefined) continue;
    const namespace = source["namespace"];
    if (namespace !== undefined && namespace !== null && namespace !== "") {
      if (namespace !== ctx.namespace) {
        ctx.refuse(
          join(path, "namespace"),
          `names a source in namespace ${tenantText(namespace)}: a claim is filled only from the tenant's own claims in its own namespace; leave the field out`,
        );
        continue;
      }
      delete source["namespace"];
    }
    const group = typeof source["apiGroup"] === "string" ? source["apiGroup"] : "";
    const kind = source["kind"];
    const name = source["name"];
    if (typeof name !== "string") continue;
    if (group === "" && kind === "PersistentVolumeClaim") {
      source["name"] = hostReference(ctx, "PersistentVolumeClaim", name, path, false) ?? name;
    } else if (group === SNAPSHOT_GROUP && kind === "VolumeSnapshot") {
      ctx.refuse(
        path,
        `VolumeSnapshot ${tenantText(name)}: tenantplane does not copy VolumeSnapshots, so there is no host copy of the tenant's own to restore from; clone a PersistentVolumeClaim instead`,
      );
    } else {
      ctx.refuse(
        path,
        `${tenantText(kind)}${group === "" ? "" : `.${tenantText(group)}`} ${tenantText(name)}: only PersistentVolumeClaim sources are mapped to the tenant's own host copies`,
      );
    }
  }
}

/** The classes a host object's claims were made with: a claim's own, or each ephemeral volume's template's, by volume name. */
export type StoredClaimClasses = Readonly<Record<string, string>>;

/** Key of a PersistentVolumeClaim's own class in {@link StoredClaimClasses}. */
const OWN_CLASS = "";

/**
 * The storage classes a host copy was made with, as {@link keepStoredClaimClasses} reads them:
 * a PersistentVolumeClaim's `spec.storageClassName`, a Pod's ephemeral volumes' template classes.
 * Undefined for other kinds, or when there are none.
 */
export function storedClaimClasses(kind: string, host: unknown): StoredClaimClasses | undefined {
  const spec = isJsonObject(host) ? host["spec"] : undefined;
  if (!isJsonObject(spec)) return undefined;
  const found: Record<string, string> = {};
  if (kind === "PersistentVolumeClaim" && typeof spec["storageClassName"] === "string") {
    found[OWN_CLASS] = spec["storageClassName"];
  }
  if (kind === "Pod") {
    for (const [name, template] of ephemeralTemplates(spec)) {
      const templateSpec = template["spec"];
      const cls = isJsonObject(templateSpec) ? templateSpec["storageClassName"] : undefined;
      if (typeof cls === "string") found[name] = cls;
    }
  }
  return Object.keys(found).length === 0 ? undefined : found;
}

/**
 * A claim's class cannot change once set (the API server refuses the update, and a Pod's
 * volumes cannot change at all), so the desired copy of a claim, or of a Pod's ephemeral
 * volume, whose host copy already has a class keeps that class: one made before its class was
 * mapped to the tenant's copy (or before a classMap change) keeps its volume and stays in step
 * on every other field. A host claim without a class may still get one, as the API server
 * allows. Returns the desired object with the stored classes and its content hash recomputed,
 * and a note for the reason; undefined when there is nothing to keep.
 */
export function keepStoredClaimClasses(
  desired: HostObject,
  stored: StoredClaimClasses | undefined,
  hashKey: string | undefined,
): { object: HostObject; note: string } | undefined {
  if (stored === undefined) return undefined;
  const differs = (spec: unknown, key: string): boolean =>
    stored[key] !== undefined && isJsonObject(spec) && spec["storageClassName"] !== stored[key];
  const spec = desired["spec"];
  const claim = desired.kind === "PersistentVolumeClaim" && differs(spec, OWN_CLASS);
  const volumes =
    desired.kind === "Pod" && isJsonObject(spec)
      ? ephemeralTemplates(spec)
          .filter(([name, template]) => differs(template["spec"], name))
          .map(([name]) => name)
      : [];
  if (!claim && volumes.length === 0) return undefined;
  const kept = structuredClone(desired);
  const keptSpec = kept["spec"] as JsonObject;
  const fields: string[] = [];
  if (claim) {
    keptSpec["storageClassName"] = stored[OWN_CLASS]!;
    fields.push(`spec.storageClassName kept as ${stored[OWN_CLASS]}`);
  }
  for (const [name, template] of ephemeralTemplates(keptSpec)) {
    if (!volumes.includes(name)) continue;
    (template["spec"] as JsonObject)["storageClassName"] = stored[name]!;
    fields.push(`volume ${name}'s claim template class kept as ${stored[name]}`);
  }
  delete kept.metadata.annotations[ANNOTATION_CONTENT_HASH];
  kept.metadata.annotations[ANNOTATION_CONTENT_HASH] = contentHash(kept, hashKey);
  return {
    object: kept,
    note: `${fields.join(", ")}: the host copy was made with it and a claim's class cannot change`,
  };
}

/** A Pod spec's ephemeral volumes' claim templates, by volume name. */
function ephemeralTemplates(spec: JsonObject): Array<[string, JsonObject]> {
  const volumes = spec["volumes"];
  if (!Array.isArray(volumes)) return [];
  const found: Array<[string, JsonObject]> = [];
  for (const volume of volumes) {
    if (!isJsonObject(volume) || typeof volume["name"] !== "string" || !isJsonObject(volume["ephemeral"])) continue;
    const template = volume["ephemeral"]["volumeClaimTemplate"];
    if (isJsonObject(template)) found.push([volume["name"], template]);
  }
  return found;
}
