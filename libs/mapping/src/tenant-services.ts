/**
 * The tenant API Service the provisioner creates in `tp-<tenant>` (ClusterIP, or
 * LoadBalancer when exposed); tenant pods reach their API through its ClusterIP.
 */
export const TENANT_API_SERVICE = "k3s";
/** Port of the tenant API on that Service and on the k3s container. */
export const TENANT_API_PORT = 6443;
/**
 * The tenant's DNS server in `tp-<tenant>`: the provisioner's Deployment, Service and
 * Corefile ConfigMap all carry this name. Host copies of tenant Pods use the Service's
 * ClusterIP as their only nameserver.
 */
export const TENANT_DNS_SERVICE = "tenant-dns";
/** Port the tenant DNS Service listens on (what a resolv.conf nameserver implies). */
export const TENANT_DNS_SERVICE_PORT = 53;
/**
 * Port CoreDNS listens on inside its pod: above 1024, so it needs no capability under
 * Pod Security `restricted`; the Service maps {@link TENANT_DNS_SERVICE_PORT} onto it.
 */
export const TENANT_DNS_CONTAINER_PORT = 1053;
