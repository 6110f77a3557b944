import { describe, expect, it } from "vitest";
import { KubeObjectSchema } from "./kube-object.js";
import { LABEL_POD_NETWORK, planPodNetwork, type PodNetworkInput } from "./pod-network.js";
import { transform } from "./transform.js";

const svc = (namespace: string, name: string, spec: Record<string, unknown>) =>
  KubeObjectSchema.parse({ apiVersion: "v1", kind: "Service", metadata: { namespace, name }, spec });
const copy = (s: ReturnType<typeof svc>, ip: string) => {
  const host = transform(s, "dev");
  return { ...host, spec: { ...(host["spec"] as object), clusterIP: ip } };
};
const web = svc("shop", "web", { ports: [{ port: 80 }] });
const db = svc("data", "db", { ports: [{ port: 5432 }] });
const environment = { apiHost: "10.96.0.10", apiPort: 6443, dnsHost: "10.96.0.53" };
const base: PodNetworkInput = {
  tenant: "dev",
  environment,
  tenantServices: [web, db],
  tenantPods: [],
  hostServices: [copy(web, "10.96.1.1"), copy(db, "10.96.1.2")],
  hostPods: [],
  hostConfigMaps: [],
  complete: true,
};
/** The ConfigMaps a plan creates, as the host then holds them. */
const written = (input: PodNetworkInput) =>
  planPodNetwork(input).decisions.flatMap((d) => (d.object === undefined ? [] : [d.object]));

describe("planPodNetwork", () => {
  it("creates one DNS zone for the tenant and service links per namespace with Services, each explained", () => {
    const plan = planPodNetwork(base);
    expect(
      plan.decisions.map((d) => [d.action, d.hostRef.name, d.object?.metadata.labels?.[LABEL_POD_NETWORK]]),
    ).toEqual([
      ["Create", "service-links.data", "service-links"],
      ["Create", "service-links.shop", "service-links"],
      ["Create", "tenant-dns-records", "dns-records"],
    ]);
    expect(plan.decisions.every((d) => d.tenantRef.namespace === "" && d.tenantRef.name === "dev")).toBe(true);
    expect(plan.decisions[2]?.reason).toBe(
      "tenant DNS zone cluster.local with 3 names (kubernetes.default.svc.cluster.local 10.96.0.10, " +
        "db.data.svc.cluster.local 10.96.1.2, web.shop.svc.cluster.local 10.96.1.1), nothing of another tenant",
    );
    expect(plan.decisions[1]?.object?.["data"]).toMatchObject({ WEB_SERVICE_HOST: "10.96.1.1" });
    expect(plan.decisions[1]?.object?.["data"]).not.toHaveProperty("DB_SERVICE_HOST");
  });

  it("writes nothing once the host holds the same content, and updates only what changed", () => {
    const hostConfigMaps = written(base);
    const steady = planPodNetwork({ ...base, hostConfigMaps });
    expect(steady.decisions).toEqual([]);
    expect(steady.inSync.map((t) => t.hostRef.name)).toEqual([
      "service-links.data",
      "service-links.shop",
      "tenant-dns-records",
    ]);
    const moved = planPodNetwork({
      ...base,
      hostConfigMaps,
      hostServices: [copy(web, "10.96.1.9"), copy(db, "10.96.1.2")],
    });
    expect(moved.decisions.map((d) => `${d.action} ${d.hostRef.name}`)).toEqual([
      "Update service-links.shop",
      "Update tenant-dns-records",
    ]);
    expect(moved.decisions[1]?.reason).toContain("web.shop.svc.cluster.local 10.96.1.9");
  });

  it("lists headless endpoints, Pod hostnames and ExternalName aliases in the zone and its reason", () => {
    const peers = svc("shop", "peers", { clusterIP: "None", selector: { app: "peer" } });
    const alias = svc("shop", "alias", { type: "ExternalName", externalName: "example.com" });
    const pod = KubeObjectSchema.parse({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { namespace: "shop", name: "p-0", labels: { app: "peer" } },
      spec: { hostname: "p-0", subdomain: "peers", containers: [{ name: "c", image: "busybox" }] },
    });
    const podCopy = {
      ...transform(pod, "dev"),
      status: { phase: "Running", podIP: "10.244.0.7", conditions: [{ type: "Ready", status: "True" }] },
    };
    const plan = planPodNetwork({
      ...base,
      tenantServices: [peers, alias],
      tenantPods: [pod],
      hostServices: [transform(peers, "dev"), transform(alias, "dev")],
      hostPods: [podCopy],
    });
    const zone = plan.decisions.find((d) => d.hostRef.name === "tenant-dns-records");
    expect(String((zone?.object?.["data"] as Record<string, string>)["zone"])).toMatch(
      /^p-0\.peers\.shop\.svc 5 IN A 10\.244\.0\.7$/m,
    );
    expect(zone?.reason).toBe(
      "tenant DNS zone cluster.local with 4 names (kubernetes.default.svc.cluster.local 10.96.0.10, " +
        "alias.shop.svc.cluster.local CNAME example.com. (ExternalName Service shop/alias), " +
        "p-0.peers.shop.svc.cluster.local 10.244.0.7 (Pod shop/p-0 hostname and subdomain), " +
        "peers.shop.svc.cluster.local 10.244.0.7 (headless Service shop/peers, Pod p-0 Ready)), nothing of another tenant",
    );
    // Neither has a ClusterIP, so neither gives service links.
    expect(plan.decisions.map((d) => d.hostRef.name)).toEqual(["tenant-dns-records"]);
  });

  it("deletes service links of a namespace left without Services, only while the listings are complete", () => {
    const hostConfigMaps = written(base);
    const input = { ...base, tenantServices: [web], hostConfigMaps };
    expect(planPodNetwork(input).decisions.map((d) => `${d.action} ${d.hostRef.name}: ${d.reason}`)).toEqual([
      "Delete service-links.data: service links of tenant namespace data, which has no synced Service with a ClusterIP left",
      expect.stringMatching(/^Update tenant-dns-records: tenant DNS zone cluster\.local with 2 names/),
    ]);
    expect(planPodNetwork({ ...input, complete: false }).decisions.map((d) => d.action)).toEqual(["Update"]);
  });

  it("never takes a name another object holds, nor deletes ConfigMaps it did not write", () => {
    const foreign = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "tenant-dns-records", namespace: "tp-dev" },
    };
    const other = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "service-links.gone", namespace: "tp-dev", labels: { [LABEL_POD_NETWORK]: "service-links" } },
    };
    const plan = planPodNetwork({ ...base, tenantServices: [], hostServices: [], hostConfigMaps: [foreign, other] });
    expect(plan.decisions).toEqual([
      expect.objectContaining({
        action: "Skip",
        hostRef: { namespace: "tp-dev", name: "tenant-dns-records" },
        reason: "held by a ConfigMap that is not tenantplane's dns-records ConfigMap of this tenant: not written",
      }),
    ]);
  });
});
