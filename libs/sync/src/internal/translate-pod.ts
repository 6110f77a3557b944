import { hostName, isDnsLabel } from "@tenantplane/mapping";
import { DEFAULT_SERVICE_ACCOUNT, ROOT_CA_CONFIGMAP } from "../system-objects.js";
import { type JsonObject, join, objectAt, objectsAt, renameAt } from "./json.js";
import { describeToleration, enforcedTolerations, GRANTED_TOLERATIONS } from "./tolerations.js";
import { PROFILE_SELECTOR_FIELD } from "./check-pod.js";
import { translatePodSelectors } from "./translate-selector.js";
import type { TranslateContext } from "./translate-context.js";
import { POD_REFERENCES } from "./pod-references.js";
import { applyPodReferences, hostReference, type Resolvers } from "./translate-reference.js";
import { translateClaimTemplate } from "./translate-volume-claim.js";
import { ANNOTATION_PLACEMENT, enforcedNodeSelector, ISOLATION_MODE_FIELD, placementText } from "../placement.js";
import { TokenRewriter, translatePodEnvironment } from "./translate-pod-env.js";

/**
 * Points a Pod's references at the host copies as the table of every Pod field that can
 * name an object says ({@link POD_REFERENCES}: volumes of every type, env, envFrom,
 * imagePullSecrets, service account, subdomain, ...), refuses those that name what never
 * reaches the host, settles references to kinds the SyncPolicy does not sync
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
    Secret: (name, field, optional) => hostReference(ctx, "Secret", name, field, optional),
    // The root CA ConfigMap is never synced; the host namespace's own one stands in.
    ConfigMap: (name, field, optional) =>
      name === ROOT_CA_CONFIGMAP ? name : hostReference(ctx, "ConfigMap", name, field, optional),
    PersistentVolumeClaim: (name, field, optional) =>
      hostReference(ctx, "PersistentVolumeClaim", name, field, optional),
  };
  // Every reference the table maps, refuses or drops, in one walk.
  applyPodReferences(spec, POD_REFERENCES, refs, ctx);

  const tokens = new TokenRewriter(hostName({ tenant: ctx.tenant, namespace: ctx.namespace, name: ctx.name }).name);
  for (const [volume, path] of objectsAt(spec, "volumes", "spec")) {
    const projected = objectAt(volume, "projected", path);
    // A token projected on the host would be minted for a host ServiceAccount: the tenant's
    // token comes from the host Pod's token Secret instead (after the renames, which must not
    // touch that Secret's name).
    if (projected?.["sources"] !== undefined) {
      projected["sources"] = tokens.rewrite(objectsAt(projected, "sources", join(path, "projected")));
    }
    const ephemeral = objectAt(volume, "ephemeral", path);
    const template = ephemeral && objectAt(ephemeral, "volumeClaimTemplate", join(path, "ephemeral"));
    if (template !== undefined) translateClaimTemplate(template, join(path, "ephemeral.volumeClaimTemplate"), ctx);
  }

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

// A Pod with a subdomain gets the DNS name <hostname>.<subdomain>.<namespace>.svc from the
// headless Service of that name: on the host that Service carries its host name, and the
// hostname must stay the tenant's, not default to the host Pod's name.
function translateSubdomain(spec: JsonObject, ctx: TranslateContext): void {
  if (spec["subdomain"] === undefined || spec["subdomain"] === null || spec["subdomain"] === "") return;
  renameAt(spec, "subdomain", "spec", (name) => ctx.refer("Service", name));
  if ((spec["hostname"] === undefined || spec["hostname"] === "") && isDnsLabel(ctx.name)) spec["hostname"] = ctx.name;
}

/**
 * Adds the profile's node selector and tolerations, and in Dedicated the dedicated node
 * selector and the toleration of the tenant's own dedicated-node taint (the planner has
 * already refused a conflicting node selector value), records the placement on the copy
 * ({@link ANNOTATION_PLACEMENT}), and removes the tenant's tolerations the profile does not
 * grant: a toleration only widens where a Pod may run, so the Pod runs without it.
 */
function enforcePlacement(spec: JsonObject, ctx: TranslateContext): void {
  const { tolerations, placement } = ctx.rules;
  const enforced = enforcedNodeSelector(ctx.rules.nodeSelector, placement, PROFILE_SELECTOR_FIELD);
  if (enforced.size > 0) {
    const own = objectAt(spec, "nodeSelector", "spec") ?? {};
    spec["nodeSelector"] = { ...own, ...Object.fromEntries([...enforced].map(([key, e]) => [key, e.value])) };
  }
  const text = placement === undefined ? undefined : placementText(placement);
  if (text !== undefined) ctx.annotate(ANNOTATION_PLACEMENT, text);
  if (tolerations.length > 0 || placement?.mode === "Dedicated" || spec["tolerations"] !== undefined) {
    objectsAt(spec, "tolerations", "spec");
    const result = enforcedTolerations(spec["tolerations"], ctx.rules, ctx.tenant);
    spec["tolerations"] = result.tolerations;
    for (const removed of result.removed) {
      ctx.explain(`toleration ${describeToleration(removed)} removed: not granted by ${GRANTED_TOLERATIONS}`);
    }
    for (const removed of result.reserved) {
      ctx.explain(
        `toleration ${describeToleration(removed)} removed: tenantplane alone tolerates its dedicated-node taint, for a tenant whose ${ISOLATION_MODE_FIELD} is Dedicated`,
      );
    }
  }
}
