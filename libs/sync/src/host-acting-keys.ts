/**
 * Annotation and label key prefixes that host add-ons act on, so a host copy drops keys
 * under them unless the IsolationProfile's `workloads.allowedAnnotationPrefixes` keeps them.
 * `*.domain/` matches every subdomain of `domain` and `domain` itself.
 */
export const HOST_ACTING_PREFIXES: readonly string[] = [
  // CNI plugins: attach a Pod to another network (Multus), pick its address or pool (Calico, Cilium).
  "k8s.v1.cni.cncf.io/",
  "cni.projectcalico.org/",
  "*.cilium.io/",
  "io.cilium/",
  // Load-balancer controllers: pick an address, a pool, a shared IP or a cloud load balancer's settings.
  "metallb.universe.tf/",
  "metallb.io/",
  "service.beta.kubernetes.io/",
  "service.kubernetes.io/",
  "cloud.google.com/",
  "networking.gke.io/",
  "service.beta.linode.com/",
  "load-balancer.hetzner.cloud/",
  "oci.oraclecloud.com/",
  "oci-network-load-balancer.oraclecloud.com/",
  "kube-vip.io/",
  "lb.kubesphere.io/",
  "eip.openelb.kubesphere.io/",
  "purelb.io/",
];

/** Whether `key` lies under `prefix` (a `domain/` prefix, or `*.domain/` for every subdomain). */
export function underPrefix(key: string, prefix: string): boolean {
  if (!prefix.startsWith("*.")) return key.startsWith(prefix);
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const domain = prefix.slice(2, -1);
  const keyDomain = key.slice(0, slash);
  return keyDomain === domain || keyDomain.endsWith(`.${domain}`);
}

/** Whether a host copy drops `key`: it is under a host-acting prefix and under none of `allowed`. */
export function isHostActingKey(key: string, allowed: readonly string[]): boolean {
  return HOST_ACTING_PREFIXES.some((p) => underPrefix(key, p)) && !allowed.some((p) => underPrefix(key, p));
}
