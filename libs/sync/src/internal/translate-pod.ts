import { hostName, isDnsLabel } from "@tenantplane/mapping";
import { DEFAULT_SERVICE_ACCOUNT, ROOT_CA_CONFIGMAP } from "../system-objects.js";
import { enforcedTolerations } from "./check-pod.js";
import { type JsonObject, join, objectAt, objectsAt, renameAt } from "./json.js";
import { translatePodSelectors } from "./translate-selector.js";
import type { TranslateContext } from "./translate-context.js";
import { translateClaimTemplate } from "./translate-volume-claim.js";
import { TokenRewriter, translatePodEnvironment } from "./translate-pod-env.js";

const CONTAINER_LISTS = ["containers", "initContainers"] as const;
/** Volume types whose credentials come from a Secret named in `secretRef`. */
const SECRET_REF_VOLUMES = ["cephfs", "rbd", "flexVolume", "iscsi", "scaleIO", "storageos"] as const;

type Rename = (name: string) => string;

/**
 * Points a Pod's references (volumes, env, envFrom, imagePullSecrets, service account,
 * subdomain) at the host copies, keeps its selectors to its own virtual namespace, and
 * removes what the host must decide or must never grant: the node, the admission-computed
 * priority, any host service-account token, and ephemeral containers (the API accepts
 * those only through a subresource, never on create).
 */
export function translatePod(pod: JsonObject, ctx: TranslateContext): void {
  const spec = objectAt(pod, "spec", "");
  if (spec === undefined) return;
  const secret: Rename = (name) => ctx.refer("Secret", name);
  // The root CA ConfigMap is never synced; the host namespace's own one stands in.
  const configMap: Rename = (name) => (name === ROOT_CA_CONFIGMAP ? name : ctx.refer("ConfigMap", name));

  const tokens = new TokenRewriter(hostName({ tenant: ctx.tenant, namespace: ctx.namespace, name: ctx.name }).name);
  for (const [volume, path] of objectsAt(spec, "volumes", "spec")) {
    translateVolume(volume, path, ctx, configMap, secret, tokens);
  }
  delete spec["ephemeralContainers"];
  for (const list of CONTAINER_LISTS) {
    for (const [container, path] of objectsAt(spec, list, "spec")) {
      translateContainer(container, path, configMap, secret);
    }
  }
  for (const [secretRef, path] of objectsAt(spec, "imagePullSecrets", "spec")) {
    renameAt(secretRef, "name", path, secret);
  }

  // `serviceAccount` is the deprecated alias; the host copy carries only serviceAccountName.
  spec["serviceAccountName"] ??= spec["serviceAccount"];
  delete spec["serviceAccount"];
  const account = spec["serviceAccountName"];
  const virtualAccount = typeof account === "string" && account !== "" ? account : DEFAULT_SERVICE_ACCOUNT;
  const environment = translatePodEnvironment(spec, ctx, ctx.podEnvironment, tokens, virtualAccount);
  for (const [key, value] of Object.entries(environment.annotations)) ctx.annotate(key, value);
  for (const rewrite of environment.rewrites) ctx.explain(rewrite);
  // The host namespace's own default ServiceAccount stands in for the tenant's.
  renameAt(spec, "serviceAccountName", "spec", (name) =>
    name === DEFAULT_SERVICE_ACCOUNT ? name : ctx.refer("ServiceAccount", name),
  );
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

function translateVolume(
  volume: JsonObject,
  path: string,
  ctx: TranslateContext,
  configMap: Rename,
  secret: Rename,
  tokens: TokenRewriter,
) {
  renameAt(objectAt(volume, "configMap", path), "name", join(path, "configMap"), configMap);
  renameAt(objectAt(volume, "secret", path), "secretName", join(path, "secret"), secret);
  renameAt(objectAt(volume, "persistentVolumeClaim", path), "claimName", join(path, "persistentVolumeClaim"), (name) =>
    ctx.refer("PersistentVolumeClaim", name),
  );
  translateProjected(objectAt(volume, "projected", path), join(path, "projected"), configMap, secret, tokens);
  for (const type of SECRET_REF_VOLUMES) {
    const typePath = join(path, type);
    const secretRef = objectAt(objectAt(volume, type, path) ?? {}, "secretRef", typePath);
    renameAt(secretRef, "name", join(typePath, "secretRef"), secret);
  }
  const csiPath = join(path, "csi");
  const publishRef = objectAt(objectAt(volume, "csi", path) ?? {}, "nodePublishSecretRef", csiPath);
  renameAt(publishRef, "name", join(csiPath, "nodePublishSecretRef"), secret);
  renameAt(objectAt(volume, "azureFile", path), "secretName", join(path, "azureFile"), secret);
  const ephemeral = objectAt(volume, "ephemeral", path);
  const template = ephemeral && objectAt(ephemeral, "volumeClaimTemplate", join(path, "ephemeral"));
  if (template !== undefined) translateClaimTemplate(template, join(path, "ephemeral.volumeClaimTemplate"), ctx);
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
  configMap: Rename,
  secret: Rename,
  tokens: TokenRewriter,
): void {
  if (projected === undefined) return;
  const sources = objectsAt(projected, "sources", path);
  for (const [source, sourcePath] of sources) {
    renameAt(objectAt(source, "configMap", sourcePath), "name", join(sourcePath, "configMap"), configMap);
    renameAt(objectAt(source, "secret", sourcePath), "name", join(sourcePath, "secret"), secret);
  }
  // A token projected on the host would be minted for a host ServiceAccount: the tenant's
  // token comes from the host Pod's token Secret instead (after the renames, which must not
  // touch that Secret's name).
  if (projected["sources"] !== undefined) projected["sources"] = tokens.rewrite(sources);
}

function translateContainer(container: JsonObject, path: string, configMap: Rename, secret: Rename): void {
  for (const [env, envPath] of objectsAt(container, "env", path)) {
    const valueFrom = objectAt(env, "valueFrom", envPath);
    if (valueFrom === undefined) continue;
    const fromPath = join(envPath, "valueFrom");
    renameAt(objectAt(valueFrom, "configMapKeyRef", fromPath), "name", join(fromPath, "configMapKeyRef"), configMap);
    renameAt(objectAt(valueFrom, "secretKeyRef", fromPath), "name", join(fromPath, "secretKeyRef"), secret);
  }
  for (const [source, sourcePath] of objectsAt(container, "envFrom", path)) {
    renameAt(objectAt(source, "configMapRef", sourcePath), "name", join(sourcePath, "configMapRef"), configMap);
    renameAt(objectAt(source, "secretRef", sourcePath), "name", join(sourcePath, "secretRef"), secret);
  }
}

/** Adds the profile's node selector and tolerations; the planner has already refused any that conflict. */
function enforcePlacement(spec: JsonObject, ctx: TranslateContext): void {
  const { nodeSelector, tolerations } = ctx.rules;
  if (Object.keys(nodeSelector).length > 0) {
    const own = objectAt(spec, "nodeSelector", "spec") ?? {};
    spec["nodeSelector"] = { ...own, ...nodeSelector };
  }
  if (tolerations.length > 0 || spec["tolerations"] !== undefined) {
    objectsAt(spec, "tolerations", "spec");
    spec["tolerations"] = enforcedTolerations(spec["tolerations"], ctx.rules);
  }
}
