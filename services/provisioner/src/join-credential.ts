import { createHash, randomInt } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import type { IsolationMode } from "@tenantplane/api";
import { LABEL_MANAGED_BY, MANAGED_BY, hostNamespaceFor } from "@tenantplane/mapping";
import { tenantLabels } from "./control-plane.js";
import { decodeSecretData, encodeSecretData } from "./secret-data.js";

/** Lifetime of each bootstrap token; a new one is minted once less than half of it remains. */
export const JOIN_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Namespace of bootstrap token Secrets in the tenant API (where the API server's authenticator reads them). */
export const BOOTSTRAP_TOKEN_NAMESPACE = "kube-system";
/** Type of a bootstrap token Secret. */
export const BOOTSTRAP_TOKEN_TYPE = "bootstrap.kubernetes.io/token";
/** The group k3s gives node join tokens (`k3s token create`), which its RBAC lets register a node. */
export const K3S_NODE_TOKEN_GROUP = "system:bootstrappers:k3s:default-node-token";
/** `<id>.<secret>`: 6 and 16 characters of `[a-z0-9]`, as kubeadm and k3s write bootstrap tokens. */
export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

/** Keys of the host Secret `<tenant>-join`. */
export const JOIN_KEYS = { token: "token", server: "server", caCert: "ca.crt" } as const;
/** Annotation on the host join Secret: when its token expires (RFC 3339); not secret. */
export const ANNOTATION_JOIN_EXPIRES = "tenantplane.io/join-token-expires";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A bootstrap token: the public `id` and the `secret` that authenticates it. */
export interface BootstrapToken {
  id: string;
  secret: string;
}

/** Secret `<tenant>-join` in the host namespace: the credential a private node joins the tenant with. */
export function joinSecretName(tenant: string): string {
  return `${tenant}-join`;
}

/** Name of a bootstrap token's Secret in the tenant API. */
export function bootstrapTokenSecretName(id: string): string {
  return `bootstrap-token-${id}`;
}

/** A fresh bootstrap token from the crypto random source, each character drawn uniformly. */
export function generateBootstrapToken(pick: (max: number) => number = randomInt): BootstrapToken {
  const draw = (length: number) => Array.from({ length }, () => ALPHABET[pick(ALPHABET.length)]).join("");
  return { id: draw(6), secret: draw(16) };
}

/**
 * The hash k3s pins a server CA by: SHA-256 (hex) of the CA bundle exactly as the server stores
 * and serves it (`server-ca.crt`, which the control plane copies byte for byte from the PKI Secret).
 */
export function caHash(serverCaPem: string): string {
  return createHash("sha256").update(serverCaPem, "utf8").digest("hex");
}

/** k3s's secure token format `K10<CA hash>::<id>.<secret>`: the agent checks the server's CA against the hash. */
export function k3sJoinToken(serverCaPem: string, token: BootstrapToken): string {
  return `K10${caHash(serverCaPem)}::${token.id}.${token.secret}`;
}

/** The parts of a k3s secure bootstrap-token join token; undefined for anything else. */
export function parseK3sJoinToken(text: string): { caHash: string; token: BootstrapToken } | undefined {
  const match = /^K10([0-9a-f]{64})::(.*)$/.exec(text);
  const parts = match ? BOOTSTRAP_TOKEN_PATTERN.exec(match[2]!) : null;
  if (!match || !parts) return undefined;
  return { caHash: match[1]!, token: { id: parts[1]!, secret: parts[2]! } };
}

/**
 * The bootstrap token Secret `kube-system/bootstrap-token-<id>` in the tenant API: usable to
 * authenticate (a joining k3s agent) and to sign the cluster-info ConfigMap, in k3s's node
 * group, expiring at `expiresAt` (the token cleaner deletes it then).
 */
export function bootstrapTokenSecret(tenant: string, token: BootstrapToken, expiresAt: Date): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: bootstrapTokenSecretName(token.id),
      namespace: BOOTSTRAP_TOKEN_NAMESPACE,
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY },
    },
    type: BOOTSTRAP_TOKEN_TYPE,
    data: encodeSecretData({
      "token-id": token.id,
      "token-secret": token.secret,
      "usage-bootstrap-authentication": "true",
      "usage-bootstrap-signing": "true",
      "auth-extra-groups": K3S_NODE_TOKEN_GROUP,
      description: `tenantplane: private nodes of tenant ${tenant} join with this token (spec.isolation.mode Private)`,
      expiration: rfc3339(expiresAt),
    }),
  };
}

/** Label selector of the bootstrap token Secrets tenantplane created in a tenant API. */
export const BOOTSTRAP_TOKEN_SELECTOR = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;

/** Whether a tenant's bootstrap token Secret as stored authenticates `token` until `expiresAt`. */
export function bootstrapTokenMatches(stored: Pick<V1Secret, "data" | "type">, token: BootstrapToken, expiresAt: Date) {
  const data = decodeSecretData(stored);
  return (
    stored.type === BOOTSTRAP_TOKEN_TYPE &&
    data["token-id"] === token.id &&
    data["token-secret"] === token.secret &&
    data["usage-bootstrap-authentication"] === "true" &&
    data["auth-extra-groups"] === K3S_NODE_TOKEN_GROUP &&
    data["expiration"] === rfc3339(expiresAt)
  );
}

/** What the host join Secret holds. */
export interface JoinCredential {
  token: BootstrapToken;
  server: string;
  serverCaPem: string;
  expiresAt: Date;
}

/**
 * Secret `<tenant>-join` in the host namespace (type Opaque, tenantplane labels): `token` in k3s's
 * secure format, `server` (the URL agents join) and `ca.crt` (the tenant's server CA); the
 * token's expiry rides in an annotation. Uses `data`, so server-side apply sees no drift.
 */
export function joinSecret(tenant: string, credential: JoinCredential): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: joinSecretName(tenant),
      namespace: hostNamespaceFor(tenant),
      labels: tenantLabels(tenant),
      annotations: { [ANNOTATION_JOIN_EXPIRES]: rfc3339(credential.expiresAt) },
    },
    type: "Opaque",
    data: encodeSecretData({
      [JOIN_KEYS.token]: k3sJoinToken(credential.serverCaPem, credential.token),
      [JOIN_KEYS.server]: credential.server,
      [JOIN_KEYS.caCert]: credential.serverCaPem,
    }),
  };
}

/** The credential a stored host join Secret holds; undefined when it cannot be read whole. */
export function readJoinSecret(secret: Pick<V1Secret, "data" | "metadata">): JoinCredential | undefined {
  const data = decodeSecretData(secret);
  const parsed = parseK3sJoinToken(data[JOIN_KEYS.token] ?? "");
  const server = data[JOIN_KEYS.server];
  const serverCaPem = data[JOIN_KEYS.caCert];
  const expires = secret.metadata?.annotations?.[ANNOTATION_JOIN_EXPIRES];
  const expiresAt = expires === undefined ? undefined : new Date(expires);
  if (!parsed || !server || !serverCaPem || !expiresAt || Number.isNaN(expiresAt.getTime())) return undefined;
  if (parsed.caHash !== caHash(serverCaPem)) return undefined;
  return { token: parsed.token, server, serverCaPem, expiresAt };
}

/** What the join credential step does for one tenant; see {@link planJoinCredential}. */
export type JoinPlan =
  | { action: "none" }
  | { action: "remove"; mode: IsolationMode }
  | { action: "issue"; credential: JoinCredential; why: string }
  | { action: "rewrite"; credential: JoinCredential; why: string }
  | { action: "keep"; credential: JoinCredential; renewAt: Date };

/** What {@link planJoinCredential} decides from. */
export interface JoinInputs {
  mode: IsolationMode;
  /** The host join Secret as stored, if any. */
  stored: Pick<V1Secret, "data" | "metadata"> | undefined;
  /** The URL private nodes join: the external endpoint, or the API Service's in-cluster name. */
  server: string;
  /** The tenant's server CA certificate as k3s stores it. */
  serverCaPem: string;
  now: Date;
  /** Source of a new token; crypto random by default. */
  mint?: () => BootstrapToken;
}

/**
 * Pure: a Private tenant keeps a join credential that trusts its current server CA and has more
 * than half of {@link JOIN_TOKEN_TTL_MS} left; otherwise a new token is issued (the old one
 * expires on its own). A server that moved is written into the stored credential, token kept.
 * A tenant in any other mode has none: a stored one is removed.
 */
export function planJoinCredential(input: JoinInputs): JoinPlan {
  if (input.mode !== "Private") return input.stored ? { action: "remove", mode: input.mode } : { action: "none" };
  const current = input.stored ? readJoinSecret(input.stored) : undefined;
  const issue = (why: string): JoinPlan => ({
    action: "issue",
    why,
    credential: {
      token: (input.mint ?? generateBootstrapToken)(),
      server: input.server,
      serverCaPem: input.serverCaPem,
      expiresAt: new Date(Math.floor((input.now.getTime() + JOIN_TOKEN_TTL_MS) / 1000) * 1000),
    },
  });
  if (!input.stored) return issue("no join credential yet");
  if (!current) return issue("the stored join credential cannot be read");
  if (current.serverCaPem !== input.serverCaPem) return issue("the tenant's server CA changed");
  const renewAt = new Date(current.expiresAt.getTime() - JOIN_TOKEN_TTL_MS / 2);
  if (input.now.getTime() >= renewAt.getTime())
    return issue(
      `less than half of its lifetime remains (token ${current.token.id} expires ${rfc3339(current.expiresAt)})`,
    );
  if (current.server !== input.server)
    return {
      action: "rewrite",
      credential: { ...current, server: input.server },
      why: `the server moved to ${input.server}`,
    };
  return { action: "keep", credential: current, renewAt };
}

/** RFC 3339 in UTC, whole seconds (as the bootstrap token authenticator and the annotation keep it). */
export function rfc3339(time: Date): string {
  return time.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The reasons of the join credential's Decisions: they name the mode and never the secret. */
export const joinReasons = {
  issued: (c: JoinCredential, why: string) =>
    `join credential for private nodes (spec.isolation.mode is Private): bootstrap token ${c.token.id} for ${c.server}, ` +
    `valid until ${rfc3339(c.expiresAt)} (${why})`,
  rewritten: (c: JoinCredential, why: string) =>
    `join credential for private nodes (spec.isolation.mode is Private): bootstrap token ${c.token.id} kept (${why})`,
  tokenCreated: (tenant: string, c: JoinCredential) =>
    `bootstrap token ${c.token.id} lets private nodes join the tenant API (spec.isolation.mode is Private), ` +
    `valid until ${rfc3339(c.expiresAt)}; Secret ${hostNamespaceFor(tenant)}/${joinSecretName(tenant)} holds it`,
  tokenReplaced: (c: JoinCredential) =>
    `bootstrap token ${c.token.id} in the tenant API did not match the join credential (spec.isolation.mode is Private): rewritten`,
  tokenRevoked: (mode: IsolationMode, id: string) =>
    `spec.isolation.mode is ${mode}, not Private: bootstrap token ${id} revoked, no new private node may join`,
  removed: (mode: IsolationMode) =>
    `spec.isolation.mode is ${mode}, not Private: the join credential for private nodes is removed`,
} as const;
