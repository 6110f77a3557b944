import { describe, expect, it } from "vitest";
import { KubeObjectSchema } from "./kube-object.js";
import { serviceDnsEntries, serviceDnsEntriesSliced } from "./service-dns.js";
import { serviceAddresses, serviceAddressesSliced } from "./tenant-dns.js";
import { transform } from "./transform.js";

const tenantObject = (
  kind: string,
  namespace: string,
  name: string,
  { metadata, ...rest }: { metadata?: Record<string, unknown>; [key: string]: unknown },
) => KubeObjectSchema.parse({ apiVersion: "v1", kind, metadata: { namespace, name, ...metadata }, ...rest });
const svc = (namespace: string, name: string, spec: Record<string, unknown>) =>
  tenantObject("Service", namespace, name, { spec });
const pod = (namespace: string, name: string, labels: Record<string, string>, spec: Record<string, unknown> = {}) =>
  tenantObject("Pod", namespace, name, {
    metadata: { labels },
    spec: { containers: [{ name: "c", image: "busybox" }], ...spec },
  });
/** A host copy as the host API holds it, with what the host set. */
const copy = (source: ReturnType<typeof svc>, tenant: string, extra: Record<string, unknown> = {}) => {
  const host = transform(source, tenant);
  return {
    ...host,
    ...extra,
    spec: { ...(host["spec"] as object), ...((extra["spec"] as object | undefined) ?? {}) },
  };
};
const running = (ip: string, ready = true) => ({
  status: { phase: "Running", podIP: ip, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});

describe("serviceDnsEntries", () => {
  const db = svc("shop", "db", { clusterIP: "None", selector: { app: "db" }, ports: [{ port: 5432 }] });
  const db0 = pod("shop", "db-0", { app: "db" }, { hostname: "db-0", subdomain: "db" });
  const db1 = pod("shop", "db-1", { app: "db" }, { hostname: "db-1", subdomain: "db" });
  const web = pod("shop", "web", { app: "web" }, { hostname: "web", subdomain: "db" });
  const elsewhere = pod("data", "db-9", { app: "db" });

  it("gives a headless Service its ready endpoints' host addresses and each endpoint's hostname", () => {
    const entries = serviceDnsEntries({
      tenant: "dev",
      tenantServices: [db],
      tenantPods: [db0, db1, web, elsewhere],
      hostServices: [copy(db, "dev")],
      hostPods: [
        copy(db0, "dev", running("10.244.0.7")),
        copy(db1, "dev", running("10.244.0.8", false)),
        copy(web, "dev", running("10.244.0.9")),
        copy(elsewhere, "dev", running("10.244.0.10")),
      ],
    });
    // db-1 is not Ready; web and the Pod of another namespace are not selected.
    expect(entries).toEqual([
      { name: "db-0.db.shop.svc", type: "A", value: "10.244.0.7", why: "Pod shop/db-0 hostname and subdomain" },
      { name: "db.shop.svc", type: "A", value: "10.244.0.7", why: "headless Service shop/db, Pod db-0 Ready" },
    ]);
  });

  it("publishes not-ready endpoints when the Service asks, never finished, deleted or address-less ones", () => {
    const published = svc("shop", "db", { clusterIP: "None", selector: { app: "db" }, publishNotReadyAddresses: true });
    const gone = pod("shop", "db-2", { app: "db" });
    const deleting = tenantObject("Pod", "shop", "db-3", {
      metadata: { labels: { app: "db" }, deletionTimestamp: "2026-01-01T00:00:00Z" },
      spec: { containers: [] },
    });
    const pending = pod("shop", "db-4", { app: "db" });
    const entries = serviceDnsEntries({
      tenant: "dev",
      tenantServices: [published],
      tenantPods: [db1, gone, deleting, pending],
      hostServices: [copy(published, "dev")],
      hostPods: [
        copy(db1, "dev", running("10.244.0.8", false)),
        copy(gone, "dev", { status: { phase: "Failed", podIP: "10.244.0.11" } }),
        copy(deleting, "dev", running("10.244.0.12")),
        copy(pending, "dev", { status: { phase: "Pending" } }),
      ],
    });
    expect(entries.map((e) => `${e.name} ${e.value}`)).toEqual([
      "db-1.db.shop.svc 10.244.0.8",
      "db.shop.svc 10.244.0.8",
    ]);
    expect(entries[1]?.why).toBe("headless Service shop/db, Pod db-1 not Ready, published anyway");
  });

  it("names no endpoint without the Service's host copy, nor another tenant's Pod copy", () => {
    const input = { tenant: "dev", tenantServices: [db], tenantPods: [db0] };
    expect(
      serviceDnsEntries({ ...input, hostServices: [], hostPods: [copy(db0, "dev", running("10.1.1.1"))] }),
    ).toEqual([]);
    expect(
      serviceDnsEntries({
        ...input,
        hostServices: [copy(db, "dev")],
        hostPods: [copy(db0, "prod", running("10.1.1.1"))],
      }),
    ).toEqual([]);
  });

  it("makes an ExternalName Service a CNAME to the target its host copy carries", () => {
    const alias = svc("shop", "alias", { type: "ExternalName", externalName: "Example.COM" });
    expect(
      serviceDnsEntries({
        tenant: "dev",
        tenantServices: [alias],
        tenantPods: [],
        hostServices: [copy(alias, "dev")],
        hostPods: [],
      }),
    ).toEqual([
      { name: "alias.shop.svc", type: "CNAME", value: "example.com.", why: "ExternalName Service shop/alias" },
    ]);
  });

  it("gives a ClusterIP Service and a selector-less headless one no entry here", () => {
    const plain = svc("shop", "web", { selector: { app: "db" } });
    const manual = svc("shop", "manual", { clusterIP: "None" });
    expect(
      serviceDnsEntries({
        tenant: "dev",
        tenantServices: [plain, manual],
        tenantPods: [db0],
        hostServices: [copy(plain, "dev", { spec: { clusterIP: "10.96.0.5" } }), copy(manual, "dev")],
        hostPods: [copy(db0, "dev", running("10.244.0.7"))],
      }),
    ).toEqual([]);
  });
});

describe("serviceDnsEntriesSliced and serviceAddressesSliced", () => {
  // Headless and ClusterIP Services over a few namespaces, each headless one selecting a share
  // of the Pods: Services x Pods large enough to take a process for a while in one piece.
  const namespaces = ["a", "b", "c"];
  const services = Array.from({ length: 150 }, (_, i) =>
    svc(
      namespaces[i % 3]!,
      `s${i}`,
      i % 5 === 0
        ? { clusterIP: "10.0.0.1", ports: [{ port: 80 }] }
        : { clusterIP: "None", selector: { app: `g${i % 7}` } },
    ),
  );
  const pods = Array.from({ length: 1_500 }, (_, i) =>
    pod(namespaces[i % 3]!, `p${i}`, { app: `g${i % 7}` }, { hostname: `p${i}`, subdomain: `s${i % 150}` }),
  );
  const input = {
    tenant: "dev",
    tenantServices: services,
    tenantPods: pods,
    hostServices: services.map((s) =>
      copy(s, "dev", { spec: { clusterIP: (s as { spec?: { clusterIP?: string } }).spec?.clusterIP } }),
    ),
    hostPods: pods.map((p, i) => copy(p, "dev", running(`10.244.${i >> 8}.${i & 255}`, i % 4 !== 0))),
  };

  it("give exactly the one-piece answer, pausing every few hundred objects", async () => {
    const whole = serviceDnsEntries(input);
    expect(whole.length).toBeGreaterThan(5_000);
    let pauses = 0;
    const sliced = await serviceDnsEntriesSliced(input, async () => {
      pauses++;
      await new Promise((r) => setImmediate(r));
    });
    expect(sliced).toEqual(whole);
    // About 120 Services x 500 Pods of their namespace are compared: a pause per 256 comparisons.
    expect(pauses).toBeGreaterThan((120 * 500) / 256);
    const addresses = await serviceAddressesSliced(input.tenantServices, input.hostServices, "dev", async () => {});
    expect(addresses).toEqual(serviceAddresses(input.tenantServices, input.hostServices, "dev"));
    expect(addresses).toHaveLength(30);
  });
});
