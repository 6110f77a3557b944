import { KubeObjectSchema, transform } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import { desiredRecords } from "./pod-network-records.js";

const svc = (namespace: string, name: string, port: number) =>
  KubeObjectSchema.parse({
    apiVersion: "v1",
    kind: "Service",
    metadata: { namespace, name },
    spec: { ports: [{ port }] },
  });
const copy = (s: ReturnType<typeof svc>, ip: string) => {
  const host = transform(s, "dev");
  return { ...host, spec: { ...(host["spec"] as object), clusterIP: ip } };
};

describe("desiredRecords", () => {
  it("gives one DNS zone for the tenant and service links per namespace with Services, explained", () => {
    const web = svc("shop", "web", 80);
    const db = svc("data", "db", 5432);
    const records = desiredRecords(
      "dev",
      { apiHost: "10.96.0.10", apiPort: 6443, dnsHost: "10.96.0.53" },
      [web, db],
      [copy(web, "10.96.1.1"), copy(db, "10.96.1.2")],
    );
    expect(records.map((r) => [r.name, r.role])).toEqual([
      ["tenant-dns-records", "dns-records"],
      ["service-links.data", "service-links"],
      ["service-links.shop", "service-links"],
    ]);
    expect(records[0]?.summary).toBe(
      "tenant DNS zone cluster.local with 3 names (kubernetes.default.svc.cluster.local 10.96.0.10, " +
        "db.data.svc.cluster.local 10.96.1.2, web.shop.svc.cluster.local 10.96.1.1), nothing of another tenant",
    );
    expect(records[2]?.data["WEB_SERVICE_HOST"]).toBe("10.96.1.1");
    expect(records[2]?.data).not.toHaveProperty("DB_SERVICE_HOST");
  });
});
