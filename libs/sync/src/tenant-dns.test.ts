import { describe, expect, it } from "vitest";
import { transform } from "./transform.js";
import { KubeObjectSchema } from "./kube-object.js";
import {
  corefile,
  dnsRecords,
  linkVariables,
  recordsOf,
  serviceAddresses,
  serviceLinkVariables,
} from "./tenant-dns.js";

function tenantService(namespace: string, name: string, spec: Record<string, unknown>) {
  return KubeObjectSchema.parse({ apiVersion: "v1", kind: "Service", metadata: { namespace, name }, spec });
}
function hostCopy(svc: ReturnType<typeof tenantService>, tenant: string, clusterIP: string) {
  const copy = transform(svc, tenant);
  return { ...copy, spec: { ...(copy["spec"] as object), clusterIP } };
}

const web = tenantService("shop", "web", {
  ports: [
    { name: "http", port: 80 },
    { name: "metrics", port: 9090 },
  ],
});
const db = tenantService("data", "db", { ports: [{ port: 5432 }] });
const headless = tenantService("shop", "peers", { clusterIP: "None", ports: [{ port: 1 }] });
const external = tenantService("shop", "ext", { type: "ExternalName", externalName: "example.com" });

describe("serviceAddresses", () => {
  it("gives each tenant Service its host copy's ClusterIP, skipping headless, ExternalName and unsynced ones", () => {
    const other = tenantService("shop", "web", { ports: [{ port: 80 }] });
    const hosts = [
      hostCopy(web, "dev", "10.96.1.1"),
      hostCopy(db, "dev", "10.96.1.2"),
      hostCopy(headless, "dev", "None"),
      // Another tenant's copy of a Service with the same virtual name is never taken.
      hostCopy(other, "prod", "10.96.9.9"),
    ];
    expect(serviceAddresses([web, db, headless, external], hosts, "dev")).toEqual([
      { namespace: "data", name: "db", clusterIP: "10.96.1.2", ports: [{ port: 5432 }] },
      {
        namespace: "shop",
        name: "web",
        clusterIP: "10.96.1.1",
        ports: [
          { name: "http", port: 80 },
          { name: "metrics", port: 9090 },
        ],
      },
    ]);
    expect(serviceAddresses([web], [hostCopy(other, "prod", "10.96.9.9")], "dev")).toEqual([]);
  });
});

describe("dnsRecords", () => {
  const addresses = [{ namespace: "shop", name: "web", clusterIP: "10.96.1.1", ports: [{ port: 80 }] }];

  it("answers the tenant API and each Service by its tenant name, nothing else", () => {
    const zone = dnsRecords("dev", { apiHost: "10.96.0.10" }, addresses);
    expect(recordsOf(zone)).toEqual([
      { name: "kubernetes.default.svc.cluster.local", type: "A", value: "10.96.0.10" },
      { name: "web.shop.svc.cluster.local", type: "A", value: "10.96.1.1" },
    ]);
    expect(zone).toMatch(/^\$ORIGIN cluster\.local\.$/m);
    expect(zone).toMatch(/^@ 5 IN SOA ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ /m);
  });

  it("adds headless endpoints, Pod hostnames and aliases after the ClusterIPs, never a second kubernetes.default", () => {
    const zone = dnsRecords("dev", { apiHost: "10.96.0.10" }, addresses, [
      { name: "db.shop.svc", type: "A", value: "10.244.0.7" },
      { name: "db.shop.svc", type: "A", value: "10.244.0.8" },
      { name: "db-0.db.shop.svc", type: "A", value: "10.244.0.7" },
      { name: "alias.shop.svc", type: "CNAME", value: "example.com." },
      { name: "kubernetes.default.svc", type: "A", value: "10.0.0.1" },
    ]);
    expect(recordsOf(zone).map((r) => `${r.name} ${r.type} ${r.value}`)).toEqual([
      "kubernetes.default.svc.cluster.local A 10.96.0.10",
      "web.shop.svc.cluster.local A 10.96.1.1",
      "db.shop.svc.cluster.local A 10.244.0.7",
      "db.shop.svc.cluster.local A 10.244.0.8",
      "db-0.db.shop.svc.cluster.local A 10.244.0.7",
      "alias.shop.svc.cluster.local CNAME example.com.",
    ]);
  });

  it("changes the SOA serial exactly when the records change, so the server reloads", () => {
    const serial = (zone: string) => /IN SOA \S+ \S+ (\d+)/.exec(zone)?.[1];
    const one = dnsRecords("dev", { apiHost: "10.96.0.10" }, addresses);
    expect(serial(dnsRecords("dev", { apiHost: "10.96.0.10" }, addresses))).toBe(serial(one));
    expect(serial(dnsRecords("dev", { apiHost: "10.96.0.10" }, []))).not.toBe(serial(one));
  });
});

describe("linkVariables", () => {
  it("names the variables exactly as the kubelet does", () => {
    expect(
      linkVariables("my-web", "10.0.0.11", [
        { name: "http", port: 80 },
        { name: "dns-udp", port: 53, protocol: "UDP" },
      ]),
    ).toEqual({
      MY_WEB_SERVICE_HOST: "10.0.0.11",
      MY_WEB_SERVICE_PORT: "80",
      MY_WEB_SERVICE_PORT_HTTP: "80",
      MY_WEB_SERVICE_PORT_DNS_UDP: "53",
      MY_WEB_PORT: "tcp://10.0.0.11:80",
      MY_WEB_PORT_80_TCP: "tcp://10.0.0.11:80",
      MY_WEB_PORT_80_TCP_PROTO: "tcp",
      MY_WEB_PORT_80_TCP_PORT: "80",
      MY_WEB_PORT_80_TCP_ADDR: "10.0.0.11",
      MY_WEB_PORT_53_UDP: "udp://10.0.0.11:53",
      MY_WEB_PORT_53_UDP_PROTO: "udp",
      MY_WEB_PORT_53_UDP_PORT: "53",
      MY_WEB_PORT_53_UDP_ADDR: "10.0.0.11",
    });
  });

  it("gives a namespace only its own Services' variables", () => {
    const vars = serviceLinkVariables(
      [
        { namespace: "shop", name: "web", clusterIP: "10.0.0.1", ports: [{ port: 80 }] },
        { namespace: "data", name: "db", clusterIP: "10.0.0.2", ports: [{ port: 5432 }] },
      ],
      "shop",
    );
    expect(Object.keys(vars).some((k) => k.startsWith("DB_"))).toBe(false);
    expect(vars["WEB_SERVICE_HOST"]).toBe("10.0.0.1");
  });
});

describe("corefile", () => {
  it("serves cluster.local from the records alone, refuses reverse lookups and forwards the rest", () => {
    const text = corefile({ recordsFile: "/etc/coredns/records/zone" });
    expect(text).toContain(".:1053 {");
    expect(text).toContain("file /etc/coredns/records/zone cluster.local {");
    expect(text).toContain("template ANY ANY in-addr.arpa ip6.arpa {");
    expect(text).toContain("forward . /etc/resolv.conf");
    expect(text).not.toContain("fallthrough");
  });
});
