import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { resourcePath, type JsonClient } from "@tenantplane/kube";
import { DecisionSchema, type Decision } from "@tenantplane/messaging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  liveProcesses,
  provisionTenant,
  startHostCluster,
  startNats,
  syncedState,
  tenantJsonClient,
  trackFailures,
  waitFor,
  waitForSynced,
  waitForTenantServiceAccount,
  type SyncTenant,
  type HostCluster,
  type NatsServer,
  type RunningService,
  type TenantApiServer,
} from "../harness/index.js";
import { startProcess, type ManagedProcess } from "../harness/process.js";

// Tenant API stand-ins of this suite live on 127.0.0.170-179.
const TENANTS = { a: { name: "sync-a", address: "127.0.0.170" }, b: { name: "sync-b", address: "127.0.0.171" } };
const failures = trackFailures();

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
let nc: NatsConnection;
let sub: Subscription;
const decisions: Decision[] = [];
const workers: RunningService[] = [];
let provisioner: RunningService;
const tenantApis: TenantApiServer[] = [];
const restarted: ManagedProcess[] = [];
const tenantClients = new Map<string, JsonClient>();

type Obj = KubernetesObject & Record<string, unknown>;

const hostNs = (tenant: string) => `tp-${tenant}`;
const hostNameOf = (tenant: string, namespace: string, name: string) => `${name}-x-${namespace}-x-${tenant}`;
const PLURAL: Record<string, string> = {
  Pod: "pods",
  ConfigMap: "configmaps",
  Secret: "secrets",
  Service: "services",
  ServiceAccount: "serviceaccounts",
  PersistentVolumeClaim: "persistentvolumeclaims",
};

async function apply(obj: KubernetesObject): Promise<void> {
  await objects.patch(obj, undefined, undefined, "e2e", true, PatchStrategy.ServerSideApply);
}

async function readHost(kind: string, tenant: string, name: string): Promise<Obj | undefined> {
  try {
    return (await objects.read({ apiVersion: "v1", kind, metadata: { name, namespace: hostNs(tenant) } })) as Obj;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Raw JSON against the tenant API, with the kubeconfig the provisioner stored. */
async function tenantApi(tenant: string): Promise<JsonClient> {
  const cached = tenantClients.get(tenant);
  if (cached) return cached;
  const client = await tenantJsonClient(host.kubeConfig, tenant);
  tenantClients.set(tenant, client);
  return client;
}

async function tenantCreate(tenant: string, obj: Obj): Promise<void> {
  const api = await tenantApi(tenant);
  const ns = obj.metadata?.namespace;
  await api.request("POST", resourcePath("v1", PLURAL[obj.kind!] ?? "namespaces", ns), { body: obj });
}

async function tenantReplace(tenant: string, kind: string, namespace: string, name: string, edit: (o: Obj) => void) {
  const api = await tenantApi(tenant);
  const path = resourcePath("v1", PLURAL[kind]!, namespace, name);
  // Back-sync writes the tenant Pod's status meanwhile: a conflict means read again.
  await waitFor(
    async () => {
      const current = await api.request<Obj>("GET", path);
      edit(current);
      await api.request("PUT", path, { body: current });
      return true;
    },
    { timeoutMs: 10_000, intervalMs: 100, description: `update of tenant ${kind} ${namespace}/${name}` },
  );
}

async function tenantDelete(tenant: string, kind: string, namespace: string, name: string) {
  const api = await tenantApi(tenant);
  const path = kind === "Namespace" ? `/api/v1/namespaces/${name}` : resourcePath("v1", PLURAL[kind]!, namespace, name);
  await api.request("DELETE", path);
}

async function tenantNamespace(tenant: string, name: string) {
  await tenantCreate(tenant, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
}

function decisionsFor(tenant: string, filter: Partial<Pick<Decision, "action" | "kind">> & { name?: string } = {}) {
  return decisions.filter(
    (d) =>
      d.tenant === tenant &&
      (filter.action === undefined || d.action === filter.action) &&
      (filter.kind === undefined || d.kind === filter.kind) &&
      (filter.name === undefined || d.tenantRef.name === filter.name),
  );
}

async function waitForDecision(tenant: string, filter: { action: Decision["action"]; kind: string; name: string }) {
  return waitFor(async () => decisionsFor(tenant, filter)[0], {
    timeoutMs: 30_000,
    intervalMs: 100,
    description: `${filter.action} ${filter.kind} ${filter.name} decision for ${tenant}`,
  });
}

/** The sync worker's Decisions about `name` that the DECISIONS stream stored, as an outside reader sees them. */
async function storedDecisions(tenant: string, name: string): Promise<Decision[]> {
  const reader = await jetstream(nc).consumers.get("DECISIONS", {
    filter_subjects: [`tenantplane.decisions.${tenant}.>`],
  });
  const out: Decision[] = [];
  for await (const m of await reader.fetch({ max_messages: 10_000, expires: 2_000 })) {
    const d = m.json<Decision>();
    if (d.service === "sync-worker" && d.tenantRef.name === name) out.push(d);
  }
  return out;
}

async function metric(service: RunningService, name: string): Promise<string[]> {
  const body = (await service.probe("/metrics")).body;
  return body.split("\n").filter((l) => l.startsWith(name));
}

/** Tenants each worker reports syncing right now, from its own metrics. */
async function activeTenants(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const w of workers) {
    if (!w.process.running()) continue;
    const lines = await metric(w, "tenantplane_sync_tenant_active{").catch(() => []);
    const tenants = lines.map((l) => /tenant="([^"]+)"/.exec(l)?.[1]).filter((t): t is string => !!t);
    out.set(w.name, tenants);
  }
  return out;
}

async function startSyncWorker(extraEnv: Record<string, string> = {}): Promise<RunningService> {
  const w = await fleet.start("sync-worker", {
    ...extraEnv,
    RESYNC_INTERVAL_SECONDS: "8",
    KUBECONFIG_CHECK_SECONDS: "5",
    PARTITIONS: "16",
    LEASE_TTL_SECONDS: "3",
    LEASE_BUCKET: "sync-e2e",
    CONTENT_HASH_KEY: "e2e-content-hash-key-0123456789",
  });
  workers.push(w);
  return w;
}

async function provision(tenant: SyncTenant, syncPolicy?: string) {
  tenantApis.push(
    await provisionTenant(host.kubeConfig, tenant, syncPolicy ? { syncPolicyRef: { name: syncPolicy } } : {}),
  );
}

async function syncedCondition(tenant: string) {
  return syncedState(host.kubeConfig, tenant);
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "sync-worker" }), startNats()]);
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
      // A Decision republished under its id (after a takeover) is one fact, as the stream and the recorder count it.
      if (parsed.success && parsed.data.service === "sync-worker" && !decisions.some((d) => d.id === parsed.data.id))
        decisions.push(parsed.data);
    },
  });
  await Promise.all([
    fleet.start("watcher"),
    fleet.start("provisioner").then((p) => (provisioner = p)),
    fleet.start("isolation"),
    fleet.start("recorder"),
    startSyncWorker(),
    startSyncWorker(),
  ]);
  await apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "SyncPolicy",
    metadata: { name: "sync-b-policy" },
    spec: { toHost: [{ kind: "ConfigMap" }, { kind: "Secret" }] },
  } as KubernetesObject);
  await Promise.all([provision(TENANTS.a), provision(TENANTS.b, "sync-b-policy")]);
  for (const t of [TENANTS.a, TENANTS.b]) await waitForSynced(host.kubeConfig, t.name);
  await tenantNamespace(TENANTS.a.name, "web");
  await tenantNamespace(TENANTS.b.name, "web");
});

afterAll(async () => {
  const keepLogs = failures.failed();
  sub?.unsubscribe();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  for (const p of restarted) await p.stop();
  for (const api of tenantApis) await api.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

const a = TENANTS.a.name;
const b = TENANTS.b.name;

describe("sync worker: objects reach the host, explained", () => {
  const cases: {
    kind: string;
    name: string;
    body: Record<string, unknown>;
    edit: (o: Obj) => void;
    check: (o: Obj) => void;
  }[] = [
    {
      kind: "ConfigMap",
      name: "settings",
      body: { data: { mode: "one" } },
      edit: (o) => ((o.data as Record<string, string>).mode = "two"),
      check: (o) => expect((o.data as Record<string, string>).mode).toBe("two"),
    },
    {
      kind: "Secret",
      name: "creds",
      body: { type: "Opaque", stringData: { password: "s3cr3t-value" } },
      edit: (o) => ((o.data as Record<string, string>).password = Buffer.from("n3w-s3cr3t").toString("base64")),
      check: (o) =>
        expect(Buffer.from((o.data as Record<string, string>).password!, "base64").toString()).toBe("n3w-s3cr3t"),
    },
    {
      kind: "Service",
      name: "frontend",
      body: { spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] } },
      edit: (o) => ((o.spec as { ports: { port: number }[] }).ports[0]!.port = 81),
      check: (o) => expect((o.spec as { ports: { port: number }[] }).ports[0]!.port).toBe(81),
    },
    {
      kind: "ServiceAccount",
      name: "runner",
      body: {},
      edit: (o) => (o.metadata!.labels = { tier: "gold" }),
      check: (o) => expect(o.metadata?.labels?.tier).toBe("gold"),
    },
    {
      kind: "PersistentVolumeClaim",
      name: "data",
      body: { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } },
      edit: (o) => (o.metadata!.labels = { tier: "gold" }),
      check: (o) => expect(o.metadata?.labels?.tier).toBe("gold"),
    },
    {
      kind: "Pod",
      name: "app",
      body: { spec: { automountServiceAccountToken: false, containers: [{ name: "app", image: "nginx:1.27" }] } },
      edit: (o) => ((o.spec as { containers: { image: string }[] }).containers[0]!.image = "nginx:1.28"),
      check: (o) => expect((o.spec as { containers: { image: string }[] }).containers[0]!.image).toBe("nginx:1.28"),
    },
  ];

  for (const c of cases) {
    it(`creates, updates and deletes a ${c.kind} with a Decision for each`, async () => {
      const target = hostNameOf(a, "web", c.name);
      if (c.kind === "Pod") await waitForTenantServiceAccount(await tenantApi(a), "web");
      await tenantCreate(a, {
        apiVersion: "v1",
        kind: c.kind,
        metadata: { namespace: "web", name: c.name },
        ...c.body,
      });
      const created = await waitForDecision(a, { action: "Create", kind: c.kind, name: c.name });
      expect(created).toMatchObject({
        service: "sync-worker",
        tenantRef: { namespace: "web", name: c.name },
        hostRef: { namespace: hostNs(a), name: target },
      });
      const copy = await waitFor(() => readHost(c.kind, a, target), {
        timeoutMs: 10_000,
        description: `host ${c.kind}`,
      });
      expect(copy.metadata?.labels).toMatchObject({
        "app.kubernetes.io/managed-by": "tenantplane",
        "tenantplane.io/tenant": a,
      });

      await tenantReplace(a, c.kind, "web", c.name, c.edit);
      const updated = await waitForDecision(a, { action: "Update", kind: c.kind, name: c.name });
      expect(updated.reason).toMatch(/differs from the desired object/);
      c.check((await readHost(c.kind, a, target))!);

      await tenantDelete(a, c.kind, "web", c.name);
      const deleted = await waitForDecision(a, { action: "Delete", kind: c.kind, name: c.name });
      expect(deleted.reason).toMatch(/gone from tenant|is being deleted in tenant/);
      await waitFor(async () => (await readHost(c.kind, a, target)) === undefined || undefined, {
        timeoutMs: 30_000,
        description: `host ${c.kind} deleted`,
      });
      // One of each: no duplicate writes from two workers or from resyncs.
      expect(decisionsFor(a, { kind: c.kind, name: c.name }).map((d) => d.action)).toEqual([
        "Create",
        "Update",
        "Delete",
      ]);
      if (c.kind === "ConfigMap") {
        // The recorder turns the Decisions into Events on the TenantCluster; a Delete is a Warning.
        const events = await waitFor(
          async () => {
            const list = (await core.listEventForAllNamespaces({ fieldSelector: `involvedObject.name=${a}` })).items;
            const reasons = new Map(list.map((e) => [e.reason, e]));
            return reasons.has("CreateConfigMap") && reasons.has("DeleteConfigMap") ? reasons : undefined;
          },
          { timeoutMs: 30_000, description: "Create and Delete Events for the ConfigMap" },
        );
        expect(events.get("CreateConfigMap")?.type).toBe("Normal");
        expect(events.get("DeleteConfigMap")?.type).toBe("Warning");
        expect(events.get("DeleteConfigMap")?.message).toContain(target);
      }
      if (c.kind === "Secret") {
        expect(JSON.stringify(decisionsFor(a, { kind: "Secret" }))).not.toMatch(/s3cr3t/);
      }
    });
  }

  it("scopes a Service selector to its tenant and virtual namespace", async () => {
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { namespace: "web", name: "scoped" },
      spec: { selector: { app: "web", "tenantplane.io/tenant": "other" }, ports: [{ port: 80 }] },
    });
    const copy = await waitFor(() => readHost("Service", a, hostNameOf(a, "web", "scoped")), {
      timeoutMs: 30_000,
      description: "Service copy",
    });
    const selector = (copy.spec as { selector: Record<string, string> }).selector;
    // The tenant's own tenantplane.io key is escaped, never trusted; the scope is the worker's.
    expect(selector).toMatchObject({
      app: "web",
      "tenantplane.io/tenant": a,
      "tenantplane.io/virtual-namespace": "web",
    });
    expect(
      Object.entries(selector)
        .filter(([, v]) => v === "other")
        .map(([k]) => k),
    ).not.toContain("tenantplane.io/tenant");
  });

  it("overwrites spoofed tenant and managed-by labels", async () => {
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        namespace: "web",
        name: "spoof",
        labels: { "tenantplane.io/tenant": b, "app.kubernetes.io/managed-by": "someone", keep: "me" },
      },
      data: { x: "1" },
    });
    const copy = await waitFor(() => readHost("ConfigMap", a, hostNameOf(a, "web", "spoof")), {
      timeoutMs: 30_000,
      description: "spoof copy",
    });
    expect(copy.metadata?.labels).toMatchObject({
      "tenantplane.io/tenant": a,
      "app.kubernetes.io/managed-by": "tenantplane",
      keep: "me",
    });
  });

  it("leaves a foreign object at a target name untouched: one Skip, one Warning", async () => {
    const target = hostNameOf(a, "web", "taken");
    await core.createNamespacedConfigMap({
      namespace: hostNs(a),
      body: { metadata: { name: target, labels: { owner: "ops" } }, data: { mine: "yes" } },
    });
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "taken" },
      data: { theirs: "no" },
    });
    const skip = await waitForDecision(a, { action: "Skip", kind: "ConfigMap", name: "taken" });
    expect(skip.reason).toMatch(/foreign/);
    // Two full passes later there is still one Skip and one Warning.
    await new Promise((r) => setTimeout(r, 18_000));
    expect(decisionsFor(a, { action: "Skip", name: "taken" })).toHaveLength(1);
    const warnings = (
      await core.listEventForAllNamespaces({ fieldSelector: `involvedObject.name=${a},reason=SyncSkipped` })
    ).items;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.type).toBe("Warning");
    expect(warnings[0]?.count ?? 1).toBe(1);
    const held = await readHost("ConfigMap", a, target);
    expect(held?.data).toEqual({ mine: "yes" });
    expect(held?.metadata?.labels).toEqual({ owner: "ops" });
    expect((await syncedCondition(a)).sync?.skipped).toBeGreaterThanOrEqual(1);
  });

  it("deletes the copies of a deleted tenant namespace, saying why", async () => {
    await tenantNamespace(a, "doomed");
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "doomed", name: "c1" },
      data: { a: "1" },
    });
    await waitFor(() => readHost("ConfigMap", a, hostNameOf(a, "doomed", "c1")), {
      timeoutMs: 30_000,
      description: "doomed copy",
    });
    await tenantDelete(a, "Namespace", "", "doomed");
    const deleted = await waitForDecision(a, { action: "Delete", kind: "ConfigMap", name: "c1" });
    expect(deleted.reason).toBe(`namespace doomed deleted in tenant ${a}`);
    // A Delete's Decision is published just before the delete it announces.
    await waitFor(
      async () => (await readHost("ConfigMap", a, hostNameOf(a, "doomed", "c1"))) === undefined || undefined,
      {
        timeoutMs: 10_000,
        description: "the doomed namespace's copy deleted",
      },
    );
  });

  it("deletes the copies of a kind removed from the SyncPolicy, with a reason naming the policy change", async () => {
    await tenantCreate(b, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { namespace: "web", name: "token" },
      stringData: { t: "x" },
    });
    await tenantCreate(b, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "stays" },
      data: { t: "x" },
    });
    await waitFor(() => readHost("Secret", b, hostNameOf(b, "web", "token")), {
      timeoutMs: 30_000,
      description: "b secret copy",
    });
    await waitFor(() => readHost("ConfigMap", b, hostNameOf(b, "web", "stays")), {
      timeoutMs: 30_000,
      description: "b configmap copy",
    });
    await apply({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "SyncPolicy",
      metadata: { name: "sync-b-policy" },
      spec: { toHost: [{ kind: "ConfigMap" }] },
    } as KubernetesObject);
    const deleted = await waitForDecision(b, { action: "Delete", kind: "Secret", name: "token" });
    expect(deleted.reason).toMatch(/kind Secret left the SyncPolicy/);
    await waitFor(async () => (await readHost("Secret", b, hostNameOf(b, "web", "token"))) === undefined || undefined, {
      timeoutMs: 10_000,
      description: "the Secret copy deleted",
    });
    expect(await readHost("ConfigMap", b, hostNameOf(b, "web", "stays"))).toBeDefined();
  });
});

describe("sync worker: faults", () => {
  it("writes no Secret value and no kubeconfig into any worker log", () => {
    const logs = readdirSync(fleet.logsDir)
      .filter((f) => f.startsWith("sync-worker"))
      .map((f) => readFileSync(join(fleet.logsDir, f), "utf8"))
      .join("\n");
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of ["s3cr3t-value", "n3w-s3cr3t", "client-key-data", "BEGIN RSA", "BEGIN EC", "BEGIN PRIVATE"]) {
      expect(logs).not.toContain(secret);
    }
  });

  it("keeps every copy while the tenant API is down, says so, and converges after it returns", async () => {
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "survivor" },
      data: { a: "1" },
    });
    await waitFor(() => readHost("ConfigMap", a, hostNameOf(a, "web", "survivor")), {
      timeoutMs: 30_000,
      description: "survivor copy",
    });
    const copiesBefore = (
      await core.listNamespacedConfigMap({ namespace: hostNs(a), labelSelector: "tenantplane.io/kind=ConfigMap" })
    ).items.length;
    const deletesBefore = decisionsFor(a, { action: "Delete" }).length;

    const apiProc = liveProcesses().find((p) => p.name === `kube-apiserver https://${TENANTS.a.address}:6443`);
    expect(apiProc).toBeDefined();
    const cmdline = readFileSync(`/proc/${apiProc!.pid}/cmdline`, "utf8")
      .split("\0")
      .filter((s) => s !== "");
    const environ = Object.fromEntries(
      readFileSync(`/proc/${apiProc!.pid}/environ`, "utf8")
        .split("\0")
        .filter((s) => s.includes("="))
        .map((s) => [s.slice(0, s.indexOf("=")), s.slice(s.indexOf("=") + 1)]),
    );
    process.kill(-apiProc!.pid, "SIGKILL");

    const down = await waitFor(
      async () => {
        const c = (await syncedCondition(a)).condition;
        return c?.status === "False" && c.reason === "TenantAPIUnavailable" ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "Synced=False TenantAPIUnavailable" },
    );
    expect(down.message).toContain("nothing is deleted");
    const warning = await waitFor(
      async () =>
        (
          await core.listEventForAllNamespaces({
            fieldSelector: `involvedObject.name=${a},reason=TenantAPIUnavailable`,
          })
        ).items[0],
      { timeoutMs: 15_000, description: "TenantAPIUnavailable warning" },
    );
    expect(warning.type).toBe("Warning");
    // Longer than a full-pass interval with the tenant unreachable: nothing is deleted.
    await new Promise((r) => setTimeout(r, 12_000));
    expect(decisionsFor(a, { action: "Delete" }).length).toBe(deletesBefore);
    expect(
      (await core.listNamespacedConfigMap({ namespace: hostNs(a), labelSelector: "tenantplane.io/kind=ConfigMap" }))
        .items.length,
    ).toBe(copiesBefore);

    const again = startProcess({
      name: "tenant-apiserver-restarted",
      command: cmdline[0]!,
      args: cmdline.slice(1),
      logPath: `${fleet.logsDir}/tenant-apiserver-restarted.log`,
      env: environ,
    });
    restarted.push(again);
    await waitFor(async () => (await syncedCondition(a)).condition?.status === "True" || undefined, {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: "Synced=True again",
    });
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "after-outage" },
      data: { a: "1" },
    });
    await waitFor(() => readHost("ConfigMap", a, hostNameOf(a, "web", "after-outage")), {
      timeoutMs: 30_000,
      description: "copy after the outage",
    });
    expect(await readHost("ConfigMap", a, hostNameOf(a, "web", "survivor"))).toBeDefined();
  });

  it("reconnects when the kubeconfig Secret changes", async () => {
    const name = `${b}-kubeconfig`;
    const secret = await core.readNamespacedSecret({ name, namespace: hostNs(b) });
    const key = Object.keys(secret.data ?? {})[0]!;
    const original = Buffer.from(secret.data![key]!, "base64").toString("utf8");
    // A new endpoint nobody answers on (inside this suite's address range).
    const moved = original.replaceAll(`https://${TENANTS.b.address}:6443`, "https://127.0.0.179:6443");
    expect(moved).not.toBe(original);
    const put = (text: string) =>
      core.patchNamespacedSecret(
        { name, namespace: hostNs(b), body: { data: { [key]: Buffer.from(text).toString("base64") } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    // The provisioner repairs a hand edit of its Secret on the watch event, before the
    // worker's next check could see it: it is stopped while the Secret points elsewhere.
    await provisioner.stop();
    await put(moved);
    // The worker follows the Secret within its check interval; the worker's log is the witness.
    const logs = () =>
      readdirSync(fleet.logsDir)
        .filter((f) => f.startsWith("sync-worker"))
        .map((f) => readFileSync(join(fleet.logsDir, f), "utf8"))
        .join("\n");
    const startedAt = (server: string) =>
      logs()
        .split("\n")
        .filter((l) => l.includes('"tenant sync started"') && l.includes(`"tenant":"${b}"`) && l.includes(server))
        .length;
    const before = startedAt(TENANTS.b.address);
    await waitFor(() => startedAt("127.0.0.179") > 0 || undefined, {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: `${b} reconnects to the endpoint in the changed kubeconfig`,
    });
    await put(original);
    provisioner = await fleet.start("provisioner");
    await waitFor(() => startedAt(TENANTS.b.address) > before || undefined, {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: `${b} reconnects to the restored endpoint`,
    });
    await waitFor(async () => (await syncedCondition(b)).condition?.status === "True" || undefined, {
      timeoutMs: 30_000,
      intervalMs: 500,
      description: `${b} back on the restored endpoint`,
    });
    await tenantCreate(b, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "reconnected" },
      data: { a: "1" },
    });
    await waitFor(() => readHost("ConfigMap", b, hostNameOf(b, "web", "reconnected")), {
      timeoutMs: 30_000,
      description: "copy after reconnecting",
    });
  });

  it("rides out a nats-server restart mid-sync: the change and its Decision both arrive", async () => {
    const restarting = nats.restart();
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "during-nats-restart" },
      data: { a: "1" },
    });
    await restarting;
    await waitFor(() => readHost("ConfigMap", a, hostNameOf(a, "web", "during-nats-restart")), {
      timeoutMs: 30_000,
      description: "copy made while NATS restarted",
    });
    await waitForDecision(a, { action: "Create", kind: "ConfigMap", name: "during-nats-restart" });
    // Leases survive too: afterwards every tenant is synced by exactly one worker.
    await waitFor(
      async () => {
        const counts = new Map<string, number>();
        for (const tenants of (await activeTenants()).values())
          for (const t of tenants) counts.set(t, (counts.get(t) ?? 0) + 1);
        return counts.get(a) === 1 && counts.get(b) === 1 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "one owner per tenant after the NATS restart" },
    );
  });

  it("never lets two workers sync one tenant, and a killed worker's tenants move within 10 s with nothing lost", async () => {
    const owners = async () => {
      const active = await activeTenants();
      const byTenant = new Map<string, string[]>();
      for (const [w, tenants] of active) for (const t of tenants) byTenant.set(t, [...(byTenant.get(t) ?? []), w]);
      return byTenant;
    };
    const before = await owners();
    for (const [, ws] of before) expect(ws).toHaveLength(1);
    const ownerOfA = before.get(a)![0]!;
    const victim = workers.find((w) => w.name === ownerOfA)!;
    await victim.kill();
    const killedAt = Date.now();
    // A change made while nobody syncs the tenant.
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "in-the-gap" },
      data: { a: "1" },
    });
    await waitFor(async () => ((await owners()).get(a)?.length === 1 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 200,
      description: "another worker syncs the tenant",
    });
    await waitFor(() => readHost("ConfigMap", a, hostNameOf(a, "web", "in-the-gap")), {
      timeoutMs: 15_000,
      intervalMs: 200,
      description: "gap change arrives",
    });
    const tookMs = Date.now() - killedAt;
    console.error(`[e2e] failover after SIGKILL: change in the gap on the host after ${tookMs} ms`);
    expect(tookMs).toBeLessThan(15_000);
    // The Decision follows the write it records.
    await waitForDecision(a, { action: "Create", kind: "ConfigMap", name: "in-the-gap" });
    expect(decisionsFor(a, { action: "Create", name: "in-the-gap" })).toHaveLength(1);
    await waitFor(async () => ((await storedDecisions(a, "in-the-gap")).length > 0 ? true : undefined), {
      timeoutMs: 10_000,
      description: "the gap change's Decision stored",
    });
    expect(await storedDecisions(a, "in-the-gap")).toHaveLength(1);
  });

  it("hands over on SIGTERM and rebalances onto a new worker without double ownership", async () => {
    const added = await startSyncWorker();
    // Sample ownership while the partitions rebalance: never two workers for one tenant.
    const deadline = Date.now() + 12_000;
    while (Date.now() < deadline) {
      const active = await activeTenants();
      const seen = new Map<string, number>();
      for (const tenants of active.values()) for (const t of tenants) seen.set(t, (seen.get(t) ?? 0) + 1);
      for (const [t, n] of seen) expect(n, `tenant ${t} synced by ${n} workers`).toBeLessThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect((await metric(added, "tenantplane_sync_partitions_held"))[0]).toMatch(/ [1-9]/);
    const live = workers.filter((w) => w.process.running());
    const ownerOfB = [...(await activeTenants())].find(([, ts]) => ts.includes(b))?.[0];
    const leaving = live.find((w) => w.name === ownerOfB)!;
    const stoppedAt = Date.now();
    await leaving.stop();
    expect(leaving.process.running()).toBe(false);
    await tenantCreate(b, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "after-handover" },
      data: { a: "1" },
    });
    await waitFor(() => readHost("ConfigMap", b, hostNameOf(b, "web", "after-handover")), {
      timeoutMs: 15_000,
      intervalMs: 200,
      description: "change after SIGTERM hand-over",
    });
    console.error(`[e2e] SIGTERM hand-over: change on the host ${Date.now() - stoppedAt} ms after the stop began`);
  });

  it("publishes, once, the Decision of a worker killed between its host write and the publish", async () => {
    // One worker, which kills itself right after its first host write: it holds every partition.
    for (const w of workers.filter((w) => w.process.running())) await w.stop();
    const crashing = await startSyncWorker({ TENANTPLANE_FAULT_KILL_AFTER_HOST_WRITE: "1" });
    await waitFor(async () => ((await activeTenants()).get(crashing.name)?.includes(a) ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 200,
      description: "the crashing worker syncs the tenant",
    });
    // Its first pass found nothing to write (or it would be dead already): the next write is ours.
    await new Promise((r) => setTimeout(r, 2_000));
    crashing.process.assertRunning();
    await tenantCreate(a, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "web", name: "crash-before-publish" },
      data: { a: "1" },
    });
    await waitFor(() => (crashing.process.running() ? undefined : true), {
      timeoutMs: 20_000,
      intervalMs: 100,
      description: "the worker killed after its write",
    });
    const copy = await readHost("ConfigMap", a, hostNameOf(a, "web", "crash-before-publish"));
    const recorded = JSON.parse(copy!.metadata!.annotations!["tenantplane.io/decision"]!) as { id: string };
    expect(await storedDecisions(a, "crash-before-publish")).toHaveLength(0);

    await startSyncWorker();
    await waitFor(async () => ((await storedDecisions(a, "crash-before-publish")).length > 0 ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 250,
      description: "the recorded Decision published by the next worker",
    });
    const stored = await storedDecisions(a, "crash-before-publish");
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ id: recorded.id, action: "Create", kind: "ConfigMap" });
  });
});
