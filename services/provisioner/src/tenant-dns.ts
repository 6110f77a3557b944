import type { V1ConfigMap, V1Deployment, V1Service } from "@kubernetes/client-node";
import {
  hostNamespaceFor,
  LABEL_CONTROL_PLANE,
  TENANT_DNS_CONTAINER_PORT,
  TENANT_DNS_SERVICE,
  TENANT_DNS_SERVICE_PORT,
} from "@tenantplane/mapping";
import { TENANT_DNS_RESOURCES } from "@tenantplane/isolation";
import { COREFILE_KEY, corefile, DNS_RECORDS_CONFIGMAP, DNS_RECORDS_KEY } from "@tenantplane/sync";
import { tenantLabels } from "./control-plane.js";

/** CoreDNS image of the tenant DNS server (the version the test stack runs for real). */
export const DEFAULT_DNS_IMAGE = "coredns/coredns:1.15.0";
/** Port of CoreDNS's `ready` endpoint, the readiness probe. */
const READY_PORT = 8181;
/** The distroless CoreDNS image's non-root user. */
const DNS_UID = 65532;
// Sibling directories: a volume mounted inside a read-only ConfigMap volume would need a mount point there.
const CONFIG_DIR = "/etc/coredns/config";
const RECORDS_DIR = "/etc/coredns/records";

/**
 * Label naming the tenant whose DNS server pod carries it: reserved (`tenantplane.io/`), so
 * no tenant pod can carry it and become an endpoint of the DNS Service.
 */
export const LABEL_DNS_OF = "tenantplane.io/dns-of";

function dnsSelector(tenant: string): Record<string, string> {
  return { [LABEL_DNS_OF]: tenant };
}

/** The tenant DNS server's Corefile (provisioner-owned; the records beside it are the sync worker's). */
export function dnsConfigMap(tenant: string): V1ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: TENANT_DNS_SERVICE, namespace: hostNamespaceFor(tenant), labels: tenantLabels(tenant) },
    data: { [COREFILE_KEY]: corefile({ recordsFile: `${RECORDS_DIR}/${DNS_RECORDS_KEY}`, readyPort: READY_PORT }) },
  };
}

/** The Service host Pod copies use as their only nameserver: port 53 (UDP and TCP) onto CoreDNS's 1053. */
export function dnsService(tenant: string): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: TENANT_DNS_SERVICE, namespace: hostNamespaceFor(tenant), labels: tenantLabels(tenant) },
    spec: {
      type: "ClusterIP",
      selector: dnsSelector(tenant),
      ports: [
        { name: "dns", port: TENANT_DNS_SERVICE_PORT, targetPort: "dns", protocol: "UDP" },
        { name: "dns-tcp", port: TENANT_DNS_SERVICE_PORT, targetPort: "dns-tcp", protocol: "TCP" },
      ],
    },
  };
}

/**
 * The tenant DNS server: CoreDNS in its own Deployment beside the k3s StatefulSet, so a
 * control-plane restart (PKI rotation, upgrade) never interrupts name resolution and a DNS
 * fault never takes the tenant API's endpoint away. It carries the control-plane label, so
 * the isolation policies let the namespace's pods reach it and it reach the host's DNS
 * (its upstream). Runs as Pod Security `restricted` allows, on an unprivileged port.
 */
export function dnsDeployment(tenant: string, image: string = DEFAULT_DNS_IMAGE): V1Deployment {
  const labels = tenantLabels(tenant);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: TENANT_DNS_SERVICE, namespace: hostNamespaceFor(tenant), labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: dnsSelector(tenant) },
      template: {
        metadata: { labels: { ...labels, ...dnsSelector(tenant), [LABEL_CONTROL_PLANE]: "true" } },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: DNS_UID,
            runAsGroup: DNS_UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: "coredns",
              image,
              args: ["-conf", `${CONFIG_DIR}/${COREFILE_KEY}`],
              ports: [
                { name: "dns", containerPort: TENANT_DNS_CONTAINER_PORT, protocol: "UDP" },
                { name: "dns-tcp", containerPort: TENANT_DNS_CONTAINER_PORT, protocol: "TCP" },
              ],
              readinessProbe: { httpGet: { path: "/ready", port: READY_PORT }, periodSeconds: 5 },
              // The isolation service reserves exactly these in the tenant's quota.
              resources: {
                requests: { ...TENANT_DNS_RESOURCES.requests },
                limits: { ...TENANT_DNS_RESOURCES.limits },
              },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
              },
              volumeMounts: [
                { name: "corefile", mountPath: CONFIG_DIR, readOnly: true },
                { name: "records", mountPath: RECORDS_DIR, readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: "corefile", configMap: { name: TENANT_DNS_SERVICE } },
            // Written by the sync worker; until then CoreDNS serves no tenant names and reloads when it appears.
            { name: "records", configMap: { name: DNS_RECORDS_CONFIGMAP, optional: true } },
          ],
        },
      },
    },
  };
}
