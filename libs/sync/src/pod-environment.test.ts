import { defaultSyncPolicySpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { KubeObjectSchema } from "./kube-object.js";
import { plan } from "./plan.js";
import { podEnvironmentFrom, tokenRequestsOf, type PodEnvironment } from "./pod-environment.js";
import { transform } from "./transform.js";

/* eslint-disable @typescript-eslint/no-explicit-any */
const env: PodEnvironment = { apiHost: "10.96.0.10", apiPort: 6443, dnsHost: "10.96.0.53" };

function pod(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) {
  return KubeObjectSchema.parse({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "shop", uid: "tenant-uid-1", ...metadata },
    spec,
  });
}
const hostPod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) =>
  transform(pod(spec, metadata), "dev", { podEnvironment: env }) as any;

const KUBERNETES_ENV = [
  { name: "KUBERNETES_SERVICE_HOST", value: "10.96.0.10" },
  { name: "KUBERNETES_SERVICE_PORT", value: "6443" },
  { name: "KUBERNETES_SERVICE_PORT_HTTPS", value: "6443" },
  { name: "KUBERNETES_PORT", value: "tcp://10.96.0.10:6443" },
  { name: "KUBERNETES_PORT_6443_TCP", value: "tcp://10.96.0.10:6443" },
  { name: "KUBERNETES_PORT_6443_TCP_PROTO", value: "tcp" },
  { name: "KUBERNETES_PORT_6443_TCP_PORT", value: "6443" },
  { name: "KUBERNETES_PORT_6443_TCP_ADDR", value: "10.96.0.10" },
];

describe("a host Pod reaches the tenant API", () => {
  it("gets explicit KUBERNETES_* variables for the tenant API Service in every container", () => {
    const spec = hostPod({
      initContainers: [{ name: "i" }],
      containers: [{ name: "a", env: [{ name: "X", value: "1" }] }],
    }).spec;
    expect(spec.containers[0].env).toEqual([{ name: "X", value: "1" }, ...KUBERNETES_ENV]);
    expect(spec.initContainers[0].env).toEqual(KUBERNETES_ENV);
  });

  it("keeps a variable the container sets itself", () => {
    const own = { name: "KUBERNETES_SERVICE_HOST", value: "api.example.com" };
    const spec = hostPod({ containers: [{ name: "a", env: [own] }] }).spec;
    expect(spec.containers[0].env.filter((e: any) => e.name === "KUBERNETES_SERVICE_HOST")).toEqual([own]);
  });

  it("turns host service links off and reads the tenant's from the namespace's ConfigMap, lowest precedence first", () => {
    const spec = hostPod({ containers: [{ name: "a", envFrom: [{ configMapRef: { name: "cfg" } }] }] }).spec;
    expect(spec.enableServiceLinks).toBe(false);
    expect(spec.containers[0].envFrom).toEqual([
      { configMapRef: { name: "service-links.shop", optional: true } },
      { configMapRef: { name: "cfg-x-shop-x-dev" } },
    ]);
  });

  it("gives no service links to a Pod that asked for none", () => {
    const spec = hostPod({ enableServiceLinks: false, containers: [{ name: "a" }] }).spec;
    expect(spec.enableServiceLinks).toBe(false);
    expect(spec.containers[0].envFrom).toBeUndefined();
  });
});

describe("a host Pod resolves through the tenant DNS server", () => {
  it("uses only the tenant DNS Service, with the tenant's search list and ndots 5", () => {
    const spec = hostPod({ containers: [{ name: "a" }] }).spec;
    expect(spec.dnsPolicy).toBe("None");
    expect(spec.dnsConfig).toEqual({
      nameservers: ["10.96.0.53"],
      searches: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local"],
      options: [{ name: "ndots", value: "5" }],
    });
  });

  it("merges the tenant's own dnsConfig after the tenant's cluster DNS, as the kubelet does", () => {
    const spec = hostPod({
      dnsPolicy: "ClusterFirst",
      dnsConfig: { searches: ["corp.example"], options: [{ name: "ndots", value: "2" }, { name: "edns0" }] },
      containers: [{ name: "a" }],
    }).spec;
    expect(spec.dnsConfig).toEqual({
      nameservers: ["10.96.0.53"],
      searches: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"],
      options: [{ name: "ndots", value: "2" }, { name: "edns0" }],
    });
  });

  it("keeps a Pod's own DNS choice (Default or None)", () => {
    const own = { nameservers: ["1.1.1.1"] };
    expect(hostPod({ dnsPolicy: "None", dnsConfig: own, containers: [{ name: "a" }] }).spec.dnsConfig).toEqual(own);
    const defaulted = hostPod({ dnsPolicy: "Default", containers: [{ name: "a" }] }).spec;
    expect(defaulted.dnsPolicy).toBe("Default");
    expect(defaulted.dnsConfig).toBeUndefined();
  });
});

describe("a host Pod holds the tenant's token, never the host's", () => {
  const defaultProjection = {
    name: "kube-api-access-x1",
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        {
          downwardAPI: {
            items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
          },
        },
      ],
    },
  };

  it("replaces the default projection's token, CA and namespace with the tenant's", () => {
    const host = hostPod({ serviceAccountName: "runner", volumes: [defaultProjection], containers: [{ name: "a" }] });
    expect(host.spec.automountServiceAccountToken).toBe(false);
    expect(host.spec.volumes[0].projected).toEqual({
      defaultMode: 420,
      sources: [
        { secret: { name: "web-x-shop-x-dev.token", items: [{ key: "token-0", path: "token" }] } },
        { secret: { name: "web-x-shop-x-dev.token", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        {
          downwardAPI: {
            items: [
              {
                path: "namespace",
                fieldRef: { apiVersion: "v1", fieldPath: "metadata.annotations['tenantplane.io/virtual-namespace']" },
              },
            ],
          },
        },
      ],
    });
    expect(host.metadata.annotations["tenantplane.io/virtual-service-account"]).toBe("runner");
    expect(tokenRequestsOf(host)).toEqual([{ key: "token-0", expirationSeconds: 3607 }]);
  });

  it("records every projected token with the audience and expiry the Pod asked for", () => {
    const host = hostPod({
      volumes: [
        { name: "a", projected: { sources: [{ serviceAccountToken: { path: "t", audience: "vault" } }] } },
        {
          name: "b",
          projected: { sources: [{ serviceAccountToken: { path: "u", audience: "", expirationSeconds: 600 } }] },
        },
      ],
      containers: [{ name: "a" }],
    });
    expect(tokenRequestsOf(host)).toEqual([
      { key: "token-0", audience: "vault", expirationSeconds: 3607 },
      { key: "token-1", expirationSeconds: 600 },
    ]);
    expect(host.spec.volumes[1].projected.sources).toEqual([
      { secret: { name: "web-x-shop-x-dev.token", items: [{ key: "token-1", path: "u" }] } },
    ]);
    // The parameters are public; the token itself never is on the Pod.
    expect(JSON.stringify(host)).not.toMatch(/eyJ/);
  });

  it("leaves the root CA ConfigMap alone where no token is projected", () => {
    const volume = { name: "ca", projected: { sources: [{ configMap: { name: "kube-root-ca.crt" } }] } };
    const host = hostPod({ volumes: [volume], containers: [{ name: "a" }] });
    expect(host.spec.volumes[0]).toEqual(volume);
    expect(host.metadata.annotations).not.toHaveProperty("tenantplane.io/token-requests");
  });

  it("refuses a token source without a path as malformed", () => {
    const bad = { volumes: [{ name: "a", projected: { sources: [{ serviceAccountToken: { audience: "x" } }] } }] };
    expect(() => hostPod({ ...bad, containers: [{ name: "a" }] })).toThrow(
      "spec.volumes[0].projected.sources[0].serviceAccountToken.path: expected a string",
    );
  });
});

describe("the downward API gives the tenant's values", () => {
  const fieldEnv = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });

  it("rewrites name, namespace, uid, labels and serviceAccountName to annotations stamped with the tenant's values", () => {
    const host = hostPod(
      {
        serviceAccountName: "runner",
        containers: [
          {
            name: "a",
            env: [
              fieldEnv("N", "metadata.name"),
              fieldEnv("NS", "metadata.namespace"),
              fieldEnv("UID", "metadata.uid"),
              fieldEnv("SA", "spec.serviceAccountName"),
              fieldEnv("TIER", "metadata.labels['tier']"),
              fieldEnv("OWN", "metadata.labels['tenantplane.io/x']"),
              fieldEnv("IP", "status.podIP"),
            ],
          },
        ],
        volumes: [
          { name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
        ],
      },
      { labels: { tier: "gold", "tenantplane.io/x": "y" } },
    );
    const paths = host.spec.containers[0].env
      .filter((e: any) => e.valueFrom)
      .map((e: any) => [e.name, e.valueFrom.fieldRef.fieldPath]);
    const escaped = Object.keys(host.metadata.labels).find((k) => k.startsWith("escaped.tenantplane.io/"));
    expect(paths).toEqual([
      ["N", "metadata.annotations['tenantplane.io/virtual-name']"],
      ["NS", "metadata.annotations['tenantplane.io/virtual-namespace']"],
      ["UID", "metadata.annotations['tenantplane.io/virtual-uid']"],
      ["SA", "metadata.annotations['tenantplane.io/virtual-service-account']"],
      ["TIER", "metadata.labels['tier']"],
      ["OWN", `metadata.labels['${escaped}']`],
      ["IP", "status.podIP"],
    ]);
    expect(host.spec.volumes[0].downwardAPI.items[0].fieldRef.fieldPath).toBe(
      "metadata.annotations['tenantplane.io/virtual-labels']",
    );
    expect(host.metadata.annotations).toMatchObject({
      "tenantplane.io/virtual-name": "web",
      "tenantplane.io/virtual-namespace": "shop",
      "tenantplane.io/virtual-uid": "tenant-uid-1",
      "tenantplane.io/virtual-service-account": "runner",
      "tenantplane.io/virtual-labels": 'tenantplane.io/x="y"\ntier="gold"',
    });
    expect(host.metadata.labels[escaped!]).toBe("y");
  });

  it("never trusts the tenant's own value for these annotations", () => {
    const host = hostPod({ containers: [{ name: "a" }] }, { annotations: { "tenantplane.io/virtual-uid": "forged" } });
    expect(host.metadata.annotations["tenantplane.io/virtual-uid"]).toBe("tenant-uid-1");
  });
});

describe("planning Pods with the pod environment", () => {
  const service = (name: string, clusterIP: string, extra: Record<string, string> = {}) => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace: "tp-dev",
      labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "dev", ...extra },
    },
    spec: { clusterIP },
  });
  const source = pod({ containers: [{ name: "a" }] });

  it("reads the tenant API and DNS addresses from the tenant's own Services in the host namespace", () => {
    const hosts = [service("k3s", "10.0.0.1"), service("tenant-dns", "10.0.0.2")];
    expect(podEnvironmentFrom(hosts, "dev")).toEqual({ apiHost: "10.0.0.1", apiPort: 6443, dnsHost: "10.0.0.2" });
    // A sync copy (kind label) or another tenant's object is never taken for them.
    expect(
      podEnvironmentFrom(
        [service("k3s", "10.0.0.1", { "tenantplane.io/kind": "Service" }), service("tenant-dns", "10.0.0.2")],
        "dev",
      ),
    ).toBe("unknown");
    expect(podEnvironmentFrom([service("k3s", "10.0.0.1")], "dev")).toBe("unknown");

    const { decisions } = plan({
      tenant: "dev",
      policy: defaultSyncPolicySpec,
      tenantObjects: [source],
      hostObjects: hosts,
    });
    const host = decisions[0]?.object as any;
    expect(host.spec.dnsConfig.nameservers).toEqual(["10.0.0.2"]);
    expect(decisions[0]?.reason).toBe(
      "host Pod tp-dev/web-x-shop-x-dev absent; tenant API tp-dev/k3s at 10.0.0.1:6443 in KUBERNETES_* env; " +
        "service links of namespace shop (ConfigMap service-links.shop); " +
        "DNS tp-dev/tenant-dns at 10.0.0.2, search shop.svc.cluster.local svc.cluster.local cluster.local; " +
        "no service-account token",
    );
  });

  it("holds a Pod back while the addresses are unknown, and keeps its existing copy", () => {
    const existing = transform(source, "dev", { podEnvironment: env });
    const { decisions } = plan({
      tenant: "dev",
      policy: defaultSyncPolicySpec,
      tenantObjects: [source],
      hostObjects: [existing],
      podEnvironment: "unknown",
    });
    expect(decisions.map((d) => [d.action, d.reason])).toEqual([
      [
        "Skip",
        "waiting for Services tp-dev/k3s (tenant API) and tp-dev/tenant-dns (tenant DNS) to have ClusterIPs: " +
          "a Pod's DNS and API address cannot change once it exists",
      ],
    ]);
  });

  it("shows placeholders offline, where no Service has an address", () => {
    const { decisions } = plan({
      tenant: "dev",
      policy: defaultSyncPolicySpec,
      tenantObjects: [source],
      hostObjects: [],
    });
    expect(decisions[0]?.reason).toContain("tenant API tp-dev/k3s at <k3s ClusterIP>:6443");
  });

  it("explains the token a Pod gets and the downward fields it reads", () => {
    const withToken = pod({
      serviceAccountName: "runner",
      containers: [{ name: "a", env: [{ name: "U", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } }] }],
      volumes: [{ name: "t", projected: { sources: [{ serviceAccountToken: { path: "t", audience: "vault" } }] } }],
    });
    const { decisions } = plan({
      tenant: "dev",
      policy: defaultSyncPolicySpec,
      tenantObjects: [withToken],
      hostObjects: [],
      podEnvironment: env,
    });
    expect(decisions[0]?.reason).toContain(
      "token of ServiceAccount shop/runner by TokenRequest (audience vault, 3607s) in Secret web-x-shop-x-dev.token; " +
        "downward API metadata.uid from the tenant",
    );
  });
});
