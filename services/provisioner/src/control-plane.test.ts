import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Container, V1Service, V1StatefulSet } from "@kubernetes/client-node";
import { parseTenantCluster } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import {
  API_PORT,
  apiService,
  apiServiceDnsNames,
  controlPlaneStatefulSet,
  endpointFor,
  externalEndpointFrom,
  headlessService,
  hostNamespaceManifest,
  immutableChanges,
  kubeconfigSecretName,
  loadBalancerAddresses,
  pkiSecretName,
  PRIVATE_TENANT_CONTROLLERS,
  TENANT_CONTROLLERS,
  type ControlPlaneSource,
} from "./control-plane.js";
import { PKI_FILES } from "./pki.js";

function tenantCluster(controlPlane: Record<string, unknown> = {}, name = "acme"): ControlPlaneSource {
  return parseTenantCluster({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name },
    spec: { controlPlane },
  });
}

function inMode(mode: string, extra: Record<string, unknown> = {}): ControlPlaneSource {
  return parseTenantCluster({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: "acme" },
    spec: { controlPlane: {}, isolation: { mode, ...extra } },
  });
}

const MANAGED = { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "acme" };

function podSpec(sts: V1StatefulSet) {
  const spec = sts.spec?.template.spec;
  if (!spec) throw new Error("StatefulSet has no pod spec");
  return spec;
}

function container(sts: V1StatefulSet, name: string, init = false): V1Container {
  const list = init ? podSpec(sts).initContainers : podSpec(sts).containers;
  const found = list?.find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

function lbService(ingress: Array<{ ip?: string; hostname?: string }>, type = "LoadBalancer"): V1Service {
  return {
    spec: { type, ports: [{ port: API_PORT }] },
    status: { loadBalancer: { ingress } },
  };
}

describe("names", () => {
  it("derives Secret names from the tenant", () => {
    expect(pkiSecretName("acme")).toBe("acme-pki");
    expect(kubeconfigSecretName("acme")).toBe("acme-kubeconfig");
  });

  it("lists the API Service's DNS names", () => {
    expect(apiServiceDnsNames("acme")).toEqual([
      "k3s",
      "k3s.tp-acme",
      "k3s.tp-acme.svc",
      "k3s.tp-acme.svc.cluster.local",
    ]);
    expect(apiServiceDnsNames("acme", "corp.example")[3]).toBe("k3s.tp-acme.svc.corp.example");
  });
});

describe("hostNamespaceManifest", () => {
  it("names the namespace tp-<tenant>, labels it as managed and records the TenantCluster's uid", () => {
    expect(hostNamespaceManifest("acme", "uid-1")).toEqual({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "tp-acme", labels: MANAGED, annotations: { "tenantplane.io/tenant-uid": "uid-1" } },
    });
  });

  it("carries the profile's Pod Security labels from creation, never in place of the managed labels", () => {
    const ns = hostNamespaceManifest("acme", "uid-1", {
      "pod-security.kubernetes.io/enforce": "restricted",
      "tenantplane.io/tenant": "someone-else",
    });
    expect(ns.metadata?.labels).toEqual({ ...MANAGED, "pod-security.kubernetes.io/enforce": "restricted" });
  });
});

describe("controlPlaneStatefulSet", () => {
  const sts = controlPlaneStatefulSet(tenantCluster());

  it("runs one k3s pod in the host namespace, governed by the headless Service", () => {
    expect(sts.apiVersion).toBe("apps/v1");
    expect(sts.kind).toBe("StatefulSet");
    expect(sts.metadata?.name).toBe("k3s");
    expect(sts.metadata?.namespace).toBe("tp-acme");
    expect(sts.metadata?.labels).toEqual(MANAGED);
    expect(sts.spec?.replicas).toBe(1);
    expect(sts.spec?.podManagementPolicy).toBe("Parallel");
    expect(sts.spec?.serviceName).toBe("k3s-headless");
  });

  it("labels the pod as the tenant's control plane and selects it by a reserved key tenants cannot set", () => {
    const podLabels = sts.spec?.template.metadata?.labels;
    expect(podLabels).toEqual({
      ...MANAGED,
      "tenantplane.io/control-plane": "true",
      "tenantplane.io/control-plane-of": "acme",
      "app.kubernetes.io/name": "k3s",
      "app.kubernetes.io/instance": "acme",
    });
    expect(sts.spec?.selector.matchLabels).toEqual({ "tenantplane.io/control-plane-of": "acme" });
  });

  it("keeps the selector an existing StatefulSet was created with", () => {
    const legacy = { "app.kubernetes.io/name": "k3s", "app.kubernetes.io/instance": "acme" };
    const kept = controlPlaneStatefulSet(tenantCluster(), { selector: legacy });
    expect(kept.spec?.selector.matchLabels).toEqual(legacy);
    expect(kept.spec?.template.metadata?.labels).toMatchObject(legacy);
  });

  it("records the PKI fingerprint on the pod template, so a new PKI rolls the pod", () => {
    const rolled = controlPlaneStatefulSet(tenantCluster(), { pkiFingerprint: "abc" });
    expect(rolled.spec?.template.metadata?.annotations).toEqual({ "tenantplane.io/pki-fingerprint": "abc" });
  });

  it("starts k3s server without agent, add-ons, network policy, cloud or helm controllers, or scheduler", () => {
    const k3s = container(sts, "k3s");
    expect(k3s.image).toBe("rancher/k3s:v1.34.1-k3s1");
    expect(k3s.command).toEqual(["/bin/k3s"]);
    expect(k3s.args?.[0]).toBe("server");
    expect(k3s.args).toEqual(
      expect.arrayContaining([
        "--disable-agent",
        "--disable=traefik,servicelb,metrics-server,local-storage,coredns",
        "--disable-network-policy",
        "--disable-cloud-controller",
        "--disable-helm-controller",
        "--disable-scheduler",
        "--data-dir=/var/lib/rancher/k3s",
        "--https-listen-port=6443",
      ]),
    );
    expect(k3s.args?.some((a) => a.startsWith("--datastore-endpoint") || a === "--cluster-init")).toBe(false);
    expect(k3s.ports).toEqual([{ name: "https", containerPort: 6443, protocol: "TCP" }]);
  });

  it("runs k3s's controller set without the node lifecycle and node IPAM controllers, which virtual Nodes must not have", () => {
    const args = container(sts, "k3s").args ?? [];
    const controllers = args.filter((a) => a.startsWith("--kube-controller-manager-arg=controllers="));
    expect(controllers).toEqual([
      "--kube-controller-manager-arg=controllers=*,tokencleaner,-node-lifecycle-controller,-node-ipam-controller",
    ]);
    // The argument replaces k3s's own `*,tokencleaner`, so the list must keep both.
    expect(TENANT_CONTROLLERS.slice(0, 2)).toEqual(["*", "tokencleaner"]);
    expect(args.filter((a) => a.startsWith("--kube-controller-manager-arg="))).toHaveLength(1);
  });

  it("adds a --tls-san for every Service name", () => {
    const sans = container(sts, "k3s").args?.filter((a) => a.startsWith("--tls-san="));
    expect(sans).toEqual([
      "--tls-san=k3s",
      "--tls-san=k3s.tp-acme",
      "--tls-san=k3s.tp-acme.svc",
      "--tls-san=k3s.tp-acme.svc.cluster.local",
    ]);
  });

  it("adds load-balancer addresses and a custom cluster domain to the SANs, once each", () => {
    const withLb = controlPlaneStatefulSet(tenantCluster(), {
      loadBalancerAddresses: ["203.0.113.7", "api.acme.example", "203.0.113.7"],
      clusterDomain: "corp.example",
    });
    const sans = container(withLb, "k3s").args?.filter((a) => a.startsWith("--tls-san="));
    expect(sans).toEqual([
      "--tls-san=k3s",
      "--tls-san=k3s.tp-acme",
      "--tls-san=k3s.tp-acme.svc",
      "--tls-san=k3s.tp-acme.svc.corp.example",
      "--tls-san=203.0.113.7",
      "--tls-san=api.acme.example",
    ]);
  });

  it("probes readiness on the TCP port, since /readyz needs credentials", () => {
    expect(container(sts, "k3s").readinessProbe?.tcpSocket?.port).toBe(6443);
    expect(container(sts, "k3s").readinessProbe?.httpGet).toBeUndefined();
  });

  it("copies the PKI Secret onto the data volume before k3s starts", () => {
    const init = container(sts, "copy-pki", true);
    expect(init.image).toBe("rancher/k3s:v1.34.1-k3s1");
    expect(init.command?.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(init.volumeMounts).toEqual([
      { name: "data", mountPath: "/var/lib/rancher/k3s" },
      { name: "pki", mountPath: "/etc/tenantplane/pki", readOnly: true },
    ]);
    const pki = podSpec(sts).volumes?.find((v) => v.name === "pki");
    expect(pki?.secret?.secretName).toBe("acme-pki");
  });

  it("mounts the data volume where k3s keeps its SQLite datastore", () => {
    expect(container(sts, "k3s").volumeMounts).toContainEqual({ name: "data", mountPath: "/var/lib/rancher/k3s" });
  });

  it("asks for a volume of the spec's size, leaving the class to the host default when unset", () => {
    const [claim] = sts.spec?.volumeClaimTemplates ?? [];
    expect(claim?.metadata?.name).toBe("data");
    expect(claim?.metadata?.labels).toEqual(MANAGED);
    expect(claim?.spec?.accessModes).toEqual(["ReadWriteOnce"]);
    expect(claim?.spec?.resources?.requests).toEqual({ storage: "5Gi" });
    expect(claim?.spec && "storageClassName" in claim.spec).toBe(false);
  });

  it("uses the spec's storage class when set", () => {
    const fast = controlPlaneStatefulSet(tenantCluster({ storage: { storageClassName: "fast", size: "20Gi" } }));
    const [claim] = fast.spec?.volumeClaimTemplates ?? [];
    expect(claim?.spec?.storageClassName).toBe("fast");
    expect(claim?.spec?.resources?.requests).toEqual({ storage: "20Gi" });
  });

  it("copies requests and limits from the spec, leaving out unset ones", () => {
    expect(container(sts, "k3s").resources).toEqual({ requests: { cpu: "100m", memory: "256Mi" } });
    expect(Object.keys(container(sts, "k3s").resources ?? {})).toEqual(["requests"]);
    const limited = controlPlaneStatefulSet(
      tenantCluster({ resources: { requests: { cpu: "1" }, limits: { memory: "1Gi" } } }),
    );
    const resources = container(limited, "k3s").resources;
    expect(resources?.requests).toEqual({ cpu: "1", memory: "256Mi" });
    expect(Object.keys(resources?.limits ?? {})).toEqual(["memory"]);
    expect(resources?.limits?.["memory"]).toBe("1Gi");
  });

  it("runs without privileges, host API credentials or service links", () => {
    for (const c of [container(sts, "k3s"), container(sts, "copy-pki", true)]) {
      expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
      expect(c.securityContext?.readOnlyRootFilesystem).toBe(true);
      expect(c.securityContext?.capabilities?.drop).toEqual(["ALL"]);
      expect(c.securityContext?.privileged).toBeUndefined();
      expect(c.securityContext?.runAsNonRoot).toBe(true);
      expect(c.securityContext?.runAsUser).toBeUndefined();
    }
    expect(podSpec(sts).automountServiceAccountToken).toBe(false);
    expect(podSpec(sts).enableServiceLinks).toBe(false);
  });

  it("meets Pod Security restricted: non-root user and group, fsGroup for the volume, RuntimeDefault seccomp", () => {
    expect(podSpec(sts).securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      fsGroupChangePolicy: "OnRootMismatch",
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(podSpec(sts).volumes?.every((v) => v.hostPath === undefined)).toBe(true);
  });

  it("writes k3s's kubeconfig onto the data volume, not the read-only root filesystem", () => {
    expect(container(sts, "k3s").args).toContain("--write-kubeconfig=/var/lib/rancher/k3s/kubeconfig.yaml");
  });

  it("gives the init container the control plane's resources, so quota and limits judge both alike", () => {
    expect(container(sts, "copy-pki", true).resources).toEqual(container(sts, "k3s").resources);
  });
});

describe("copy-pki script", () => {
  const script = container(controlPlaneStatefulSet(tenantCluster()), "copy-pki", true).command?.[2] ?? "";

  function runIn(root: string): void {
    const localised = script
      .replaceAll("/var/lib/rancher/k3s", join(root, "data"))
      .replaceAll("/etc/tenantplane/pki", join(root, "pki"));
    execFileSync("sh", ["-c", localised], { stdio: "pipe" });
  }

  // Runs the script against a scratch directory holding `pki/` (the Secret) and `data/`.
  function withScratch(test: (root: string, tls: string) => void): void {
    const root = mkdtempSync(join(tmpdir(), "copy-pki-"));
    try {
      mkdirSync(join(root, "pki"));
      test(root, join(root, "data", "server", "tls"));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }

  it("copies every PKI file when absent", () => {
    withScratch((root, tls) => {
      for (const file of Object.values(PKI_FILES)) writeFileSync(join(root, "pki", file), `new ${file}`);

      runIn(root);

      for (const file of Object.values(PKI_FILES)) {
        expect(readFileSync(join(tls, file), "utf8")).toBe(`new ${file}`);
        expect(statSync(join(tls, file)).mode & 0o777).toBe(0o600);
      }
    });
  });

  it("leaves the volume alone while it holds the Secret's CAs", () => {
    withScratch((root, tls) => {
      for (const file of Object.values(PKI_FILES)) writeFileSync(join(root, "pki", file), `same ${file}`);
      runIn(root);
      writeFileSync(join(tls, "serving-kube-apiserver.crt"), "leaf k3s signed");
      writeFileSync(join(root, "data", "server", "token"), "K10old::server:x");

      runIn(root);

      expect(readFileSync(join(tls, "serving-kube-apiserver.crt"), "utf8")).toBe("leaf k3s signed");
      expect(existsSync(join(root, "data", "server", "token"))).toBe(true);
    });
  });

  it("replaces the CAs and drops what the old ones signed when the Secret holds a new PKI", () => {
    withScratch((root, tls) => {
      for (const file of Object.values(PKI_FILES)) writeFileSync(join(root, "pki", file), `old ${file}`);
      runIn(root);
      writeFileSync(join(tls, "serving-kube-apiserver.crt"), "leaf signed by the old CA");
      writeFileSync(join(root, "data", "server", "token"), "K10<old ca hash>::server:x");
      mkdirSync(join(root, "data", "server", "db"), { recursive: true });
      writeFileSync(join(root, "data", "server", "db", "state.db"), "datastore");

      for (const file of Object.values(PKI_FILES)) writeFileSync(join(root, "pki", file), `new ${file}`);
      runIn(root);

      for (const file of Object.values(PKI_FILES)) expect(readFileSync(join(tls, file), "utf8")).toBe(`new ${file}`);
      expect(existsSync(join(tls, "serving-kube-apiserver.crt"))).toBe(false);
      expect(existsSync(join(root, "data", "server", "token"))).toBe(false);
      expect(readFileSync(join(root, "data", "server", "db", "state.db"), "utf8")).toBe("datastore");
    });
  });

  it("fails rather than start k3s without the CA files", () => {
    withScratch((root, tls) => {
      expect(() => runIn(root)).toThrow();
      expect(existsSync(join(tls, "client-ca.crt"))).toBe(false);
    });
  });
});

describe("Services", () => {
  it("builds a headless Service that publishes the pod before it is ready", () => {
    const svc = headlessService("acme");
    expect(svc.metadata).toEqual({ name: "k3s-headless", namespace: "tp-acme", labels: MANAGED });
    expect(svc.spec?.clusterIP).toBe("None");
    expect(svc.spec?.publishNotReadyAddresses).toBe(true);
    expect(svc.spec?.selector).toEqual({ "tenantplane.io/control-plane-of": "acme" });
    expect(svc.spec?.ports).toEqual([{ name: "https", port: 6443, targetPort: "https", protocol: "TCP" }]);
  });

  it("selects the control plane only by the reserved key, never by labels a tenant pod may carry", () => {
    for (const svc of [headlessService("acme"), apiService(tenantCluster())]) {
      expect(Object.keys(svc.spec?.selector ?? {})).toEqual(["tenantplane.io/control-plane-of"]);
    }
  });

  it("builds a ClusterIP API Service by default, ignoring load-balancer annotations", () => {
    const svc = apiService(
      tenantCluster({ expose: { loadBalancer: { enabled: false, annotations: { "lb.example/x": "1" } } } }),
    );
    expect(svc.metadata?.name).toBe("k3s");
    expect(svc.metadata?.namespace).toBe("tp-acme");
    expect(svc.metadata?.annotations).toBeUndefined();
    expect(svc.spec?.type).toBe("ClusterIP");
    expect(svc.spec?.ports).toEqual([{ name: "https", port: 6443, targetPort: "https", protocol: "TCP" }]);
  });

  it("builds a LoadBalancer API Service carrying the spec's annotations when exposed", () => {
    const svc = apiService(
      tenantCluster({ expose: { loadBalancer: { enabled: true, annotations: { "lb.example/internal": "true" } } } }),
    );
    expect(svc.spec?.type).toBe("LoadBalancer");
    expect(svc.metadata?.annotations).toEqual({ "lb.example/internal": "true" });
    expect(svc.metadata?.labels).toEqual(MANAGED);
  });
});

describe("endpoints", () => {
  it("points in-cluster clients at the Service DNS name and API port", () => {
    expect(endpointFor("acme")).toBe("https://k3s.tp-acme.svc:6443");
  });

  it("reads the external endpoint from the first load-balancer ingress", () => {
    expect(externalEndpointFrom(lbService([{ ip: "127.0.0.9" }, { ip: "10.0.0.1" }]))).toBe("https://127.0.0.9:6443");
    expect(externalEndpointFrom(lbService([{ hostname: "lb.example.com" }]))).toBe("https://lb.example.com:6443");
    expect(externalEndpointFrom(lbService([{ ip: "2001:db8::1" }]))).toBe("https://[2001:db8::1]:6443");
  });

  it("has no external endpoint before an address is assigned or when not a LoadBalancer", () => {
    expect(externalEndpointFrom(lbService([]))).toBeUndefined();
    expect(externalEndpointFrom({ spec: { type: "LoadBalancer" } })).toBeUndefined();
    expect(externalEndpointFrom(lbService([{ ip: "127.0.0.9" }], "ClusterIP"))).toBeUndefined();
  });

  it("lists every load-balancer address for the serving certificate", () => {
    expect(loadBalancerAddresses(lbService([{ ip: "127.0.0.9" }, { hostname: "lb.example.com" }, {}]))).toEqual([
      "127.0.0.9",
      "lb.example.com",
    ]);
  });
});

describe("immutableChanges", () => {
  const base = controlPlaneStatefulSet(tenantCluster({ storage: { storageClassName: "fast", size: "5Gi" } }));

  it("finds nothing to object to in mutable changes", () => {
    const desired = controlPlaneStatefulSet(
      tenantCluster({
        image: "rancher/k3s:v1.35.0-k3s1",
        storage: { storageClassName: "fast", size: "5120Mi" },
      }),
      { loadBalancerAddresses: ["127.0.0.9"] },
    );
    expect(immutableChanges(base, desired)).toEqual([]);
  });

  it("compares selectors as the API server returns them, with keys sorted", () => {
    const legacy = { "app.kubernetes.io/name": "k3s", "app.kubernetes.io/instance": "acme" };
    const built = controlPlaneStatefulSet(tenantCluster(), { selector: legacy });
    const labels = built.spec!.selector.matchLabels!;
    const sorted = Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
    const stored = { ...built, spec: { ...built.spec!, selector: { matchLabels: sorted } } };
    expect(Object.keys(sorted)).not.toEqual(Object.keys(labels));
    expect(immutableChanges(stored, built)).toEqual([]);
  });

  it.each([
    [{ storageClassName: "slow", size: "5Gi" }, "storageClassName cannot change from fast to slow"],
    [{ storageClassName: "fast", size: "10Gi" }, "size cannot change from 5Gi to 10Gi"],
  ])("reports a storage change to %o, with the fix", (storage, change) => {
    const desired = controlPlaneStatefulSet(tenantCluster({ storage }));
    expect(immutableChanges(base, desired)).toEqual([
      `spec.controlPlane.storage.${change} on an existing control plane: ` +
        "recreate the TenantCluster or revert the field",
    ]);
  });

  it("reports setting or clearing the storage class", () => {
    const unset = controlPlaneStatefulSet(tenantCluster());
    expect(immutableChanges(unset, base)[0]).toContain("from the default class to fast");
    expect(immutableChanges(base, unset)[0]).toContain("from fast to the default class");
  });

  it("reports immutable fields a different tenantplane version created", () => {
    const existing: V1StatefulSet = structuredClone(base);
    if (existing.spec) existing.spec.serviceName = "old-headless";
    const reasons = immutableChanges(existing, base);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain("spec.serviceName");
    expect(reasons[0]).toContain("StatefulSet k3s in namespace tp-acme");
    expect(reasons[0]).toContain("delete the StatefulSet");
  });
});

describe("k3s args by isolation mode", () => {
  const dedicated = { dedicated: { nodeSelector: { "tenantplane.io/pool": "acme" } } };
  const argsOf = (tc: ControlPlaneSource) => container(controlPlaneStatefulSet(tc), "k3s").args ?? [];

  it.each([
    ["unset", tenantCluster()],
    ["Shared", inMode("Shared")],
    ["Dedicated", inMode("Dedicated", dedicated)],
  ])("keeps the scheduler, node controllers, CoreDNS and network policy off when the mode is %s", (_mode, tc) => {
    const args = argsOf(tc);
    expect(args).toContain("--disable-scheduler");
    expect(args).toContain("--disable-network-policy");
    expect(args).toContain("--disable=traefik,servicelb,metrics-server,local-storage,coredns");
    expect(args).toContain(`--kube-controller-manager-arg=controllers=${TENANT_CONTROLLERS.join(",")}`);
  });

  it("runs the tenant's own scheduler, k3s's full controller set, CoreDNS and network policy when Private, still without an agent", () => {
    const args = argsOf(inMode("Private"));
    expect(args).not.toContain("--disable-scheduler");
    expect(args).not.toContain("--disable-network-policy");
    expect(args).toContain("--disable=traefik,servicelb,metrics-server,local-storage");
    expect(args).toContain("--kube-controller-manager-arg=controllers=*,tokencleaner");
    expect(PRIVATE_TENANT_CONTROLLERS).toEqual(["*", "tokencleaner"]);
    expect(args).toContain("--disable-agent");
    expect(
      args.filter((a) => a.startsWith("--disable=") || a.startsWith("--kube-controller-manager-arg=")),
    ).toHaveLength(2);
  });

  it("changes nothing but the k3s container's args, so a change of mode rolls the pod and keeps its data claim", () => {
    const shared = controlPlaneStatefulSet(inMode("Shared"), { pkiFingerprint: "f" });
    const privateSts = controlPlaneStatefulSet(inMode("Private"), { pkiFingerprint: "f" });
    const withoutArgs = (sts: V1StatefulSet) => {
      const copy = structuredClone(sts);
      for (const c of copy.spec!.template.spec!.containers) if (c.name === "k3s") delete c.args;
      return copy;
    };
    expect(withoutArgs(privateSts)).toEqual(withoutArgs(shared));
    expect(privateSts.spec?.volumeClaimTemplates).toEqual(shared.spec?.volumeClaimTemplates);
    expect(immutableChanges(shared, privateSts)).toEqual([]);
    expect(immutableChanges(privateSts, shared)).toEqual([]);
  });
});
