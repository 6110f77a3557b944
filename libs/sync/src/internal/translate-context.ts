import type { HostRules } from "../host-rules.js";
import type { PodEnvironment } from "../pod-environment.js";

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
  /** Whether objects of `kind` get host copies under the SyncPolicy; references to other kinds are settled by the translator. */
  syncs: (kind: ReferencedKind) => boolean;
  /** Records why the host copy cannot work as the tenant wrote it (the field and its problem); the planner skips the object. */
  refuse: (field: string, problem: string) => void;
  /** The rules whose node selector and tolerations every Pod gets. */
  rules: HostRules;
  /** The source's uid in the tenant, when it has one. */
  uid?: string | undefined;
  /** The source's own labels. */
  labels: Record<string, string>;
  /** Where host Pod copies reach the tenant's API and DNS. */
  podEnvironment: PodEnvironment;
  /** Adds an annotation to the host copy (after the tenant's own, which never carry reserved keys). */
  annotate: (key: string, value: string) => void;
  /** Records, in words, a rewrite that changes what the host copy can reach; Decision reasons carry it. */
  explain: (rewrite: string) => void;
}
