import type { HostRules } from "../host-rules.js";

/** The kinds a tenant object can refer to by name within its own namespace. */
export type ReferencedKind = "ConfigMap" | "Secret" | "ServiceAccount" | "PersistentVolumeClaim" | "Service";

/** What a per-kind translator needs to know about the object it rewrites. */
export interface TranslateContext {
  tenant: string;
  /** The source's virtual namespace. */
  namespace: string;
  /** The source's virtual name. */
  name: string;
  /** Host name of an object of `kind` in the same virtual namespace, e.g. a Secret a Pod mounts; records the reference. */
  refer: (kind: ReferencedKind, name: string) => string;
  /** The rules whose node selector and tolerations every Pod gets. */
  rules: HostRules;
}
