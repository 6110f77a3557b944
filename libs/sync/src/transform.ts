import {
  ANNOTATION_CONTENT_HASH,
  escapeReserved,
  hostName,
  hostNamespaceFor,
  reverseMapping,
  stripReserved,
  type VirtualIdentity,
} from "@tenantplane/mapping";
import { contentHashSteps, runSteps } from "./content-hash.js";
import { isHostActingKey } from "./host-acting-keys.js";
import { defaultHostRules, type HostRules } from "./host-rules.js";
import { copyJson, type JsonObject } from "./internal/json.js";
import { MAX_TENANT_KEY, tenantText } from "./internal/violation.js";
import type { ReferencedKind, TranslateContext } from "./internal/translate-context.js";
import { translatePod } from "./internal/translate-pod.js";
import { translateServiceAccount } from "./internal/translate-service-account.js";
import { translateService } from "./internal/translate-service.js";
import { isVolumeBindingAnnotation, translateVolumeClaim } from "./internal/translate-volume-claim.js";
import { DEFAULT_NAMESPACE, type HostObject, type KubeObject } from "./kube-object.js";
import { placeholderPodEnvironment, type PodEnvironment } from "./pod-environment.js";

const TRANSLATORS: Record<string, (obj: JsonObject, ctx: TranslateContext) => void> = {
  Pod: translatePod,
  Service: translateService,
  ServiceAccount: translateServiceAccount,
  PersistentVolumeClaim: translateVolumeClaim,
};

/** Top-level fields that describe the tenant's server, not the desired object. */
const SERVER_FIELDS = ["apiVersion", "kind", "metadata", "status"];

/** The virtual identity of a tenant object; a missing namespace means `default`. */
export function virtualIdentity(obj: KubeObject, tenant: string): VirtualIdentity {
  return { tenant, namespace: obj.metadata.namespace ?? DEFAULT_NAMESPACE, name: obj.metadata.name };
}

/** Settings that shape a host copy beyond the tenant object itself. */
export interface TransformOptions {
  /** Per-installation secret keying the content hash; see {@link contentHash}. */
  hashKey?: string | undefined;
  /** Host rules whose node selector and tolerations are enforced on Pods; absent: the default profile's. */
  rules?: HostRules | undefined;
  /** Where host Pods reach the tenant's API and DNS; absent: placeholders naming the Services (offline). */
  podEnvironment?: PodEnvironment | undefined;
  /**
   * The kinds the SyncPolicy copies to the host. A reference to another kind never finds a
   * host copy: a Pod's ServiceAccount becomes the host namespace's `default`, an optional
   * ConfigMap or Secret is left out, a required one is a {@link Translation.refusals} entry.
   * Absent: every kind is synced.
   */
  syncedKinds?: readonly string[] | undefined;
}

/** Why a host copy cannot work as its tenant object is written: the tenant field and its problem. */
export interface Refusal {
  field: string;
  problem: string;
}

/** A name the source refers to, in its own virtual namespace. */
export interface Reference {
  kind: ReferencedKind;
  name: string;
}

/** A host copy and the same-namespace objects its references point at (each once, in order of appearance). */
export interface Translation {
  object: HostObject;
  references: Reference[];
  /**
   * Rewrites that change what the host copy can reach or asks for (a Pod's API address,
   * DNS, token, downward API, service account, references and tolerations left out), in words.
   */
  rewrites: string[];
  /**
   * What keeps the host copy from working (a required reference no host copy will ever
   * answer, a storage class asked two ways): the planner skips such an object. Empty when it can be synced.
   */
  refusals: Refusal[];
}

/**
 * The host copy of tenant object `obj`: a deep copy renamed into `tp-<tenant>`, keeping
 * only name, namespace, labels and annotations of its metadata, with reverse-mapping
 * metadata that overrides anything the tenant set under tenantplane's keys (its own
 * reserved label keys are escaped, reserved annotations dropped), references rewritten to
 * other host copies, no status, and a content-hash annotation over the rest. Throws
 * {@link MalformedObjectError} naming the field it cannot translate.
 */
export function transform(obj: KubeObject, tenant: string, options: TransformOptions = {}): HostObject {
  return translate(obj, tenant, options).object;
}

/** {@link transform}, also reporting which objects the host copy refers to. */
export function translate(obj: KubeObject, tenant: string, options: TransformOptions = {}): Translation {
  return runSteps(translateSteps(obj, tenant, options));
}

/**
 * {@link translate} as steps: the generator pauses (yields) between slices of the content hash
 * (see {@link contentHashSteps}), so a caller can serve its event loop while a megabyte object
 * is hashed, and returns the translation. `obj` must not change meanwhile. The host copy shares
 * the source's strings (its data values are the same strings, not copies).
 */
export function* translateSteps(
  obj: KubeObject,
  tenant: string,
  options: TransformOptions = {},
): Generator<void, Translation, void> {
  const id = virtualIdentity(obj, tenant);
  const body = copyJson(obj) as JsonObject;
  const references = new Map<string, Reference>();
  const extraAnnotations: Record<string, string> = {};
  const rewrites: string[] = [];
  const refusals: Refusal[] = [];
  const synced = options.syncedKinds === undefined ? undefined : new Set(options.syncedKinds);
  const ctx: TranslateContext = {
    tenant,
    namespace: id.namespace,
    name: id.name,
    refer: (kind, name) => {
      references.set(`${kind}/${name}`, { kind, name });
      return hostName({ ...id, name }).name;
    },
    syncs: (kind) => synced === undefined || synced.has(kind),
    refuse: (field, problem) => refusals.push({ field, problem }),
    rules: options.rules ?? defaultHostRules,
    uid: typeof obj.metadata["uid"] === "string" ? obj.metadata["uid"] : undefined,
    labels: obj.metadata.labels ?? {},
    podEnvironment: options.podEnvironment ?? placeholderPodEnvironment(),
    annotate: (key, value) => {
      extraAnnotations[key] = value;
    },
    explain: (rewrite) => rewrites.push(rewrite),
  };
  TRANSLATORS[obj.kind]?.(body, ctx);

  const mapping = reverseMapping(id, obj.kind);
  const annotations = dropHostActing(stripReserved(obj.metadata.annotations), "annotations", ctx);
  const labels = dropHostActing(escapeReserved(obj.metadata.labels), "labels", ctx);
  if (obj.kind === "PersistentVolumeClaim") {
    for (const key of Object.keys(annotations)) if (isVolumeBindingAnnotation(key)) delete annotations[key];
  }
  const desired: HostObject = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: hostName(id).name,
      namespace: hostNamespaceFor(tenant),
      labels: { ...labels, ...mapping.labels },
      annotations: { ...annotations, ...extraAnnotations, ...mapping.annotations },
    },
  };
  for (const [key, value] of Object.entries(body)) {
    if (!SERVER_FIELDS.includes(key)) desired[key] = value;
  }
  desired.metadata.annotations[ANNOTATION_CONTENT_HASH] = yield* contentHashSteps(desired, options.hashKey);
  return { object: desired, references: [...references.values()], rewrites, refusals };
}

/** Most dropped keys a reason names before counting the rest. */
const MAX_NAMED_KEYS = 3;

// Host add-ons (CNI plugins, load-balancer controllers) act on these keys wherever they find
// them, so a tenant could pick host networks, addresses or load balancers through its own metadata.
function dropHostActing(map: Record<string, string>, field: string, ctx: TranslateContext): Record<string, string> {
  const allowed = ctx.rules.allowedAnnotationPrefixes;
  const dropped = Object.keys(map).filter((key) => isHostActingKey(key, allowed));
  if (dropped.length === 0) return map;
  const kept = { ...map };
  for (const key of dropped) delete kept[key];
  const named = dropped.slice(0, MAX_NAMED_KEYS).map((key) => tenantText(key, MAX_TENANT_KEY));
  const rest = dropped.length - named.length;
  ctx.explain(
    `metadata.${field} ${named.join(", ")}${rest > 0 ? ` and ${rest} more` : ""} dropped: host add-ons act on them ` +
      `(IsolationProfile spec.workloads.allowedAnnotationPrefixes can keep a prefix)`,
  );
  return kept;
}

/** The content hash recorded on a host object, or undefined when it has none. */
export function recordedContentHash(metadata: {
  annotations?: Record<string, string> | undefined;
}): string | undefined {
  return metadata.annotations?.[ANNOTATION_CONTENT_HASH];
}
