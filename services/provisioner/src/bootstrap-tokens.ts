import type { V1Secret } from "@kubernetes/client-node";
import { type JsonClient, resourcePath } from "@tenantplane/kube";
import { httpStatusOf } from "@tenantplane/runtime";
import {
  BOOTSTRAP_TOKEN_NAMESPACE,
  BOOTSTRAP_TOKEN_SELECTOR,
  BOOTSTRAP_TOKEN_TYPE,
  bootstrapTokenMatches,
  bootstrapTokenSecret,
  bootstrapTokenSecretName,
  type JoinCredential,
} from "./join-credential.js";
import { decodeSecretData } from "./secret-data.js";

const secretsPath = (name?: string) => resourcePath("v1", "secrets", BOOTSTRAP_TOKEN_NAMESPACE, name);

/**
 * The tenant API's side of a join credential: its bootstrap token Secret, written through the
 * provisioner's admin client of that tenant. Requests carry the token only in their bodies;
 * errors name the Secret (the token id is public), never the secret.
 */
export class BootstrapTokens {
  constructor(private readonly client: JsonClient) {}

  /**
   * Makes `kube-system/bootstrap-token-<id>` authenticate the credential's token until its
   * expiry: created when absent, replaced when it says anything else. Returns what it did.
   */
  async ensure(tenant: string, credential: JoinCredential): Promise<"Create" | "Update" | undefined> {
    const desired = bootstrapTokenSecret(tenant, credential.token, credential.expiresAt);
    const name = bootstrapTokenSecretName(credential.token.id);
    let stored: V1Secret | undefined;
    try {
      stored = await this.client.request<V1Secret>("GET", secretsPath(name));
    } catch (err) {
      if (httpStatusOf(err) !== 404) throw err;
    }
    if (stored === undefined) {
      await this.client.request("POST", secretsPath(), { body: desired });
      return "Create";
    }
    if (bootstrapTokenMatches(stored, credential.token, credential.expiresAt)) return undefined;
    // Pinned to the version read: a concurrent writer makes this a conflict, and the next pass looks again.
    await this.client.request("PUT", secretsPath(name), {
      body: { ...desired, metadata: { ...desired.metadata, resourceVersion: stored.metadata?.resourceVersion } },
    });
    return "Update";
  }

  /**
   * Deletes every bootstrap token Secret tenantplane created in the tenant API (the current
   * token and rotated ones not yet expired); returns the ids of those it deleted.
   */
  async revokeAll(): Promise<string[]> {
    const list = await this.client.request<{ items?: V1Secret[] }>("GET", secretsPath(), {
      query: { labelSelector: BOOTSTRAP_TOKEN_SELECTOR },
    });
    const revoked: string[] = [];
    for (const secret of list?.items ?? []) {
      if (secret.type !== BOOTSTRAP_TOKEN_TYPE || !secret.metadata?.name) continue;
      try {
        await this.client.request("DELETE", secretsPath(secret.metadata.name), {
          body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: secret.metadata.uid } },
        });
      } catch (err) {
        if (httpStatusOf(err) === 404) continue;
        throw err;
      }
      revoked.push(decodeSecretData(secret)["token-id"] ?? secret.metadata.name);
    }
    return revoked;
  }
}
