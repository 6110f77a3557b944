import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient, resourcePath } from "@tenantplane/kube";
import { DecisionSchema, type Decision } from "@tenantplane/messaging";
import { serviceLinksConfigMapName } from "@tenantplane/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  dnsResolver,
  installCrds,
  resolveWithSearch,
  setLoadBalancerIngress,
  startCoreDns,
  startHostCluster,
  startNats,
  startTenantStandIn,
  trackFailures,
  waitFor,
  waitForTenantServiceAccount,
  type CoreDns,
  type HostCluster,
  type NatsServer,
  type ResolvConf,
  type TenantApiServer,
} from "../harness/index.js";

// Tenant API stand-ins and DNS servers of this suite live on 127.0.0.90-99.
const A = { name: "penv-a", address: "127.0.0.90", dns: "127.0.0.92" };
const B = { name: "penv-b", address: "127.0.0.91", dns: "127.0.0.93" };
const failures = trackFailures();
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const cliMain = join(repoRoot, "libs/cli/bin/tenantplane.js");

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
let nc: NatsConnection;
let sub: Subscription;
const decisions: Decision[] = [];
const tenantApis: TenantApiServer[] = [];
const dnsServers: CoreDns[] = [];
const tenantClients = new Map<string, { client: JsonClient; caPem: string }>();

const hostNs = (tenant: string) => `tp-${tenant}`;
const PLURAL: Record<string, string> = { Pod: "pods", Service: "services", ServiceAccount: "serviceaccounts" };

async function readHost(kind: string, tenant: string, name: string): Promise<Obj | undefined> {
  try {
    return (await objects.read({ apiVersion: "v1", kind, metadata: { name, namespace: hostNs(tenant) } })) as Obj;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

async function tenantApi(tenant: string): Promise<{ client: JsonClient; caPem: string }> {
  const cached = tenantClients.get(tenant);
  if (cached) return cached;
  const secret = await core.readNamespacedSecret({ name: `${tenant}-kubeconfig`, namespace: hostNs(tenant) });
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(secret.data!["kubeconfig"]!, "base64").toString("utf8"));
  const entry = {
    client: new JsonClient(kc),
    caPem: Buffer.from(kc.getCurrentCluster()?.caData ?? "", "base64").toString("utf8"),
  };
  tenantClients.set(tenant, entry);
  return entry;
}

async function tenantCreate(tenant: string, obj: Obj): Promise<Obj> {
  const { client } = await tenantApi(tenant);
  const ns = obj.metadata?.namespace;
  return client.request<Obj>("POST", resourcePath("v1", PLURAL[obj.kind!] ?? "namespaces", ns), { body: obj });
}

async function provision(tenant: { name: string; address: string }) {
  await objects.patch(
    {
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: tenant.name },
      spec: { controlPlane: { expose: { loadBalancer: { enabled: true } } } },
    } as KubernetesObject,
    undefined,
    undefined,
    "e2e",
    true,
    PatchStrategy.ServerSideApply,
  );
  await setLoadBalancerIngress(host.kubeConfig, hostNs(tenant.name), "k3s", tenant.address);
  tenantApis.push(await startTenantStandIn(host.kubeConfig, tenant.name, tenant.address));
}

async function synced(tenant: string): Promise<boolean> {
  const tc = (await objects.read({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: tenant },
  })) as Obj;
  return (tc.status?.conditions ?? []).some((c: Obj) => c.type === "Synced" && c.status === "True");
}

const clusterIp = async (tenant: string, name: string) =>
  (await waitFor(async () => (await readHost("Service", tenant, name))?.spec?.clusterIP as string | undefined, {
    timeoutMs: 30_000,
    description: `ClusterIP of Service ${hostNs(tenant)}/${name}`,
  })) as string;

/** A container's environment as the kubelet assembles it: envFrom in order (ConfigMaps read now), then env. */
async function effectiveEnv(tenant: string, container: Obj): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const cm = source.configMapRef ? await readHost("ConfigMap", tenant, source.configMapRef.name) : undefined;
    Object.assign(env, cm?.data ?? {});
  }
  for (const e of container.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

function jwtPayload(token: string): Obj {
  return JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as Obj;
}

async function tokenReview(tenant: string, token: string, audiences?: string[]): Promise<Obj> {
  const { client } = await tenantApi(tenant);
  const review = await client.request<Obj>("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    body: {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      spec: { token, ...(audiences ? { audiences } : {}) },
    },
  });
  return review.status as Obj;
}

function tp(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliMain, ...args], {
      env: { PATH: process.env.PATH, HOME: tmpdir(), KUBECONFIG: host.kubeconfigPath, NATS_URL: nats.url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const service = (namespace: string, name: string, ports: Obj[]): Obj => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { namespace, name },
  spec: { selector: { app: name }, ports },
});

/** A tenant Pod that only has to run, labelled `app: <app>`, optionally named by hostname and subdomain. */
const peerPod = (name: string, app: string, dns: { hostname?: string; subdomain?: string } = {}): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: "shop", name, labels: { app } },
  spec: { automountServiceAccountToken: false, ...dns, containers: [{ name: "app", image: "busybox:1.37" }] },
});

const headless = (name: string, app: string): Obj => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { namespace: "shop", name },
  spec: { clusterIP: "None", selector: { app }, ports: [{ port: 7000 }] },
});

/** The address of a host Pod copy once the host reports it Ready. */
const readyPodIp = async (tenant: string, name: string) =>
  (await waitFor(
    async () => {
      const pod = await readHost("Pod", tenant, name);
      const ready = (pod?.status?.conditions ?? []).some((c: Obj) => c.type === "Ready" && c.status === "True");
      return ready ? (pod?.status?.podIP as string | undefined) : undefined;
    },
    { timeoutMs: 60_000, description: `Ready host Pod ${hostNs(tenant)}/${name} with an address` },
  )) as string;

const clientPod: Obj = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: "shop", name: "client", labels: { app: "client", tier: "gold" } },
  spec: {
    serviceAccountName: "runner",
    containers: [
      {
        name: "app",
        image: "busybox:1.37",
        env: [
          { name: "MY_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          { name: "MY_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
          { name: "MY_UID", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } },
          { name: "MY_ACCOUNT", valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } } },
        ],
        volumeMounts: [{ name: "vault-token", mountPath: "/var/run/secrets/vault" }],
      },
    ],
    volumes: [
      {
        name: "vault-token",
        projected: { sources: [{ serviceAccountToken: { path: "token", audience: "vault", expirationSeconds: 600 } }] },
      },
    ],
  },
};

let tenantClient: Obj;
let hostClient: Obj;

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "pod-env" }), startNats()]);
  objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  await core.createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  nc = await connect({ servers: nats.url });
  sub = nc.subscribe("tenantplane.decisions.>", {
    callback: (_err, msg) => {
      const parsed = DecisionSchema.safeParse(msg.json());
      if (parsed.success) decisions.push(parsed.data);
    },
  });
  await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    fleet.start("recorder"),
    // Tokens are refreshed every 5 s here, whatever their lifetime (the API's shortest is 10 minutes).
    fleet.start("sync-worker", {
      RESYNC_INTERVAL_SECONDS: "8",
      TOKEN_REFRESH_MAX_SECONDS: "5",
      LEASE_TTL_SECONDS: "3",
    }),
  ]);
  await Promise.all([provision(A), provision(B)]);
  for (const t of [A, B]) {
    await waitFor(async () => (await synced(t.name)) || undefined, {
      timeoutMs: 150_000,
      intervalMs: 500,
      description: `${t.name} Synced=True`,
    });
  }
  for (const t of [A, B]) {
    await tenantCreate(t.name, { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
    await waitForTenantServiceAccount((await tenantApi(t.name)).client, "shop");
  }
  await tenantCreate(A.name, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { namespace: "shop", name: "runner" },
  });
  await tenantCreate(
    A.name,
    service("shop", "web", [
      { name: "http", port: 80 },
      { name: "metrics", port: 9090 },
    ]),
  );
  await tenantCreate(A.name, service("shop", "db", [{ port: 5432 }]));
  await tenantCreate(B.name, service("shop", "vault", [{ port: 8200 }]));
  await tenantCreate(B.name, service("shop", "web", [{ port: 8080 }]));
  tenantClient = await tenantCreate(A.name, clientPod);
  hostClient = await waitFor(() => readHost("Pod", A.name, "client-x-shop-x-penv-a"), {
    timeoutMs: 60_000,
    description: "host copy of Pod shop/client",
  });
}, 300_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  sub?.unsubscribe();
  await nc?.close();
  for (const d of dnsServers) await d.stop({ keepLogs });
  await fleet?.stop({ keepLogs });
  for (const api of tenantApis) await api.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("a host Pod copy reaches its tenant's API, never the host's", () => {
  it("carries the tenant API Service's address in KUBERNETES_* and no host credentials", async () => {
    const apiIp = await clusterIp(A.name, "k3s");
    const spec = hostClient.spec;
    const env = await effectiveEnv(A.name, spec.containers[0]);
    expect(env).toMatchObject({
      KUBERNETES_SERVICE_HOST: apiIp,
      KUBERNETES_SERVICE_PORT: "6443",
      KUBERNETES_PORT: `tcp://${apiIp}:6443`,
      KUBERNETES_PORT_6443_TCP_ADDR: apiIp,
    });
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.enableServiceLinks).toBe(false);
    const projected = (spec.volumes as Obj[]).flatMap((v) => v.projected?.sources ?? []);
    expect(projected.filter((s: Obj) => s.serviceAccountToken !== undefined)).toEqual([]);
    // The serving certificate names that address, so in-cluster clients verify it.
    const sts = (await objects.read({
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "k3s", namespace: hostNs(A.name) },
    })) as Obj;
    expect(sts.spec.template.spec.containers[0].args).toContain(`--tls-san=${apiIp}`);
  });

  it("sees the tenant's service links at the host addresses it can reach, none of the host namespace's", async () => {
    const webIp = await clusterIp(A.name, "web-x-shop-x-penv-a");
    const dbIp = await clusterIp(A.name, "db-x-shop-x-penv-a");
    const env = await waitFor(
      async () => {
        const e = await effectiveEnv(A.name, hostClient.spec.containers[0]);
        return e["DB_SERVICE_HOST"] === undefined ? undefined : e;
      },
      { timeoutMs: 30_000, description: "service links of tenant namespace shop" },
    );
    expect(env).toMatchObject({
      WEB_SERVICE_HOST: webIp,
      WEB_SERVICE_PORT: "80",
      WEB_SERVICE_PORT_METRICS: "9090",
      WEB_PORT_80_TCP: `tcp://${webIp}:80`,
      DB_SERVICE_HOST: dbIp,
    });
    // Neither the host namespace's Services (the tenant API, its DNS) nor another tenant's.
    expect(Object.keys(env).filter((k) => /^(K3S|TENANT_DNS|VAULT)_/.test(k))).toEqual([]);
  });

  it("gives the downward API the tenant's name, namespace, uid and ServiceAccount", async () => {
    const annotations = hostClient.metadata.annotations;
    expect(annotations).toMatchObject({
      "tenantplane.io/virtual-name": "client",
      "tenantplane.io/virtual-namespace": "shop",
      "tenantplane.io/virtual-uid": tenantClient.metadata.uid,
      "tenantplane.io/virtual-service-account": "runner",
    });
    const refs = Object.fromEntries(
      (hostClient.spec.containers[0].env as Obj[])
        .filter((e) => e.valueFrom?.fieldRef)
        .map((e) => [e.name, e.valueFrom.fieldRef.fieldPath]),
    );
    // What the kubelet would put in each variable: the annotation each field now points at.
    const value = (path: string) => annotations[/^metadata\.annotations\['(.+)'\]$/.exec(path)![1]!];
    expect(value(refs["MY_NAME"])).toBe("client");
    expect(value(refs["MY_NAMESPACE"])).toBe("shop");
    expect(value(refs["MY_UID"])).toBe(tenantClient.metadata.uid);
    expect(value(refs["MY_ACCOUNT"])).toBe("runner");
  });
});

describe("a host Pod copy holds its tenant's token", () => {
  const secretName = "client-x-shop-x-penv-a.token";
  const tokenOf = (secret: Obj, key: string) => Buffer.from(secret.data[key], "base64").toString("utf8");
  const keyFor = (audience: string | undefined) =>
    (JSON.parse(hostClient.metadata.annotations["tenantplane.io/token-requests"]) as Obj[]).find(
      (r) => r.audience === audience,
    )!.key as string;

  it("minted by TokenRequest on the tenant API: TokenReview authenticates the tenant ServiceAccount, audience as asked", async () => {
    const secret = await waitFor(() => readHost("Secret", A.name, secretName), {
      timeoutMs: 30_000,
      description: `token Secret ${secretName}`,
    });
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "Pod", name: "client-x-shop-x-penv-a", uid: hostClient.metadata.uid }),
    ]);
    const vault = tokenOf(secret, keyFor("vault"));
    const review = await tokenReview(A.name, vault, ["vault"]);
    expect(review.authenticated).toBe(true);
    expect(review.user.username).toBe("system:serviceaccount:shop:runner");
    expect(review.audiences).toEqual(["vault"]);
    // Bound to the tenant Pod, with the lifetime it asked for.
    const claims = jwtPayload(vault);
    expect(claims["kubernetes.io"].pod).toEqual({ name: "client", uid: tenantClient.metadata.uid });
    expect(claims.exp - claims.iat).toBe(600);
    // Not valid for another audience.
    const wrongAudience = await tokenReview(A.name, vault, ["other"]);
    expect(wrongAudience.authenticated ?? false).toBe(false);
    expect(wrongAudience.error).toMatch(/audience/);

    // The default projection (the tenant's admission added it): API audience, tenant CA, virtual namespace.
    const apiToken = tokenOf(secret, keyFor(undefined));
    const apiReview = await tokenReview(A.name, apiToken);
    expect(apiReview.authenticated).toBe(true);
    expect(apiReview.user.username).toBe("system:serviceaccount:shop:runner");
    expect(tokenOf(secret, "ca.crt")).toBe((await tenantApi(A.name)).caPem);
    expect(tokenOf(secret, "namespace")).toBe("shop");
  });

  it("is refreshed on schedule, and every refreshed token is valid", async () => {
    const first = await waitFor(() => readHost("Secret", A.name, secretName), { description: secretName });
    const before = jwtPayload(tokenOf(first, keyFor("vault")));
    const refreshed = await waitFor(
      async () => {
        const s = await readHost("Secret", A.name, secretName);
        return s && jwtPayload(tokenOf(s, keyFor("vault"))).iat > before.iat ? s : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250, description: "a refreshed token" },
    );
    const review = await tokenReview(A.name, tokenOf(refreshed, keyFor("vault")), ["vault"]);
    expect(review.authenticated).toBe(true);
    expect(Date.parse(refreshed.metadata.annotations["tenantplane.io/token-refresh-at"])).toBeGreaterThan(
      before.iat * 1000,
    );
  });

  it("never shows a token in a Decision", async () => {
    await waitFor(() => decisions.find((d) => d.kind === "Secret" && d.hostRef.name === secretName), {
      description: "the token Secret's Decision",
    });
    const mine = decisions.filter((d) => d.tenant === A.name);
    expect(mine.filter((d) => /eyJ[A-Za-z0-9_-]{10,}/.test(d.reason))).toEqual([]);
    const secretDecision = mine.find((d) => d.kind === "Secret" && d.hostRef.name === secretName)!;
    expect(secretDecision.reason).toMatch(/TokenRequest on the tenant API for ServiceAccount shop\/runner/);
  });
});

describe("a host Pod copy resolves its tenant's names through the tenant DNS server", () => {
  let conf: ResolvConf;
  let dnsA: CoreDns;
  let dnsB: CoreDns;
  const peerIps: Record<string, string> = {};

  beforeAll(async () => {
    // Headless Services with their endpoints, a Pod named by hostname and subdomain, an alias.
    await tenantCreate(A.name, headless("peers", "peer"));
    await tenantCreate(A.name, peerPod("peer-0", "peer", { hostname: "peer-0", subdomain: "peers" }));
    await tenantCreate(A.name, peerPod("peer-1", "peer"));
    await tenantCreate(A.name, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { namespace: "shop", name: "alias" },
      spec: { type: "ExternalName", externalName: "db.example.org" },
    });
    await tenantCreate(B.name, headless("quorum", "q"));
    await tenantCreate(B.name, peerPod("q-0", "q", { hostname: "q-0", subdomain: "quorum" }));
    peerIps["peer-0"] = await readyPodIp(A.name, "peer-0-x-shop-x-penv-a");
    peerIps["peer-1"] = await readyPodIp(A.name, "peer-1-x-shop-x-penv-a");
    peerIps["q-0"] = await readyPodIp(B.name, "q-0-x-shop-x-penv-b");

    const dnsConfig = hostClient.spec.dnsConfig as Obj;
    expect(hostClient.spec.dnsPolicy).toBe("None");
    expect(dnsConfig.nameservers).toEqual([await clusterIp(A.name, "tenant-dns")]);
    conf = {
      searches: dnsConfig.searches,
      ndots: Number((dnsConfig.options as Obj[]).find((o) => o.name === "ndots")?.value),
    };
    const start = async (t: typeof A, ...expected: string[]) => {
      const records = await waitFor(
        async () => {
          const cm = await readHost("ConfigMap", t.name, "tenant-dns-records");
          return expected.every((e) => cm?.data?.zone?.includes(e)) ? cm : undefined;
        },
        { timeoutMs: 30_000, description: `DNS records of ${t.name} naming ${expected}` },
      );
      const corefile = (await readHost("ConfigMap", t.name, "tenant-dns"))!.data.Corefile as string;
      const server = await startCoreDns({
        address: t.dns,
        corefile,
        files: { "/etc/coredns/records/zone": records.data.zone },
        // Nothing listens there: names outside the tenant's zone fail at once instead of waiting on this machine's resolver.
        upstream: "127.0.0.94:53",
      });
      dnsServers.push(server);
      return server;
    };
    dnsA = await start(
      A,
      "db.shop.svc",
      `peer-0.peers.shop.svc 5 IN A ${peerIps["peer-0"]}`,
      `peers.shop.svc 5 IN A ${peerIps["peer-1"]}`,
      "alias.shop.svc",
    );
    dnsB = await start(B, "vault.shop.svc", `q-0.quorum.shop.svc 5 IN A ${peerIps["q-0"]}`);
  });

  const resolve = (dns: CoreDns, name: string, type: "A" | "CNAME" = "A") =>
    resolveWithSearch(dnsResolver(dns.address, dns.port), conf, name, type);

  it("resolves a headless Service to its ready endpoints' host Pod addresses, and a Pod by hostname.subdomain", async () => {
    const both = [peerIps["peer-0"], peerIps["peer-1"]].sort();
    for (const name of ["peers", "peers.shop", "peers.shop.svc.cluster.local."]) {
      expect((await resolve(dnsA, name))?.addresses.sort(), name).toEqual(both);
    }
    for (const name of ["peer-0.peers", "peer-0.peers.shop", "peer-0.peers.shop.svc.cluster.local"]) {
      const answer = await resolve(dnsA, name);
      expect(answer, name).toEqual({ fqdn: "peer-0.peers.shop.svc.cluster.local", addresses: [peerIps["peer-0"]] });
    }
    // peer-1 has no hostname: it is an endpoint, but has no name of its own.
    expect(await resolve(dnsA, "peer-1.peers")).toBeUndefined();
    // The tenant sees the same addresses in its Pods' status.
    const { client } = await tenantApi(A.name);
    const tenantPod = await waitFor(
      async () => {
        const pod = await client.request<Obj>("GET", resourcePath("v1", "pods", "shop", "peer-0"));
        return pod.status?.podIP === peerIps["peer-0"] ? pod : undefined;
      },
      { timeoutMs: 30_000, description: "tenant Pod shop/peer-0 showing its host address" },
    );
    expect(tenantPod.status.podIP).toBe(peerIps["peer-0"]);
  });

  it("resolves an ExternalName Service to a CNAME of its target", async () => {
    for (const name of ["alias", "alias.shop", "alias.shop.svc.cluster.local"]) {
      expect(await resolve(dnsA, name, "CNAME"), name).toEqual({
        fqdn: "alias.shop.svc.cluster.local",
        addresses: ["db.example.org"],
      });
    }
  });

  it("uses only the tenant DNS Service, with the tenant's search list", () => {
    expect(conf).toEqual({ searches: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local"], ndots: 5 });
  });

  it("resolves <svc>, <svc>.<ns> and <svc>.<ns>.svc.cluster.local to the host copy's address", async () => {
    const webIp = await clusterIp(A.name, "web-x-shop-x-penv-a");
    for (const name of [
      "web",
      "web.shop",
      "web.shop.svc",
      "web.shop.svc.cluster.local",
      "web.shop.svc.cluster.local.",
    ]) {
      expect((await resolve(dnsA, name))?.addresses, name).toEqual([webIp]);
    }
    expect((await resolve(dnsA, "db"))?.addresses).toEqual([await clusterIp(A.name, "db-x-shop-x-penv-a")]);
  });

  it("resolves kubernetes.default to the tenant API Service", async () => {
    const apiIp = await clusterIp(A.name, "k3s");
    expect((await resolve(dnsA, "kubernetes.default"))?.addresses).toEqual([apiIp]);
    expect((await resolve(dnsA, "kubernetes.default.svc.cluster.local"))?.addresses).toEqual([apiIp]);
  });

  it("resolves nothing of another tenant, by its tenant name or its host name", async () => {
    // Tenant B's own server answers for vault, so the refusal below is not vacuous.
    expect((await resolve(dnsB, "vault"))?.addresses).toEqual([await clusterIp(B.name, "vault-x-shop-x-penv-b")]);
    for (const name of [
      "vault",
      "vault.shop",
      "vault.shop.svc.cluster.local",
      "vault-x-shop-x-penv-b.tp-penv-b.svc.cluster.local",
      "k3s.tp-penv-b.svc.cluster.local",
    ]) {
      expect(await resolve(dnsA, name), name).toBeUndefined();
    }
    // Nor its headless Service or its Pod's hostname, which B's server answers.
    expect((await resolve(dnsB, "q-0.quorum"))?.addresses).toEqual([peerIps["q-0"]]);
    expect((await resolve(dnsB, "quorum"))?.addresses).toEqual([peerIps["q-0"]]);
    for (const name of ["quorum", "q-0.quorum", "q-0.quorum.shop.svc.cluster.local", "quorum.shop.svc.cluster.local"]) {
      expect(await resolve(dnsA, name), name).toBeUndefined();
    }
    for (const name of ["peers", "peer-0.peers", "alias"]) {
      expect(await resolve(dnsB, name), name).toBeUndefined();
      expect(await resolve(dnsB, name, "CNAME"), name).toBeUndefined();
    }
    // Tenant B's web is B's address through B's server and A's through A's.
    expect((await resolve(dnsB, "web"))?.addresses).toEqual([await clusterIp(B.name, "web-x-shop-x-penv-b")]);
    expect((await resolve(dnsA, "web"))?.addresses).toEqual([await clusterIp(A.name, "web-x-shop-x-penv-a")]);
  });

  it("answers a new Service once the sync worker has rewritten the records", async () => {
    await tenantCreate(A.name, service("shop", "cache", [{ port: 6379 }]));
    const cacheIp = await clusterIp(A.name, "cache-x-shop-x-penv-a");
    const records = await waitFor(
      async () => {
        const cm = await readHost("ConfigMap", A.name, "tenant-dns-records");
        return cm?.data?.zone?.includes(cacheIp) ? cm : undefined;
      },
      { timeoutMs: 30_000, description: "records naming shop/cache" },
    );
    dnsA.writeFile("/etc/coredns/records/zone", records.data.zone);
    const answer = await waitFor(async () => (await resolve(dnsA, "cache"))?.addresses, {
      timeoutMs: 15_000,
      intervalMs: 250,
      description: "cache resolving after the reload",
    });
    expect(answer).toEqual([cacheIp]);
    const decision = decisions.find(
      (d) =>
        d.tenant === A.name &&
        d.hostRef.name === "tenant-dns-records" &&
        d.reason.includes(`cache.shop.svc.cluster.local ${cacheIp}`),
    );
    expect(decision?.reason).toMatch(/^tenant DNS zone cluster\.local with \d+ names \(/);
  });

  it("is reachable from the namespace's pods under the isolation policies", async () => {
    // Raw JSON: the typed client renames `from`.
    const policy = await new JsonClient(host.kubeConfig).request<Obj>(
      "GET",
      `/apis/networking.k8s.io/v1/namespaces/${hostNs(A.name)}/networkpolicies/tenantplane-allow-control-plane`,
    );
    expect(policy.spec.ingress).toContainEqual({
      from: [{ podSelector: {} }],
      ports: [
        { protocol: "UDP", port: 1053 },
        { protocol: "TCP", port: 1053 },
      ],
    });
    const deployment = (await objects.read({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "tenant-dns", namespace: hostNs(A.name) },
    })) as Obj;
    expect(deployment.spec.template.metadata.labels["tenantplane.io/control-plane"]).toBe("true");
  });
});

describe("a pod network ConfigMap whose name another object holds", () => {
  it("is left alone, with one Skip Decision naming why, however often the records are rewritten", async () => {
    const held = serviceLinksConfigMapName("held");
    const foreign = await core.createNamespacedConfigMap({
      namespace: hostNs(A.name),
      body: { metadata: { name: held, labels: { owner: "someone-else" } }, data: { keep: "me" } },
    });
    await tenantCreate(A.name, { apiVersion: "v1", kind: "Namespace", metadata: { name: "held" } });
    await tenantCreate(A.name, service("held", "first", [{ port: 80 }]));
    const skip = await waitFor(
      () => decisions.find((d) => d.tenant === A.name && d.hostRef.name === held && d.action === "Skip"),
      { timeoutMs: 30_000, description: `the Skip of ConfigMap ${held}` },
    );
    expect(skip).toMatchObject({ kind: "ConfigMap", service: "sync-worker", hostRef: { namespace: hostNs(A.name) } });
    expect(skip.reason).toBe(
      "held by a ConfigMap that is not tenantplane's service-links ConfigMap of this tenant: not written",
    );

    // Another Service in that namespace makes another pass over the records: the same holder is no news.
    await tenantCreate(A.name, service("held", "second", [{ port: 81 }]));
    await waitFor(
      async () => (await readHost("ConfigMap", A.name, "tenant-dns-records"))?.data?.zone?.includes("second.held.svc"),
      { timeoutMs: 30_000, description: "records naming held/second" },
    );
    await new Promise((r) => setTimeout(r, 1_000));
    expect(decisions.filter((d) => d.hostRef.name === held).map((d) => d.action)).toEqual(["Skip"]);
    const after = await core.readNamespacedConfigMap({ name: held, namespace: hostNs(A.name) });
    expect(after.metadata?.resourceVersion).toBe(foreign.metadata?.resourceVersion);
    expect(after.data).toEqual({ keep: "me" });
  });
});

describe("explain-sync predicts every rewrite, with the live addresses", () => {
  it("names the API address, the DNS server and the token source of a Pod", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pod-env-"));
    const file = join(dir, "pod.json");
    writeFileSync(file, JSON.stringify({ ...clientPod, metadata: { ...clientPod.metadata, name: "client2" } }));
    const run = await tp(["explain-sync", "--tenant", A.name, "-f", file, "-o", "json"]);
    expect(run.code, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as Decision[];
    const pod = rows.find((r) => r.kind === "Pod" && r.tenantRef.name === "client2")!;
    const apiIp = await clusterIp(A.name, "k3s");
    const dnsIp = await clusterIp(A.name, "tenant-dns");
    expect(pod.action).toBe("Create");
    expect(pod.reason).toContain(`tenant API tp-penv-a/k3s at ${apiIp}:6443 in KUBERNETES_* env`);
    expect(pod.reason).toContain(`DNS tp-penv-a/tenant-dns at ${dnsIp}, search shop.svc.cluster.local`);
    // explain-sync plans the Pod as the tenant API would store it, so the default projection
    // the tenant's admission adds is predicted beside the Pod's own token.
    expect(pod.reason).toMatch(
      /token of ServiceAccount shop\/runner by TokenRequest \(audience vault, 600s(; API audience, \d+s)?\) in Secret client2-x-shop-x-penv-a\.token/,
    );
    expect(pod.reason).toContain(
      "downward API metadata.name, metadata.namespace, metadata.uid, spec.serviceAccountName from the tenant",
    );
    // The Decision the worker published for the real Pod says the same.
    const published = decisions.find((d) => d.kind === "Pod" && d.tenantRef.name === "client" && d.action === "Create");
    expect(published?.reason).toContain(`tenant API tp-penv-a/k3s at ${apiIp}:6443`);
  });
});

describe("a token the tenant API refuses", () => {
  it("is a Fail Decision about the token Secret and a Warning on the tenant Pod, once per answer", async () => {
    const { client } = await tenantApi(A.name);
    await tenantCreate(A.name, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { namespace: "shop", name: "temp" },
    });
    await tenantCreate(A.name, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { namespace: "shop", name: "orphan" },
      spec: { serviceAccountName: "temp", containers: [{ name: "app", image: "busybox:1.37" }] },
    });
    const secretName = "orphan-x-shop-x-penv-a.token";
    await waitFor(() => readHost("Secret", A.name, secretName), { timeoutMs: 60_000, description: secretName });
    // Its next refresh (every 5 s here) asks for a token of a ServiceAccount that is gone.
    await client.request("DELETE", resourcePath("v1", "serviceaccounts", "shop", "temp"));
    const failsOf = () =>
      decisions.filter((d) => d.action === "Fail" && d.kind === "Secret" && d.hostRef.name === secretName);
    const fail = await waitFor(() => failsOf()[0], {
      timeoutMs: 30_000,
      description: "a Fail Decision about the token Secret",
    });
    expect(fail.tenantRef).toEqual({ namespace: "shop", name: "orphan" });
    expect(fail.error?.code).toBe(404);
    expect(fail.reason).toMatch(
      /the tenant API refused a token for ServiceAccount shop\/temp bound to this Pod \(404 NotFound\)/,
    );
    const warning = await waitFor(
      async () => {
        const events = await client.request<{ items: Obj[] }>("GET", resourcePath("v1", "events", "shop"), {
          query: { fieldSelector: "involvedObject.name=orphan" },
        });
        return events.items.find((e) => e.reason === "SyncFailed");
      },
      { timeoutMs: 30_000, description: "a SyncFailed Event on the tenant Pod shop/orphan" },
    );
    expect(warning.type).toBe("Warning");
    expect(warning.message).toMatch(
      /ServiceAccount shop\/temp .*waits for token Secret tp-penv-a\/orphan-x-shop-x-penv-a\.token/,
    );
    // The keeper retries with backoff (0.5 s doubling) meanwhile; the same answer is not news again.
    await sleep(8_000);
    expect(failsOf()).toHaveLength(1);
  });
});

describe("the token Secret goes with its Pod", () => {
  it("is deleted by the host when the host Pod is", async () => {
    const { client } = await tenantApi(A.name);
    await client.request("DELETE", resourcePath("v1", "pods", "shop", "client"), {
      body: { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0 },
    });
    await waitFor(
      async () => ((await readHost("Pod", A.name, "client-x-shop-x-penv-a")) === undefined ? true : undefined),
      {
        timeoutMs: 30_000,
        description: "host Pod gone",
      },
    );
    await waitFor(
      async () => ((await readHost("Secret", A.name, "client-x-shop-x-penv-a.token")) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: "token Secret garbage-collected with its Pod" },
    );
  });
});
