import { describe, expect, it } from "vitest";
import { dnsConfigMap, dnsDeployment, dnsService } from "./tenant-dns.js";

describe("the tenant DNS server", () => {
  it("answers on port 53 of its Service from CoreDNS's unprivileged 1053", () => {
    const service = dnsService("dev");
    expect(service.metadata).toMatchObject({ name: "tenant-dns", namespace: "tp-dev" });
    expect(service.spec?.ports?.map((p) => [p.protocol, p.port, p.targetPort])).toEqual([
      ["UDP", 53, "dns"],
      ["TCP", 53, "dns-tcp"],
    ]);
    const container = dnsDeployment("dev").spec?.template.spec?.containers[0];
    expect(container?.ports?.map((p) => [p.name, p.containerPort])).toEqual([
      ["dns", 1053],
      ["dns-tcp", 1053],
    ]);
  });

  it("selects only its own pods, which the isolation policies treat as control plane", () => {
    const deployment = dnsDeployment("dev");
    const labels = deployment.spec?.template.metadata?.labels ?? {};
    expect(dnsService("dev").spec?.selector).toEqual({ "tenantplane.io/dns-of": "dev" });
    expect(labels).toMatchObject({ "tenantplane.io/dns-of": "dev", "tenantplane.io/control-plane": "true" });
    expect(deployment.spec?.selector.matchLabels).toEqual({ "tenantplane.io/dns-of": "dev" });
  });

  it("runs as Pod Security restricted asks, with no host credentials", () => {
    const pod = dnsDeployment("dev").spec?.template.spec;
    expect(pod?.automountServiceAccountToken).toBe(false);
    expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod?.containers[0]?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
  });

  it("reads its Corefile from its own ConfigMap and the records the sync worker writes", () => {
    const corefile = dnsConfigMap("dev").data?.["Corefile"] ?? "";
    expect(corefile).toContain("file /etc/coredns/records/zone cluster.local");
    const volumes = dnsDeployment("dev").spec?.template.spec?.volumes;
    expect(volumes).toEqual([
      { name: "corefile", configMap: { name: "tenant-dns" } },
      { name: "records", configMap: { name: "tenant-dns-records", optional: true } },
    ]);
    expect(dnsDeployment("dev").spec?.template.spec?.containers[0]?.args).toEqual([
      "-conf",
      "/etc/coredns/config/Corefile",
    ]);
  });
});
