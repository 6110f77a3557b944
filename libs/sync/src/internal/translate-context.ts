import type { HostRules } from "../host-rules.js";

/** What a per-kind translator needs to know about the object it rewrites. */
export interface TranslateContext {
  tenant: string;
  /** The source's virtual namespace. */
  namespace: string;
  /** Host name of an object of the same virtual namespace, e.g. a Secret a Pod mounts. */
  hostNameOf: (name: string) => string;
  /** The rules whose node selector and tolerations every Pod gets. */
  rules: HostRules;
}
