import { DEFAULT_SERVICE_ACCOUNT, ROOT_CA_CONFIGMAP } from "../system-objects.js";
import { enforcedTolerations } from "./check-pod.js";
import { type JsonObject, join, objectAt, objectsAt, renameAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";

const CONTAINER_LISTS = ["containers", "initContainers", "ephemeralContainers"] as const;

/**
 * Points a Pod's references (volumes, env, envFrom, imagePullSecrets, service account) at
 * the host copies, and removes what the host must decide or must never grant: the node,
 * the admission-computed priority, and any host service-account token.
 */
export function translatePod(pod: JsonObject, ctx: TranslateContext): void {
  const spec = objectAt(pod, "spec", "");
  if (spec === undefined) return;
  const rename = (name: string) => ctx.hostNameOf(name);
  // The root CA ConfigMap is never synced; the host namespace's own one stands in.
  const renameConfigMap = (name: string) => (name === ROOT_CA_CONFIGMAP ? name : rename(name));

  for (const [volume, path] of objectsAt(spec, "volumes", "spec")) {
    renameAt(objectAt(volume, "configMap", path), "name", join(path, "configMap"), renameConfigMap);
    renameAt(objectAt(volume, "secret", path), "secretName", join(path, "secret"), rename);
    renameAt(objectAt(volume, "persistentVolumeClaim", path), "claimName", join(path, "persistentVolumeClaim"), rename);
    translateProjected(objectAt(volume, "projected", path), join(path, "projected"), renameConfigMap, rename);
  }
  for (const list of CONTAINER_LISTS) {
    for (const [container, path] of objectsAt(spec, list, "spec")) {
      translateContainer(container, path, renameConfigMap, rename);
    }
  }
  for (const [secretRef, path] of objectsAt(spec, "imagePullSecrets", "spec")) {
    renameAt(secretRef, "name", path, rename);
  }

  // `serviceAccount` is the deprecated alias; the host copy carries only serviceAccountName.
  spec["serviceAccountName"] ??= spec["serviceAccount"];
  delete spec["serviceAccount"];
  // The host namespace's own default ServiceAccount stands in for the tenant's.
  renameAt(spec, "serviceAccountName", "spec", (name) => (name === DEFAULT_SERVICE_ACCOUNT ? name : rename(name)));
  // Tenant Pods must never carry credentials for the host API.
  spec["automountServiceAccountToken"] = false;
  delete spec["nodeName"];
  // The host's Priority and RuntimeClass admission recompute these from the class names and reject a mismatch.
  delete spec["priority"];
  delete spec["preemptionPolicy"];
  delete spec["overhead"];
  enforcePlacement(spec, ctx);
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

function translateProjected(
  projected: JsonObject | undefined,
  path: string,
  renameConfigMap: (name: string) => string,
  rename: (name: string) => string,
): void {
  if (projected === undefined) return;
  const kept: JsonObject[] = [];
  for (const [source, sourcePath] of objectsAt(projected, "sources", path)) {
    // A token projected on the host would be minted for a host ServiceAccount.
    if (source["serviceAccountToken"] !== undefined) continue;
    renameAt(objectAt(source, "configMap", sourcePath), "name", join(sourcePath, "configMap"), renameConfigMap);
    renameAt(objectAt(source, "secret", sourcePath), "name", join(sourcePath, "secret"), rename);
    kept.push(source);
  }
  if (projected["sources"] !== undefined) projected["sources"] = kept;
}

function translateContainer(
  container: JsonObject,
  path: string,
  renameConfigMap: (name: string) => string,
  rename: (name: string) => string,
): void {
  for (const [env, envPath] of objectsAt(container, "env", path)) {
    const valueFrom = objectAt(env, "valueFrom", envPath);
    if (valueFrom === undefined) continue;
    const fromPath = join(envPath, "valueFrom");
    renameAt(
      objectAt(valueFrom, "configMapKeyRef", fromPath),
      "name",
      join(fromPath, "configMapKeyRef"),
      renameConfigMap,
    );
    renameAt(objectAt(valueFrom, "secretKeyRef", fromPath), "name", join(fromPath, "secretKeyRef"), rename);
  }
  for (const [source, sourcePath] of objectsAt(container, "envFrom", path)) {
    renameAt(objectAt(source, "configMapRef", sourcePath), "name", join(sourcePath, "configMapRef"), renameConfigMap);
    renameAt(objectAt(source, "secretRef", sourcePath), "name", join(sourcePath, "secretRef"), rename);
  }
}
