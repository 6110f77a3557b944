import { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import {
  buildKubeconfig,
  issuedKubeconfigExpiry,
  judgeKubeconfig,
  kubeconfigSecret,
  kubeconfigSecretRef,
} from "./kubeconfig.js";
import { generateTenantPki, signClientCertificate, type TenantPki } from "./pki.js";

const input = {
  tenant: "acme",
  server: "https://k3s.tp-acme.svc:6443",
  caPem: "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n",
  certPem: "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n",
  keyPem: "-----BEGIN EC PRIVATE KEY-----\nKEY\n-----END EC PRIVATE KEY-----\n",
};

const decode = (value: unknown) => Buffer.from(String(value), "base64").toString("utf8");

describe("buildKubeconfig", () => {
  const parsed = YAML.parse(buildKubeconfig(input));

  it("names cluster, user and context after the tenant and selects that context", () => {
    expect(parsed.apiVersion).toBe("v1");
    expect(parsed.kind).toBe("Config");
    expect(parsed.clusters.map((c: { name: string }) => c.name)).toEqual(["acme"]);
    expect(parsed.users.map((u: { name: string }) => u.name)).toEqual(["acme"]);
    expect(parsed.contexts).toEqual([{ name: "acme", context: { cluster: "acme", user: "acme" } }]);
    expect(parsed["current-context"]).toBe("acme");
  });

  it("embeds the server URL and PEM material as base64 data", () => {
    const cluster = parsed.clusters[0].cluster;
    const user = parsed.users[0].user;
    expect(cluster.server).toBe("https://k3s.tp-acme.svc:6443");
    expect(decode(cluster["certificate-authority-data"])).toBe(input.caPem);
    expect(decode(user["client-certificate-data"])).toBe(input.certPem);
    expect(decode(user["client-key-data"])).toBe(input.keyPem);
  });

  it("refers to no files and runs no exec plugin", () => {
    expect(Object.keys(parsed.clusters[0].cluster).sort()).toEqual(["certificate-authority-data", "server"]);
    expect(Object.keys(parsed.users[0].user).sort()).toEqual(["client-certificate-data", "client-key-data"]);
  });

  it("is accepted by the Kubernetes client", () => {
    const kc = new KubeConfig();
    kc.loadFromString(buildKubeconfig(input));
    expect(kc.getCurrentCluster()?.server).toBe("https://k3s.tp-acme.svc:6443");
    expect(kc.getCurrentCluster()?.caData).toBe(Buffer.from(input.caPem).toString("base64"));
    expect(kc.getCurrentUser()?.certData).toBe(Buffer.from(input.certPem).toString("base64"));
    expect(kc.getCurrentUser()?.exec).toBeUndefined();
  });
});

describe("kubeconfigSecret", () => {
  it("stores the kubeconfig under one key in a labelled Opaque Secret", () => {
    const secret = kubeconfigSecret({ tenant: "acme", kubeconfig: "apiVersion: v1\n" });
    expect(secret.apiVersion).toBe("v1");
    expect(secret.kind).toBe("Secret");
    expect(secret.type).toBe("Opaque");
    expect(secret.metadata).toEqual({
      name: "acme-kubeconfig",
      namespace: "tp-acme",
      labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "acme" },
    });
    expect(Object.keys(secret.data ?? {})).toEqual(["kubeconfig"]);
    expect(decode(secret.data?.["kubeconfig"])).toBe("apiVersion: v1\n");
    expect(secret.stringData).toBeUndefined();
  });

  it("honours an explicit namespace", () => {
    expect(kubeconfigSecret({ tenant: "acme", namespace: "elsewhere", kubeconfig: "" }).metadata?.namespace).toBe(
      "elsewhere",
    );
  });

  it("publishes where the kubeconfig is in status form", () => {
    expect(kubeconfigSecretRef("acme")).toEqual({ namespace: "tp-acme", name: "acme-kubeconfig", key: "kubeconfig" });
  });
});

describe("judgeKubeconfig", () => {
  const server = "https://k3s.tp-acme.svc:6443";
  const issue = async (pki: TenantPki, now: Date, lifetimeMs = 90 * 60_000) => {
    const admin = await signClientCertificate(pki.clientCa, { commonName: "admin", lifetimeMs }, now);
    return buildKubeconfig({ tenant: "acme", server, caPem: pki.serverCa.certPem, ...admin });
  };
  const expectFor = (pki: TenantPki, now: Date) => ({
    server,
    serverCaPem: pki.serverCa.certPem,
    clientCaPem: pki.clientCa.certPem,
    now,
  });

  it("keeps a fresh kubeconfig and reports its expiry", async () => {
    const pki = await generateTenantPki("acme");
    const issued = new Date("2026-01-01T00:00:00Z");
    const verdict = judgeKubeconfig(await issue(pki, issued), expectFor(pki, new Date("2026-01-01T00:30:00Z")));
    expect(verdict).toEqual({
      renew: false,
      expiresAt: new Date("2026-01-01T01:30:00Z"),
      // Certificates are backdated five minutes, so two thirds of 95 minutes from 23:55.
      renewAt: new Date("2026-01-01T00:58:20Z"),
    });
  });

  it("judges a kubeconfig it was told of at issuance as it judges one it reads", async () => {
    const pki = await generateTenantPki("acme");
    const issued = new Date("2026-01-01T00:00:00Z");
    const admin = await signClientCertificate(pki.clientCa, { commonName: "admin", lifetimeMs: 90 * 60_000 }, issued);
    const kubeconfig = buildKubeconfig({ tenant: "acme", server, caPem: pki.serverCa.certPem, ...admin });
    const { now: _now, ...expectation } = expectFor(pki, issued);
    expect(issuedKubeconfigExpiry(kubeconfig, admin, expectation)).toEqual(new Date("2026-01-01T01:30:00Z"));
    for (const at of ["2026-01-01T00:30:00Z", "2026-01-01T00:58:20Z"]) {
      const remembered = judgeKubeconfig(kubeconfig, expectFor(pki, new Date(at)));
      // The same text with a trailing newline is another input: read and verified afresh.
      expect(judgeKubeconfig(`${kubeconfig}\n`, expectFor(pki, new Date(at)))).toEqual(remembered);
    }
  });

  it("renews after two thirds of the certificate's lifetime", async () => {
    const pki = await generateTenantPki("acme");
    const kubeconfig = await issue(pki, new Date("2026-01-01T00:00:00Z"));
    expect(judgeKubeconfig(kubeconfig, expectFor(pki, new Date("2026-01-01T00:58:19Z"))).renew).toBe(false);
    const late = judgeKubeconfig(kubeconfig, expectFor(pki, new Date("2026-01-01T00:58:20Z")));
    expect(late).toMatchObject({ renew: true, why: expect.stringContaining("two thirds") });
  });

  it("renews when missing, moved, or issued under a PKI that has been replaced", async () => {
    const pki = await generateTenantPki("acme");
    const other = await generateTenantPki("acme");
    const now = new Date();
    const kubeconfig = await issue(pki, now);
    expect(judgeKubeconfig(undefined, expectFor(pki, now))).toEqual({ renew: true, why: "no kubeconfig yet" });
    expect(judgeKubeconfig(kubeconfig, { ...expectFor(pki, now), server: "https://10.0.0.1:6443" })).toMatchObject({
      renew: true,
      why: "the server moved to https://10.0.0.1:6443",
    });
    expect(judgeKubeconfig(kubeconfig, expectFor(other, now))).toMatchObject({
      renew: true,
      why: "the tenant's server CA changed",
    });
    expect(judgeKubeconfig(kubeconfig, { ...expectFor(pki, now), clientCaPem: other.clientCa.certPem })).toMatchObject({
      renew: true,
      why: "the tenant's client CA changed",
    });
    expect(judgeKubeconfig("{not: [yaml", expectFor(pki, now)).renew).toBe(true);
  });
});

describe("a short-lived kubeconfig", () => {
  it("is renewed only after two thirds of its lifetime from issuance, not at once", async () => {
    const pki = await generateTenantPki("acme");
    const issued = new Date("2026-01-01T00:00:00Z");
    const admin = await signClientCertificate(pki.clientCa, { commonName: "admin", lifetimeMs: 60_000 }, issued);
    const kubeconfig = buildKubeconfig({
      tenant: "acme",
      server: "https://x:6443",
      caPem: pki.serverCa.certPem,
      ...admin,
    });
    const at = (ms: number) =>
      judgeKubeconfig(kubeconfig, {
        server: "https://x:6443",
        serverCaPem: pki.serverCa.certPem,
        clientCaPem: pki.clientCa.certPem,
        now: new Date(issued.getTime() + ms),
      }).renew;
    expect(at(1_000)).toBe(false);
    expect(at(37_000)).toBe(false);
    expect(at(38_000)).toBe(true);
  });
});
