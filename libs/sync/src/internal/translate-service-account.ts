import { type JsonObject, objectsAt, renameAt } from "./json.js";
import type { TranslateContext } from "./translate-context.js";

/** Points a ServiceAccount's image pull secrets at the host copies and drops its token Secret list (never synced). */
export function translateServiceAccount(account: JsonObject, ctx: TranslateContext): void {
  for (const [secretRef, path] of objectsAt(account, "imagePullSecrets", "")) {
    renameAt(secretRef, "name", path, (name) => ctx.refer("Secret", name));
  }
  delete account["secrets"];
}
