import type { JsonObject } from "./json.js";
import type { TranslateContext } from "./translate-context.js";
import { hostReference, keepWhere, rewriteRef } from "./translate-reference.js";

/**
 * Points a ServiceAccount's image pull secrets at the host copies (leaving out those the
 * SyncPolicy never copies: the kubelet pulls without them) and drops its token Secret
 * list (never synced).
 */
export function translateServiceAccount(account: JsonObject, ctx: TranslateContext): void {
  const secret = (name: string, field: string) => hostReference(ctx, "Secret", name, field, true);
  keepWhere(account, "imagePullSecrets", "", (secretRef, path) => rewriteRef(secretRef, "name", path, secret, true));
  delete account["secrets"];
}
