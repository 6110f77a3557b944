import {
  ANNOTATION_VIRTUAL_NAME,
  ANNOTATION_VIRTUAL_NAMESPACE,
  hostLabelKey,
  hostNamespaceFor,
  TENANT_API_SERVICE,
  TENANT_DNS_SERVICE,
} from "@tenantplane/mapping";
import {
  ANNOTATION_TOKEN_REQUESTS,
  ANNOTATION_VIRTUAL_LABELS,
  ANNOTATION_VIRTUAL_SERVICE_ACCOUNT,
  ANNOTATION_VIRTUAL_UID,
  DEFAULT_TOKEN_EXPIRATION_SECONDS,
  serviceLinksConfigMapName,
  TENANT_CLUSTER_DOMAIN,
  TOKEN_SECRET_CA_KEY,
  tokenSecretName,
  type PodEnvironment,
  type TokenRequestSpec,
} from "../pod-environment.js";
import { ROOT_CA_CONFIGMAP } from "../system-objects.js";
import { linkVariables } from "../tenant-dns.js";
import { MalformedObjectError } from "../malformed-object-error.js";
import { type JsonObject, isJsonObject, join, objectAt, objectsAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";

const CONTAINER_LISTS = ["containers", "initContainers"] as const;
/** DNS policies under which the kubelet would give the Pod cluster DNS: these get the tenant's instead. */
const CLUSTER_DNS_POLICIES = new Set([undefined, null, "ClusterFirst", "ClusterFirstWithHostNet"]);

/**
 * Rewrites a tenant Pod's projected service-account tokens: each `serviceAccountToken`
 * source becomes a source from the host Pod's token Secret (which the sync worker fills with
 * a TokenRequest on the tenant API), and in a projection holding a token the
 * `kube-root-ca.crt` ConfigMap becomes that Secret's tenant CA.
 */
export class TokenRewriter {
  readonly requests: TokenRequestSpec[] = [];
  readonly secret: string;

  constructor(hostPodName: string) {
    this.secret = tokenSecretName(hostPodName);
  }

  /** Replaces the token sources of one projected volume; returns the new source list. */
  rewrite(sources: Array<[JsonObject, string]>): JsonObject[] {
    const hasToken = sources.some(([source]) => source["serviceAccountToken"] !== undefined);
    return sources.map(([source, path]) => {
      const token = objectAt(source, "serviceAccountToken", path);
      if (token !== undefined) return this.tokenSource(token, join(path, "serviceAccountToken"));
      const configMap = objectAt(source, "configMap", path);
      if (hasToken && configMap?.["name"] === ROOT_CA_CONFIGMAP) return this.caSource(configMap);
      return source;
    });
  }

  private tokenSource(token: JsonObject, path: string): JsonObject {
    const tokenPath = token["path"];
    if (typeof tokenPath !== "string") throw new MalformedObjectError(join(path, "path"), "expected a string");
    const expiration = token["expirationSeconds"] ?? DEFAULT_TOKEN_EXPIRATION_SECONDS;
    if (typeof expiration !== "number") {
      throw new MalformedObjectError(join(path, "expirationSeconds"), "expected a number");
    }
    const audience = token["audience"];
    if (audience !== undefined && audience !== null && typeof audience !== "string") {
      throw new MalformedObjectError(join(path, "audience"), "expected a string");
    }
    const key = `token-${this.requests.length}`;
    this.requests.push({
      key,
      ...(typeof audience === "string" && audience !== "" ? { audience } : {}),
      expirationSeconds: expiration,
    });
    return { secret: { name: this.secret, items: [{ key, path: tokenPath }] } };
  }

  private caSource(configMap: JsonObject): JsonObject {
    const items = Array.isArray(configMap["items"])
      ? configMap["items"]
      : [{ key: TOKEN_SECRET_CA_KEY, path: TOKEN_SECRET_CA_KEY }];
    return { secret: { name: this.secret, items } };
  }
}

/** What {@link translatePodEnvironment} changed, in words for Decision reasons. */
export type Rewrites = string[];

/**
 * Points a host Pod copy at its tenant instead of the host: the tenant API in explicit
 * `KUBERNETES_*` variables (the kubelet's own are overridden by explicit env), the tenant's
 * service links through `envFrom` of a per-namespace ConfigMap (the kubelet reads it at
 * container start, as it computes its own links then; no host Service variables:
 * `enableServiceLinks: false`), the tenant DNS server with the tenant's search list, and
 * downward API fields that give the tenant's values. Returns the annotations to stamp and
 * what was rewritten.
 */
export function translatePodEnvironment(
  spec: JsonObject,
  ctx: TranslateContext,
  env: PodEnvironment,
  tokens: TokenRewriter,
  virtualAccount: string,
): { annotations: Record<string, string>; rewrites: Rewrites } {
  const rewrites: Rewrites = [];
  const annotations: Record<string, string> = {};
  const serviceLinks = spec["enableServiceLinks"] !== false;
  const links = serviceLinksConfigMapName(ctx.namespace);
  const api = linkVariables("kubernetes", env.apiHost, [{ name: "https", port: env.apiPort, protocol: "TCP" }]);
  const downward = new Set<string>();

  for (const list of CONTAINER_LISTS) {
    for (const [container, path] of objectsAt(spec, list, "spec")) {
      const own = objectsAt(container, "env", path);
      const names = new Set(own.map(([e]) => e["name"]));
      for (const [e, envPath] of own) {
        const fieldRef = objectAt(objectAt(e, "valueFrom", envPath) ?? {}, "fieldRef", join(envPath, "valueFrom"));
        if (fieldRef !== undefined) rewriteFieldRef(fieldRef, join(envPath, "valueFrom.fieldRef"), downward);
      }
      const added = Object.entries(api)
        .filter(([name]) => !names.has(name))
        .map(([name, value]) => ({ name, value }));
      if (added.length > 0) container["env"] = [...own.map(([e]) => e), ...added];
      if (serviceLinks) {
        objectsAt(container, "envFrom", path);
        const envFrom = Array.isArray(container["envFrom"]) ? container["envFrom"] : [];
        // First, so the container's own envFrom and env win, as over the kubelet's links.
        container["envFrom"] = [{ configMapRef: { name: links, optional: true } }, ...envFrom];
      }
    }
  }
  spec["enableServiceLinks"] = false;
  const hostNs = hostNamespaceFor(ctx.tenant);
  rewrites.push(`tenant API ${hostNs}/${TENANT_API_SERVICE} at ${env.apiHost}:${env.apiPort} in KUBERNETES_* env`);
  rewrites.push(serviceLinks ? `service links of namespace ${ctx.namespace} (ConfigMap ${links})` : "no service links");

  for (const [volume, path] of objectsAt(spec, "volumes", "spec")) {
    rewriteDownwardItems(objectAt(volume, "downwardAPI", path), join(path, "downwardAPI"), downward);
    const projected = objectAt(volume, "projected", path);
    for (const [source, sourcePath] of projected ? objectsAt(projected, "sources", join(path, "projected")) : []) {
      rewriteDownwardItems(objectAt(source, "downwardAPI", sourcePath), join(sourcePath, "downwardAPI"), downward);
    }
  }

  const policy = spec["dnsPolicy"];
  if (CLUSTER_DNS_POLICIES.has(policy as string | undefined)) {
    const own = objectAt(spec, "dnsConfig", "spec") ?? {};
    const searches = [
      `${ctx.namespace}.svc.${TENANT_CLUSTER_DOMAIN}`,
      `svc.${TENANT_CLUSTER_DOMAIN}`,
      TENANT_CLUSTER_DOMAIN,
    ];
    const ownOptions = Array.isArray(own["options"]) ? own["options"].filter(isJsonObject) : [];
    const ownNames = new Set(ownOptions.map((o) => o["name"]));
    spec["dnsPolicy"] = "None";
    const nameservers = fitNameservers([env.dnsHost, ...strings(own["nameservers"])]);
    const searchList = fitSearches([...searches, ...strings(own["searches"])]);
    spec["dnsConfig"] = {
      nameservers: nameservers.kept,
      searches: searchList.kept,
      options: [...(ownNames.has("ndots") ? [] : [{ name: "ndots", value: "5" }]), ...ownOptions],
    };
    rewrites.push(`DNS ${hostNs}/${TENANT_DNS_SERVICE} at ${env.dnsHost}, search ${searches.join(" ")}`);
    // The kubelet merges a ClusterFirst Pod's dnsConfig after the cluster's and drops what
    // exceeds the resolver's limits; under dnsPolicy None the API server refuses it instead.
    if (nameservers.dropped.length > 0) {
      rewrites.push(`nameservers ${nameservers.dropped.join(", ")} dropped: at most ${MAX_NAMESERVERS}`);
    }
    if (searchList.dropped.length > 0) {
      rewrites.push(
        `searches ${searchList.dropped.join(" ")} dropped: at most ${MAX_SEARCHES} paths of ${MAX_SEARCH_CHARS} characters`,
      );
    }
  } else {
    rewrites.push(`dnsPolicy ${String(policy)} kept`);
  }

  annotations[ANNOTATION_VIRTUAL_SERVICE_ACCOUNT] = virtualAccount;
  if (ctx.uid !== undefined) annotations[ANNOTATION_VIRTUAL_UID] = ctx.uid;
  if (downward.has("metadata.labels")) annotations[ANNOTATION_VIRTUAL_LABELS] = downwardMap(ctx.labels);
  if (tokens.requests.length > 0) {
    annotations[ANNOTATION_TOKEN_REQUESTS] = JSON.stringify(tokens.requests);
    const asked = tokens.requests
      .map((r) => `${r.audience === undefined ? "API audience" : `audience ${r.audience}`}, ${r.expirationSeconds}s`)
      .join("; ");
    rewrites.push(
      `token of ServiceAccount ${ctx.namespace}/${virtualAccount} by TokenRequest (${asked}) in Secret ${tokens.secret}`,
    );
  } else {
    rewrites.push("no service-account token");
  }
  if (downward.size > 0) rewrites.push(`downward API ${[...downward].sort().join(", ")} from the tenant`);
  return { annotations, rewrites };
}

/** The resolver limits the API server enforces on `dnsConfig` (and the kubelet applies to merged lists). */
const MAX_NAMESERVERS = 3;
const MAX_SEARCHES = 32;
const MAX_SEARCH_CHARS = 2048;

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** The first {@link MAX_NAMESERVERS} distinct nameservers, in order, and the rest. */
function fitNameservers(all: string[]): { kept: string[]; dropped: string[] } {
  const distinct = [...new Set(all)];
  return { kept: distinct.slice(0, MAX_NAMESERVERS), dropped: distinct.slice(MAX_NAMESERVERS) };
}

/** The longest prefix of the distinct search paths that fits the count and length limits, and the rest. */
function fitSearches(all: string[]): { kept: string[]; dropped: string[] } {
  const distinct = [...new Set(all)];
  let count = 0;
  let length = -1;
  for (const search of distinct) {
    if (count === MAX_SEARCHES || length + 1 + search.length > MAX_SEARCH_CHARS) break;
    count += 1;
    length += 1 + search.length;
  }
  return { kept: distinct.slice(0, count), dropped: distinct.slice(count) };
}

/** Field paths whose host value differs from the tenant's, and the annotation carrying the tenant's. */
const DOWNWARD_FIELDS: Record<string, string> = {
  "metadata.name": ANNOTATION_VIRTUAL_NAME,
  "metadata.namespace": ANNOTATION_VIRTUAL_NAMESPACE,
  "metadata.uid": ANNOTATION_VIRTUAL_UID,
  "metadata.labels": ANNOTATION_VIRTUAL_LABELS,
  "spec.serviceAccountName": ANNOTATION_VIRTUAL_SERVICE_ACCOUNT,
};
const LABEL_REF = /^metadata\.labels\['(.+)'\]$/;

function rewriteFieldRef(fieldRef: JsonObject, path: string, seen: Set<string>): void {
  const field = fieldRef["fieldPath"];
  if (typeof field !== "string") throw new MalformedObjectError(join(path, "fieldPath"), "expected a string");
  const annotation = DOWNWARD_FIELDS[field];
  if (annotation !== undefined) {
    fieldRef["fieldPath"] = `metadata.annotations['${annotation}']`;
    seen.add(field);
    return;
  }
  const label = LABEL_REF.exec(field)?.[1];
  if (label !== undefined && hostLabelKey(label) !== label) {
    // A reserved key the tenant set is escaped on the host copy's labels: read it there.
    fieldRef["fieldPath"] = `metadata.labels['${hostLabelKey(label)}']`;
    seen.add(field);
  }
}

function rewriteDownwardItems(downwardApi: JsonObject | undefined, path: string, seen: Set<string>): void {
  if (downwardApi === undefined) return;
  for (const [item, itemPath] of objectsAt(downwardApi, "items", path)) {
    const fieldRef = objectAt(item, "fieldRef", itemPath);
    if (fieldRef !== undefined) rewriteFieldRef(fieldRef, join(itemPath, "fieldRef"), seen);
  }
}

/** A map as the downward API writes `metadata.labels` to a file: sorted `key="value"` lines. */
export function downwardMap(map: Record<string, string>): string {
  return Object.keys(map)
    .sort()
    .map((key) => `${key}=${JSON.stringify(map[key])}`)
    .join("\n");
}
