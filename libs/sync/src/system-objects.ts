import type { KubeObject } from "./kube-object.js";

/** Tenant namespaces that belong to the tenant's own control plane; nothing in them reaches the host. */
export const TENANT_SYSTEM_NAMESPACES: readonly string[] = ["kube-system", "kube-public", "kube-node-lease"];

/** The reason an object in `namespace` is never synced, or undefined for ordinary namespaces. */
export function systemNamespaceReason(namespace: string): string | undefined {
  return TENANT_SYSTEM_NAMESPACES.includes(namespace)
    ? `namespace ${namespace} belongs to the tenant's control plane and is never synced`
    : undefined;
}

/**
 * The reason `obj` is never synced because Kubernetes itself creates it in every
 * namespace (so the host namespace already has its own), or undefined. Pod references to
 * these names are left pointing at the host namespace's native objects.
 */
export function nativeObjectReason(obj: KubeObject): string | undefined {
  const name = obj.metadata.name;
  if (obj.kind === "ConfigMap" && name === ROOT_CA_CONFIGMAP) {
    return `ConfigMap ${ROOT_CA_CONFIGMAP} is published by Kubernetes in every namespace; the host namespace has its own`;
  }
  if (obj.kind === "ServiceAccount" && name === DEFAULT_SERVICE_ACCOUNT) {
    return "ServiceAccount default exists in every namespace; host Pods use the host namespace's own";
  }
  if (obj.kind === "Service" && name === API_SERVICE && (obj.metadata.namespace ?? "default") === "default") {
    return "Service default/kubernetes is the tenant's own API server, made by its control plane; it is never synced";
  }
  if (obj.kind === "Secret" && obj["type"] === SERVICE_ACCOUNT_TOKEN_TYPE) {
    return `Secret of type ${SERVICE_ACCOUNT_TOKEN_TYPE} is signed by the tenant's control plane and valid only there`;
  }
  return undefined;
}

/** The CA bundle ConfigMap Kubernetes publishes in every namespace. */
export const ROOT_CA_CONFIGMAP = "kube-root-ca.crt";
/** The ServiceAccount Kubernetes creates in every namespace. */
export const DEFAULT_SERVICE_ACCOUNT = "default";
/** The Service the API server keeps in `default` for itself. */
const API_SERVICE = "kubernetes";
const SERVICE_ACCOUNT_TOKEN_TYPE = "kubernetes.io/service-account-token";
