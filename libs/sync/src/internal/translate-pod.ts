import { hostName, isDnsLabel } from "@tenantplane/mapping";
import { DEFAULT_SERVICE_ACCOUNT, ROOT_CA_CONFIGMAP } from "../system-objects.js";
import { type JsonObject, join, objectAt, objectsAt, renameAt } from "./json.js";
import { describeToleration, enforcedTolerations, GRANTED_TOLERATIONS } from "./tolerations.js";
import { translatePodSelectors } from "./translate-selector.js";
import type { TranslateContext } from "./translate-context.js";
import { hostReference, keepWhere, type Resolve, rewriteRef } from "./translate-reference.js";
import { translateClaimTemplate } from "./translate-volume-claim.js";
import { TokenRewriter, translatePodEnvironment } from "./translate-pod-env.js";

const CONTAINER_LISTS = ["containers", "initContainers"] as const;
/** Volume types whose credentials come from a Secret named in `secretRef`. */
const SECRET_REF_VOLUMES = ["cephfs", "rbd", "flexVolume", "iscsi", "scaleIO", "storageos"] as const;

interface Resolvers {
  configMap: Resolve;
  secret: Resolve;
  claim: Resolve;
}

/**
 * Points a Pod's references (volumes, env, envFrom, imagePullSecrets, service account,
 * subdomain) at the host copies, settles those to kinds the SyncPolicy does not sync
 * (see {@link hostReference}; the service account becomes the host namespace's
 * `default`), keeps its selectors to its own virtual namespace, and removes what the host
 * must decide or must never grant: the node, the admission-computed priority, any host
 * service-account token, tolerations the profile does not grant, and ephemeral
 * containers (the API accepts those only through a subresource, never on create).
 */
export function translatePod(pod: JsonObject, ctx: TranslateContext): void {
  const spec = objectAt(pod, "spec", "");
  if (spec === undefined) return;
  const refs: Resolvers = {
    secret: (name, field, optional) => hostReference(ctx, "Secret", name, field, optional),
    // The root CA ConfigMap is never synced; the host namespace's own one stands in.
    configMap: (name, field, optional) =>
      name === ROOT_CA_CONFIGMAP ? name : hostReference(ctx, "ConfigMap", name, field, optional),
    // A claim has no optional form: the Pod cannot start without it.
    claim: (name, field) => hostReference(ctx, "PersistentVolumeClaim", name, field, false),
  };

  const tokens = new TokenRewriter(hostName({ tenant: ctx.tenant, namespace: ctx.namespace, name: ctx.name }).name);
  for (const [volume, path] of objectsAt(spec, "volumes", "spec")) {
    translateVolume(volume, path, ctx, refs, tokens);
  }
  delete spec["ephemeralContainers"];
  for (const list of CONTAINER_LISTS) {
    for (const [container, path] of objectsAt(spec, list, "spec")) translateContainer(container, path, refs);
  }
  // The kubelet pulls without a pull secret it cannot find, so one that never reaches the host is left out.
  keepWhere(spec, "imagePullSecrets", "spec", (secretRef, path) =>
    rewriteRef(secretRef, "name", path, refs.secret, true),
  );
  refuseResourceClaims(spec, ctx);

  // `serviceAccount` is the deprecated alias; the host copy carries only serviceAccountName.
  spec["serviceAccountName"] ??= spec["serviceAccount"];
  delete spec["serviceAccount"];
  const account = spec["serviceAccountName"];
  const virtualAccount = typeof account === "string" && account !== "" ? account : DEFAULT_SERVICE_ACCOUNT;
  const environment = translatePodEnvironment(spec, ctx, ctx.podEnvironment, tokens, virtualAccount);
  for (const [key, value] of Object.entries(environment.annotations)) ctx.annotate(key, value);
  for (const rewrite of environment.rewrites) ctx.explain(rewrite);
  renameAt(spec, "serviceAccountName", "spec", (name) => hostServiceAccount(name, ctx));
  translateSubdomain(spec, ctx);
  // Tenant Pods must never carry credentials for the host API.
  spec["automountServiceAccountToken"] = false;
  delete spec["nodeName"];
  // The host's Priority and RuntimeClass admission recompute these from the class names and reject a mismatch.
  delete spec["priority"];
  delete spec["preemptionPolicy"];
  delete spec["overhead"];
  translatePodSelectors(spec, ctx);
  enforcePlacement(spec, ctx);
}

/**
 * The host ServiceAccount a Pod runs as. The host namespace's own `default` stands in for
 * the tenant's `default`, and for every account the SyncPolicy does not sync (a host Pod
 * naming an account that does not exist is refused by the host's admission). Either way
 * the Pod holds no host token: its tenant token comes from the tenant API.
 */
function hostServiceAccount(name: string, ctx: TranslateContext): string {
  if (name === DEFAULT_SERVICE_ACCOUNT) return name;
  if (ctx.syncs("ServiceAccount")) return ctx.refer("ServiceAccount", name);
  ctx.explain(
    `runs as host ServiceAccount ${DEFAULT_SERVICE_ACCOUNT}: SyncPolicy does not sync ServiceAccount ${name}`,
  );
  return DEFAULT_SERVICE_ACCOUNT;
}

// Dynamic resource claims name ResourceClaims or ResourceClaimTemplates of the Pod's own
// namespace, and those never reach the host: the host Pod would wait for them forever.
function refuseResourceClaims(spec: JsonObject, ctx: TranslateContext): void {
  for (const [claim, path] of objectsAt(spec, "resourceClaims", "spec")) {
    const template = claim["resourceClaimTemplateName"];
    const kind = typeof template === "string" ? "ResourceClaimTemplate" : "ResourceClaim";
    const name = typeof template === "string" ? template : String(claim["resourceClaimName"] ?? claim["name"]);
    ctx.refuse(path, `${kind} ${name} will never have a host copy: tenantplane does not sync ${kind}`);
  }
}

function translateVolume(
  volume: JsonObject,
  path: string,
  ctx: TranslateContext,
  refs: Resolvers,
  tokens: TokenRewriter,
): void {
  // The kubelet mounts a missing optional ConfigMap or Secret as an empty directory.
  if (!rewriteRef(objectAt(volume, "configMap", path), "name", join(path, "configMap"), refs.configMap)) {
    emptyInstead(volume, "configMap");
  }
  if (!rewriteRef(objectAt(volume, "secret", path), "secretName", join(path, "secret"), refs.secret)) {
    emptyInstead(volume, "secret");
  }
  const claimPath = join(path, "persistentVolumeClaim");
  rewriteRef(objectAt(volume, "persistentVolumeClaim", path), "claimName", claimPath, refs.claim);
  translateProjected(objectAt(volume, "projected", path), join(path, "projected"), refs, tokens);
  // Volume plugins need their credentials: these Secret references are never optional.
  for (const type of SECRET_REF_VOLUMES) {
    const typePath = join(path, type);
    const secretRef = objectAt(objectAt(volume, type, path) ?? {}, "secretRef", typePath);
    rewriteRef(secretRef, "name", join(typePath, "secretRef"), refs.secret, false);
  }
  const csiPath = join(path, "csi");
  const publishRef = objectAt(objectAt(volume, "csi", path) ?? {}, "nodePublishSecretRef", csiPath);
  rewriteRef(publishRef, "name", join(csiPath, "nodePublishSecretRef"), refs.secret, false);
  rewriteRef(objectAt(volume, "azureFile", path), "secretName", join(path, "azureFile"), refs.secret, false);
  const ephemeral = objectAt(volume, "ephemeral", path);
  const template = ephemeral && objectAt(ephemeral, "volumeClaimTemplate", join(path, "ephemeral"));
  if (template !== undefined) translateClaimTemplate(template, join(path, "ephemeral.volumeClaimTemplate"), ctx);
}

function emptyInstead(volume: JsonObject, source: string): void {
  delete volume[source];
  volume["emptyDir"] = {};
}

// A Pod with a subdomain gets the DNS name <hostname>.<subdomain>.<namespace>.svc from the
// headless Service of that name: on the host that Service carries its host name, and the
// hostname must stay the tenant's, not default to the host Pod's name.
function translateSubdomain(spec: JsonObject, ctx: TranslateContext): void {
  if (spec["subdomain"] === undefined || spec["subdomain"] === null || spec["subdomain"] === "") return;
  renameAt(spec, "subdomain", "spec", (name) => ctx.refer("Service", name));
  if ((spec["hostname"] === undefined || spec["hostname"] === "") && isDnsLabel(ctx.name)) spec["hostname"] = ctx.name;
}

function translateProjected(
  projected: JsonObject | undefined,
  path: string,
  refs: Resolvers,
  tokens: TokenRewriter,
): void {
  if (projected === undefined) return;
  // A missing optional source adds nothing to the projection, so it is left out.
  const sources = objectsAt(projected, "sources", path).filter(([source, sourcePath]) =>
    keepNamed(source, sourcePath, [
      ["configMap", refs.configMap],
      ["secret", refs.secret],
    ]),
  );
  // A token projected on the host would be minted for a host ServiceAccount: the tenant's
  // token comes from the host Pod's token Secret instead (after the renames, which must not
  // touch that Secret's name).
  if (projected["sources"] !== undefined) projected["sources"] = tokens.rewrite(sources);
}

// The kubelet skips an optional variable or envFrom source it cannot find, so one that
// never reaches the host is left out.
function translateContainer(container: JsonObject, path: string, refs: Resolvers): void {
  keepWhere(container, "env", path, (env, envPath) => {
    const valueFrom = objectAt(env, "valueFrom", envPath);
    return (
      valueFrom === undefined ||
      keepNamed(valueFrom, join(envPath, "valueFrom"), [
        ["configMapKeyRef", refs.configMap],
        ["secretKeyRef", refs.secret],
      ])
    );
  });
  keepWhere(container, "envFrom", path, (source, sourcePath) =>
    keepNamed(source, sourcePath, [
      ["configMapRef", refs.configMap],
      ["secretRef", refs.secret],
    ]),
  );
}

/** Rewrites the reference `parent[key].name` of each listed key; false when one is to be left out. */
function keepNamed(parent: JsonObject, path: string, refs: Array<[string, Resolve]>): boolean {
  return refs.every(([key, resolve]) => rewriteRef(objectAt(parent, key, path), "name", join(path, key), resolve));
}

/**
 * Adds the profile's node selector and tolerations (the planner has already refused a
 * conflicting node selector value) and removes the tenant's tolerations the profile does
 * not grant: a toleration only widens where a Pod may run, so the Pod runs without it.
 */
function enforcePlacement(spec: JsonObject, ctx: TranslateContext): void {
  const { nodeSelector, tolerations } = ctx.rules;
  if (Object.keys(nodeSelector).length > 0) {
    const own = objectAt(spec, "nodeSelector", "spec") ?? {};
    spec["nodeSelector"] = { ...own, ...nodeSelector };
  }
  if (tolerations.length > 0 || spec["tolerations"] !== undefined) {
    objectsAt(spec, "tolerations", "spec");
    const enforced = enforcedTolerations(spec["tolerations"], ctx.rules);
    spec["tolerations"] = enforced.tolerations;
    for (const removed of enforced.removed) {
      ctx.explain(`toleration ${describeToleration(removed)} removed: not granted by ${GRANTED_TOLERATIONS}`);
    }
  }
}
