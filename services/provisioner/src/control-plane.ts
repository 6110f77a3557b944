import type {
  V1Container,
  V1Namespace,
  V1PersistentVolumeClaim,
  V1ResourceRequirements,
  V1SecurityContext,
  V1Service,
  V1StatefulSet,
} from "@kubernetes/client-node";
import {
  LABEL_CONTROL_PLANE,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  MANAGED_BY,
  hostNamespaceFor,
} from "@tenantplane/mapping";
import {
  ANNOTATION_TENANT_UID,
  isolationModeOf,
  type ControlPlaneSpec,
  type IsolationMode,
  type TenantCluster,
} from "@tenantplane/api";
import { PKI_FILES } from "./pki.js";
import { quantitiesEqual } from "./internal/quantity.js";

/** The parts of a parsed TenantCluster (defaults applied) the control plane is built from. */
export type ControlPlaneSource = Pick<TenantCluster, "metadata" | "spec">;

/** StatefulSet running the tenant's k3s server; its single pod is `k3s-0`. */
export const STATEFULSET_NAME = "k3s";
/** Service clients use to reach the tenant API (ClusterIP, or LoadBalancer when exposed). */
export const API_SERVICE_NAME = "k3s";
/** Headless Service governing the StatefulSet's pod DNS identity. */
export const HEADLESS_SERVICE_NAME = "k3s-headless";
/**
 * Port of the tenant API, on the container and on both Services. The Service keeps k3s's own
 * port rather than 443 so a load-balancer address and the pod speak the same URL.
 */
export const API_PORT = 6443;
/** Name of the volume claim template (and so of the PVC `data-k3s-0`) holding k3s's data dir. */
export const DATA_VOLUME_NAME = "data";
/** k3s data directory on the data volume; SQLite and the TLS files live beneath it. */
export const K3S_DATA_DIR = "/var/lib/rancher/k3s";
/** Key of the admin kubeconfig inside the kubeconfig Secret. */
export const KUBECONFIG_KEY = "kubeconfig";
/** Cluster DNS domain assumed for the fully qualified Service name when none is given. */
export const DEFAULT_CLUSTER_DOMAIN = "cluster.local";

/**
 * The controllers the tenant's kube-controller-manager runs: k3s's own set (`*` plus the
 * bootstrap-token cleaner) less the two that manage real nodes. A tenant's Nodes are
 * virtual: back-sync mirrors the host node each tenant Pod runs on, and no kubelet reports.
 * - `node-lifecycle-controller` marks a Node unreachable when its heartbeat stops; a virtual
 *   Node's heartbeat is tenantplane's, so a sync worker outage past the grace period would
 *   taint every virtual Node NoExecute and evict every tenant Pod, and the sync would then
 *   delete their running host copies. A real node loss is the host's node controller's
 *   business; back-sync shows its outcome (the host copy evicted, the tenant Pod Failed).
 * - `node-ipam-controller` would give each virtual Node a pod CIDR from the tenant's range,
 *   though its Pods take host addresses (and the range runs out at 256 nodes).
 * Kept: `persistentvolume-binder-controller` releases a virtual volume once its claim is gone,
 * which the volume-protection finalizer waits for; attach-detach acts only on nodes a kubelet
 * registered for it; ttl only annotates. The cloud controllers (service-lb, node-route,
 * cloud-node-lifecycle) never run: kube-controller-manager has no in-tree cloud provider.
 */
export const TENANT_CONTROLLERS: readonly string[] = [
  "*",
  "tokencleaner",
  "-node-lifecycle-controller",
  "-node-ipam-controller",
];

/**
 * The controllers of a Private tenant's kube-controller-manager: k3s's own set, unchanged. Its
 * Nodes are real k3s agents: the node lifecycle controller must mark a lost one and evict its
 * Pods, and flannel on each agent takes its pod range from the Node's `spec.podCIDR`, which the
 * node IPAM controller assigns. `tokencleaner` deletes expired bootstrap tokens (the join credential).
 */
export const PRIVATE_TENANT_CONTROLLERS: readonly string[] = ["*", "tokencleaner"];

/** k3s packaged components every control plane disables: the host (or nobody) provides them. */
const DISABLED_COMPONENTS = ["traefik", "servicelb", "metrics-server", "local-storage"] as const;

/**
 * The k3s server arguments that depend on the isolation mode, so the control plane's args follow
 * `spec.isolation.mode` (a change rolls the pod; the data volume stays).
 * - Shared and Dedicated: the host schedules the tenant's Pods (through their synced copies), so
 *   the tenant's scheduler is off; its Nodes are virtual, so the node controllers are off; host
 *   copies resolve names through the tenant DNS server in the host namespace, so CoreDNS is off.
 * - Private: the tenant's own nodes join its API, its own scheduler places its Pods on them, the
 *   node controllers manage them, and k3s's packaged CoreDNS (scheduled onto those nodes, at k3s's
 *   cluster DNS address that every joining kubelet is given) answers for the tenant's Services,
 *   whose ClusterIPs only the private nodes' kube-proxy serves. k3s's network policy controller
 *   runs on each agent: the tenant's own NetworkPolicies are enforced on its private nodes. In
 *   Shared and Dedicated the tenant has no nodes, and its Pods' host copies are under the
 *   host namespace's NetworkPolicies (the IsolationProfile), so k3s's controller stays off.
 */
export function modeDependentArgs(mode: IsolationMode): string[] {
  const isPrivate = mode === "Private";
  const disabled = isPrivate ? DISABLED_COMPONENTS : [...DISABLED_COMPONENTS, "coredns"];
  const controllers = isPrivate ? PRIVATE_TENANT_CONTROLLERS : TENANT_CONTROLLERS;
  return [
    `--disable=${disabled.join(",")}`,
    ...(isPrivate ? [] : ["--disable-scheduler", "--disable-network-policy"]),
    // Replaces k3s's default `*,tokencleaner`, hence the full list.
    `--kube-controller-manager-arg=controllers=${controllers.join(",")}`,
  ];
}

/** Secret in the host namespace holding the tenant's CAs and service-account key. */
export function pkiSecretName(tenant: string): string {
  return `${tenant}-pki`;
}

/** Secret in the host namespace holding the tenant's admin kubeconfig under {@link KUBECONFIG_KEY}. */
export function kubeconfigSecretName(tenant: string): string {
  return `${tenant}-kubeconfig`;
}

/** Labels every object the provisioner creates carries: managed-by tenantplane plus the tenant. */
export function tenantLabels(tenant: string): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_TENANT]: tenant };
}

/**
 * Label naming the tenant whose control-plane pod carries it. It lives under the reserved
 * `tenantplane.io/` prefix, which the sync planner strips from every tenant object, so no
 * tenant pod can ever carry it and become an endpoint of the control-plane Services.
 */
export const LABEL_CONTROL_PLANE_OF = "tenantplane.io/control-plane-of";

/** The StatefulSet's (immutable) pod selector; also the Services' selector. */
export function controlPlaneSelector(tenant: string): Record<string, string> {
  return { [LABEL_CONTROL_PLANE_OF]: tenant };
}

/**
 * The selector StatefulSets of earlier versions were created with. A selector cannot change
 * in place, so an existing StatefulSet keeps it (its pods carry both); only the Services, which
 * tenant pods could otherwise join, must select on {@link LABEL_CONTROL_PLANE_OF}.
 */
export function legacyControlPlaneSelector(tenant: string): Record<string, string> {
  return { "app.kubernetes.io/name": "k3s", "app.kubernetes.io/instance": tenant };
}

/**
 * The host namespace `tp-<tenant>`, labelled as tenantplane-managed, annotated with the uid of
 * the TenantCluster it is created for, and carrying the isolation profile's Pod Security labels
 * from the first moment, so no pod is ever admitted there under a laxer level.
 */
export function hostNamespaceManifest(
  tenant: string,
  uid: string,
  podSecurityLabels: Readonly<Record<string, string>> = {},
): V1Namespace {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: hostNamespaceFor(tenant),
      labels: { ...podSecurityLabels, ...tenantLabels(tenant) },
      annotations: { [ANNOTATION_TENANT_UID]: uid },
    },
  };
}

/** Every DNS name the API Service answers to inside the host cluster, shortest first. */
export function apiServiceDnsNames(tenant: string, clusterDomain: string = DEFAULT_CLUSTER_DOMAIN): string[] {
  const namespace = hostNamespaceFor(tenant);
  return [
    API_SERVICE_NAME,
    `${API_SERVICE_NAME}.${namespace}`,
    `${API_SERVICE_NAME}.${namespace}.svc`,
    `${API_SERVICE_NAME}.${namespace}.svc.${clusterDomain}`,
  ];
}

/** Inputs to {@link controlPlaneStatefulSet} beyond the TenantCluster itself. */
export interface StatefulSetOptions {
  /** Addresses (IPs or host names) of the load balancer, added to the serving certificate. */
  loadBalancerAddresses?: readonly string[];
  /** The host cluster's DNS domain, for the fully qualified Service name. */
  clusterDomain?: string;
  /**
   * Fingerprint of the PKI Secret's content (see pkiFingerprint), recorded on the pod template
   * so a replaced PKI rolls the pod and its init container installs the new CAs.
   */
  pkiFingerprint?: string;
  /** Pod selector to keep; an existing StatefulSet's selector cannot change. */
  selector?: Record<string, string>;
}

/** Pod template annotation holding the fingerprint of the PKI the pod was started with. */
export const ANNOTATION_PKI_FINGERPRINT = "tenantplane.io/pki-fingerprint";

/**
 * User and group the control plane runs as. k3s without its agent needs no root: it runs no
 * containerd, kubelet, iptables or mounts, and accepts a non-root user when the agent is
 * disabled. A fixed non-zero uid lets the pod pass Pod Security `restricted`, the strictest
 * level a profile can enforce.
 */
export const CONTROL_PLANE_UID = 1000;

/**
 * The tenant's control plane: one k3s server pod (no agent; scheduler, node controllers and
 * CoreDNS only for a Private tenant) whose data directory lives on a PVC, started on the CAs from
 * the tenant's PKI Secret. The isolation mode changes only the k3s container's args.
 */
export function controlPlaneStatefulSet(tc: ControlPlaneSource, options: StatefulSetOptions = {}): V1StatefulSet {
  const tenant = tc.metadata.name;
  const { image, resources, storage } = tc.spec.controlPlane;
  const labels = tenantLabels(tenant);
  const selector = options.selector ?? controlPlaneSelector(tenant);
  const sans = [...apiServiceDnsNames(tenant, options.clusterDomain), ...(options.loadBalancerAddresses ?? [])];
  const dataMount = { name: DATA_VOLUME_NAME, mountPath: K3S_DATA_DIR };

  const k3s: V1Container = {
    name: "k3s",
    image,
    command: ["/bin/k3s"],
    args: [
      "server",
      // No --datastore-endpoint and no --cluster-init: k3s keeps its state in SQLite (through
      // kine) under --data-dir, which is the PVC.
      `--data-dir=${K3S_DATA_DIR}`,
      `--https-listen-port=${API_PORT}`,
      // The default kubeconfig path (/etc/rancher/k3s) is on the read-only root filesystem and
      // not writable by a non-root user; the data volume is both writable and private.
      `--write-kubeconfig=${K3S_DATA_DIR}/kubeconfig.yaml`,
      "--write-kubeconfig-mode=0600",
      // No node of its own in this pod: Shared and Dedicated tenants run their workloads on the
      // host through the sync engine, Private ones on nodes that join as separate k3s agents.
      "--disable-agent",
      "--disable-cloud-controller",
      "--disable-helm-controller",
      // Scheduler, node controllers, CoreDNS and network policy follow spec.isolation.mode (see modeDependentArgs).
      ...modeDependentArgs(isolationModeOf(tc.spec)),
      // k3s only signs its serving certificate for names it is told about.
      ...unique(sans).map((san) => `--tls-san=${san}`),
    ],
    ports: [{ name: "https", containerPort: API_PORT, protocol: "TCP" }],
    // k3s runs kube-apiserver with anonymous auth off, so an HTTP probe of /readyz would get
    // 401; an open port is the best unauthenticated signal. The provisioner then confirms
    // readiness with an authenticated call through the tenant kubeconfig.
    readinessProbe: {
      tcpSocket: { port: API_PORT },
      periodSeconds: 5,
      failureThreshold: 3,
    },
    resources: resourceRequirements(resources),
    securityContext: containerSecurity(),
    // A non-root k3s keeps per-user state under $HOME; the root filesystem is read-only.
    env: [{ name: "HOME", value: "/tmp" }],
    volumeMounts: [
      dataMount,
      // k3s writes scratch files under /tmp, which must be writable with a read-only root filesystem.
      { name: "tmp", mountPath: "/tmp" },
    ],
  };

  const copyPki: V1Container = {
    name: "copy-pki",
    image,
    command: ["/bin/sh", "-c", copyPkiScript()],
    // The same requests and limits as k3s, so a quota or LimitRange judges both containers alike
    // and the pod's effective request stays the k3s container's.
    resources: resourceRequirements(resources),
    securityContext: containerSecurity(),
    volumeMounts: [dataMount, { name: "pki", mountPath: PKI_MOUNT, readOnly: true }],
  };

  const claim: V1PersistentVolumeClaim = {
    metadata: { name: DATA_VOLUME_NAME, labels },
    spec: {
      accessModes: ["ReadWriteOnce"],
      ...(storage.storageClassName !== undefined ? { storageClassName: storage.storageClassName } : {}),
      resources: { requests: { storage: storage.size } },
    },
  };

  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: STATEFULSET_NAME, namespace: hostNamespaceFor(tenant), labels },
    spec: {
      replicas: 1,
      podManagementPolicy: "Parallel",
      serviceName: HEADLESS_SERVICE_NAME,
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels: {
            ...labels,
            ...legacyControlPlaneSelector(tenant),
            ...controlPlaneSelector(tenant),
            [LABEL_CONTROL_PLANE]: "true",
          },
          ...(options.pkiFingerprint ? { annotations: { [ANNOTATION_PKI_FINGERPRINT]: options.pkiFingerprint } } : {}),
        },
        spec: {
          // k3s never talks to the host API, and host Service variables would leak into it.
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          // Everything Pod Security `restricted` asks of a pod, so the control plane is admitted
          // under every level a profile can enforce. fsGroup makes the data volume writable for
          // the non-root user on storage that supports ownership management.
          securityContext: {
            runAsNonRoot: true,
            runAsUser: CONTROL_PLANE_UID,
            runAsGroup: CONTROL_PLANE_UID,
            fsGroup: CONTROL_PLANE_UID,
            fsGroupChangePolicy: "OnRootMismatch",
            seccompProfile: { type: "RuntimeDefault" },
          },
          initContainers: [copyPki],
          containers: [k3s],
          volumes: [
            { name: "pki", secret: { secretName: pkiSecretName(tenant), defaultMode: 0o400 } },
            { name: "tmp", emptyDir: {} },
          ],
        },
      },
      volumeClaimTemplates: [claim],
    },
  };
}

const PKI_MOUNT = "/etc/tenantplane/pki";

// Installs the PKI Secret's files into k3s's TLS directory. k3s adopts CA files it finds at
// first start instead of generating its own; they are copied, not mounted, because k3s writes
// its leaf certificates into the same directory. While the volume holds the Secret's CAs every
// file present is kept. When the Secret holds different CAs (it was deleted and regenerated to
// recover a lost or leaked PKI) everything signed by the old ones must go: the leaf
// certificates, which k3s then reissues, and the server token, which pins the old server CA's
// hash. The CA files are then replaced.
function copyPkiScript(): string {
  const dir = `${K3S_DATA_DIR}/server/tls`;
  const files = Object.values(PKI_FILES).join(" ");
  const cas = [
    PKI_FILES.serverCaCert,
    PKI_FILES.clientCaCert,
    PKI_FILES.requestHeaderCaCert,
    PKI_FILES.serviceAccountKey,
  ];
  return [
    "set -eu",
    `for f in ${files}; do [ -s ${PKI_MOUNT}/$f ] || { echo "PKI Secret lacks $f" >&2; exit 1; }; done`,
    `mkdir -p ${dir}`,
    "replaced=no",
    `for f in ${cas.join(" ")}; do`,
    // Compared through the shell rather than cmp: the k3s image ships only a minimal userland.
    `  if [ -e ${dir}/$f ] && [ "$(cat ${PKI_MOUNT}/$f)" != "$(cat ${dir}/$f)" ]; then replaced=yes; fi`,
    "done",
    'if [ "$replaced" = yes ]; then',
    '  echo "the PKI Secret holds new CAs: replacing the CAs on the volume and every certificate they signed"',
    `  rm -rf ${dir} && mkdir -p ${dir}`,
    `  rm -f ${K3S_DATA_DIR}/server/token ${K3S_DATA_DIR}/token`,
    "fi",
    `for f in ${files}; do`,
    `  if [ ! -e ${dir}/$f ]; then cp ${PKI_MOUNT}/$f ${dir}/$f; chmod 600 ${dir}/$f; fi`,
    "done",
  ].join("\n");
}

// Pod Security `restricted` asks for a non-root user, no privilege escalation and every
// capability dropped; the pod-level context sets the user and seccomp profile. k3s without its
// agent needs none of what this takes away. The root filesystem stays read-only: k3s writes only
// to its data volume and /tmp.
function containerSecurity(): V1SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
  };
}

function resourceRequirements(resources: ControlPlaneSpec["resources"]): V1ResourceRequirements {
  const out: V1ResourceRequirements = {};
  const requests = definedEntries(resources.requests);
  const limits = definedEntries(resources.limits);
  if (requests) out.requests = requests;
  if (limits) out.limits = limits;
  return out;
}

// Drops unset entries; an empty list is left out entirely rather than written as `{}`.
function definedEntries(list: Record<string, string | undefined> | undefined): Record<string, string> | undefined {
  const entries = Object.entries(list ?? {}).filter((e): e is [string, string] => e[1] !== undefined);
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/** Headless Service giving the k3s pod its stable DNS identity; lists the pod before it is ready. */
export function headlessService(tenant: string): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: HEADLESS_SERVICE_NAME, namespace: hostNamespaceFor(tenant), labels: tenantLabels(tenant) },
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: controlPlaneSelector(tenant),
      ports: [{ name: "https", port: API_PORT, targetPort: "https", protocol: "TCP" }],
    },
  };
}

/**
 * The tenant API Service: ClusterIP, or LoadBalancer carrying the spec's annotations when
 * `expose.loadBalancer.enabled`. Port {@link API_PORT} on both sides.
 */
export function apiService(tc: ControlPlaneSource): V1Service {
  const tenant = tc.metadata.name;
  const lb = tc.spec.controlPlane.expose.loadBalancer;
  const annotations = lb.enabled && Object.keys(lb.annotations).length > 0 ? { ...lb.annotations } : undefined;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: API_SERVICE_NAME,
      namespace: hostNamespaceFor(tenant),
      labels: tenantLabels(tenant),
      ...(annotations ? { annotations } : {}),
    },
    spec: {
      type: lb.enabled ? "LoadBalancer" : "ClusterIP",
      selector: controlPlaneSelector(tenant),
      ports: [{ name: "https", port: API_PORT, targetPort: "https", protocol: "TCP" }],
    },
  };
}

/** In-cluster URL of the tenant API: `https://k3s.tp-<tenant>.svc:6443`. */
export function endpointFor(tenant: string): string {
  return `https://${API_SERVICE_NAME}.${hostNamespaceFor(tenant)}.svc:${API_PORT}`;
}

/** Every address (IP or host name) in a LoadBalancer Service's status, in status order. */
export function loadBalancerAddresses(service: V1Service): string[] {
  if (service.spec?.type !== "LoadBalancer") return [];
  const addresses: string[] = [];
  for (const ingress of service.status?.loadBalancer?.ingress ?? []) {
    const address = ingress.ip ?? ingress.hostname;
    if (address) addresses.push(address);
  }
  return addresses;
}

/**
 * URL of the tenant API through its load balancer, from the first `status.loadBalancer.ingress`
 * entry; undefined when the Service is not a LoadBalancer or has no address yet.
 */
export function externalEndpointFrom(service: V1Service): string | undefined {
  const address = loadBalancerAddresses(service)[0];
  if (address === undefined) return undefined;
  const port = service.spec?.ports?.[0]?.port ?? API_PORT;
  const host = address.includes(":") ? `[${address}]` : address;
  return `https://${host}:${port}`;
}

/**
 * Differences between an existing and a desired control-plane StatefulSet that Kubernetes
 * refuses to apply in place, each as a sentence naming the field and the fix. Empty when the
 * desired object can be applied.
 */
export function immutableChanges(existing: V1StatefulSet, desired: V1StatefulSet): string[] {
  const reasons: string[] = [];
  const where = `StatefulSet ${STATEFULSET_NAME} in namespace ${existing.metadata?.namespace ?? "?"}`;

  const existingClaim = claimNamed(existing, DATA_VOLUME_NAME);
  const desiredClaim = claimNamed(desired, DATA_VOLUME_NAME);
  const beforeClass = existingClaim?.spec?.storageClassName;
  const afterClass = desiredClaim?.spec?.storageClassName;
  if (beforeClass !== afterClass) {
    reasons.push(
      `spec.controlPlane.storage.storageClassName cannot change from ${describeClass(beforeClass)} to ` +
        `${describeClass(afterClass)} on an existing control plane: recreate the TenantCluster or revert the field`,
    );
  }
  const beforeSize = existingClaim?.spec?.resources?.requests?.["storage"];
  const afterSize = desiredClaim?.spec?.resources?.requests?.["storage"];
  if (!quantitiesEqual(beforeSize, afterSize)) {
    reasons.push(
      `spec.controlPlane.storage.size cannot change from ${beforeSize ?? "unset"} to ${afterSize ?? "unset"} ` +
        `on an existing control plane: recreate the TenantCluster or revert the field`,
    );
  }

  const fixed: Array<[string, unknown, unknown]> = [
    ["spec.selector", existing.spec?.selector?.matchLabels, desired.spec?.selector?.matchLabels],
    ["spec.serviceName", existing.spec?.serviceName, desired.spec?.serviceName],
    ["spec.podManagementPolicy", existing.spec?.podManagementPolicy, desired.spec?.podManagementPolicy],
    [
      "spec.volumeClaimTemplates names",
      (existing.spec?.volumeClaimTemplates ?? []).map((c) => c.metadata?.name),
      (desired.spec?.volumeClaimTemplates ?? []).map((c) => c.metadata?.name),
    ],
  ];
  for (const [field, before, after] of fixed) {
    if (before !== undefined && canonical(before) !== canonical(after)) {
      reasons.push(
        `${where} has a ${field} this version of tenantplane does not create: delete the StatefulSet ` +
          `(its data volume is kept) so the provisioner recreates it`,
      );
    }
  }
  return reasons;
}

// The API server returns maps with sorted keys; what we build keeps insertion order.
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

function claimNamed(sts: V1StatefulSet, name: string): V1PersistentVolumeClaim | undefined {
  return sts.spec?.volumeClaimTemplates?.find((claim) => claim.metadata?.name === name);
}

function describeClass(name: string | undefined): string {
  return name === undefined ? "the default class" : name;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
