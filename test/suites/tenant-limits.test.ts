import { CoreV1Api } from "@kubernetes/client-node";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { JsonClient, resourcePath, startListWatch } from "@tenantplane/kube";
import { createLogger } from "@tenantplane/runtime";
import { DecisionSchema, type Decision } from "@tenantplane/messaging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  provisionTenant,
  startHostCluster,
  startNats,
  syncedState,
  tenantJsonClient,
  trackFailures,
  waitFor,
  waitForSynced,
  waitForTenantServiceAccount,
  type HostCluster,
  type NatsServer,
  type RunningService,
  type TenantApiServer,
} from "../harness/index.js";

// Per-tenant limits of the sync worker (issue 27, bulkheads): a tenant beyond them gets a Skip
// per object naming the limit, once, and Synced=False, while another tenant syncs as usual.
// Tenant API stand-ins of this suite live on 127.0.0.201-209.
const BIG = { name: "lim-big", address: "127.0.0.201" };
const SMALL = { name: "lim-small", address: "127.0.0.202" };
const LIMITS = { perKind: 5, objectBytes: 64 * 1024, totalBytes: 200_000 };
/** Bytes of host copies a tenant may write per second: three 60 KB objects take two seconds at least. */
const WRITE_BYTES_PER_SECOND = 60_000;
const RESYNC_SECONDS = 4;
const failures = trackFailures();

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let core: CoreV1Api;
let nc: NatsConnection;
let sub: Subscription;
let worker: RunningService;
const decisions: Decision[] = [];
const stands: TenantApiServer[] = [];
const clients = new Map<string, JsonClient>();

const hostNameOf = (tenant: string, name: string) => `${name}-x-data-x-${tenant}`;

async function hostConfigMap(tenant: string, name: string) {
  return core
    .readNamespacedConfigMap({ name: hostNameOf(tenant, name), namespace: `tp-${tenant}` })
    .catch((err: { code?: number }) => {
      if (err.code === 404) return undefined;
      throw err;
    });
}

async function create(tenant: string, kind: "ConfigMap" | "Secret", name: string, bytes: number) {
  const body = {
    apiVersion: "v1",
    kind,
    metadata: { name, namespace: "data" },
    // Secrets carry base64: the stored object is that long either way.
    data: { payload: kind === "Secret" ? Buffer.alloc(bytes * 0.75, 97).toString("base64") : "x".repeat(bytes) },
  };
  await clients.get(tenant)!.request("POST", resourcePath("v1", kind === "Secret" ? "secrets" : "configmaps", "data"), {
    body,
  });
}

/** The worker's tenantplane_sync_received_bytes_total, by side. */
async function receivedBytes(): Promise<{ host: number; tenant: number }> {
  const lines = (await worker.probe("/metrics")).body.split("\n");
  const side = (name: string) => {
    const line = lines.find(
      (l) => l.startsWith("tenantplane_sync_received_bytes_total{") && l.includes(`side="${name}"`),
    );
    return Number(line?.split(" ").at(-1) ?? Number.NaN);
  };
  return { host: side("host"), tenant: side("tenant") };
}

/** The tenant names of the tenant's Secrets copied to the host, sorted, comma-separated. */
async function hostSecretNames(tenant: string): Promise<string> {
  const secrets = await core.listNamespacedSecret({ namespace: `tp-${tenant}`, labelSelector: "tenantplane.io/kind" });
  return secrets.items
    .map((s) => s.metadata?.annotations?.["tenantplane.io/virtual-name"])
    .sort()
    .join(",");
}

const skipsOf = (tenant: string, name: string) =>
  decisions.filter((d) => d.tenant === tenant && d.action === "Skip" && d.tenantRef.name === name);

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "tenant-limits" }), startNats()]);
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
      if (parsed.success && parsed.data.service === "sync-worker" && !decisions.some((d) => d.id === parsed.data.id))
        decisions.push(parsed.data);
    },
  });
  [worker] = await Promise.all([
    fleet.start("sync-worker", {
      RESYNC_INTERVAL_SECONDS: String(RESYNC_SECONDS),
      PARTITIONS: "16",
      LEASE_TTL_SECONDS: "3",
      TENANT_MAX_OBJECTS_PER_KIND: String(LIMITS.perKind),
      TENANT_MAX_OBJECT_BYTES: String(LIMITS.objectBytes),
      TENANT_MAX_BYTES: String(LIMITS.totalBytes),
      TENANT_WRITE_BYTES_PER_SECOND: String(WRITE_BYTES_PER_SECOND),
    }),
    fleet.start("watcher"),
    fleet.start("provisioner"),
    fleet.start("isolation"),
    fleet.start("recorder"),
  ]);
  for (const t of [BIG, SMALL]) stands.push(await provisionTenant(host.kubeConfig, t));
  for (const t of [BIG, SMALL]) {
    await waitForSynced(host.kubeConfig, t.name);
    const client = await tenantJsonClient(host.kubeConfig, t.name);
    clients.set(t.name, client);
    await client.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "data" } },
    });
    await waitForTenantServiceAccount(client, "data");
  }
}, 300_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  sub?.unsubscribe();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  for (const s of stands) await s.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("per-tenant limits", () => {
  it("holds back objects beyond the per-kind, per-object and total limits with one Skip each, Synced=False naming them, while another tenant syncs", async () => {
    const big = BIG.name;
    // The first five ConfigMaps fit (kube-root-ca.crt, in every namespace and never synced, takes no room).
    for (let i = 0; i < LIMITS.perKind; i++) await create(big, "ConfigMap", `c${i}`, 100);
    await waitFor(async () => (await hostConfigMap(big, `c${LIMITS.perKind - 1}`)) ?? undefined, {
      timeoutMs: 60_000,
      description: "the first ConfigMaps on the host",
    });
    await create(big, "ConfigMap", "c5", 100);
    await create(big, "ConfigMap", "huge", LIMITS.objectBytes + 1024);
    // Three Secrets of 60 KB fit in 200 000 bytes with the ConfigMaps; a fourth does not.
    for (const name of ["s1", "s2", "s3", "s4"]) await create(big, "Secret", name, 60_000);
    await create(SMALL.name, "ConfigMap", "fine", 100);

    const expected = [
      { name: "c5", text: `more than ${LIMITS.perKind} ConfigMaps`, value: "TENANT_MAX_OBJECTS_PER_KIND" },
      { name: "huge", text: "over the limit of 64 KiB per object", value: "TENANT_MAX_OBJECT_BYTES" },
      { name: "s4", text: "in total", value: "TENANT_MAX_BYTES" },
    ];
    await waitFor(() => expected.every((e) => skipsOf(big, e.name).length > 0) || undefined, {
      timeoutMs: 60_000,
      description: "a Skip for each object beyond a limit",
    });
    for (const e of expected) {
      const [skip] = skipsOf(big, e.name);
      expect(skip?.reason).toContain(e.text);
      expect(skip?.reason).toContain(`services.sync-worker.env.${e.value}`);
    }
    // The host holds what fits and nothing beyond it.
    expect(await hostConfigMap(big, "c5")).toBeUndefined();
    expect(await hostConfigMap(big, "huge")).toBeUndefined();
    // The Secrets that fit reach the host at the tenant's write pace (60,000 bytes a second).
    await waitFor(async () => (await hostSecretNames(big)) === "s1,s2,s3" || undefined, {
      timeoutMs: 30_000,
      description: "s1-s3 on the host, and no s4",
    });
    expect((await hostConfigMap(big, "c0"))?.data).toEqual({ payload: "x".repeat(100) });

    await waitFor(
      async () => {
        const { condition } = await syncedState(host.kubeConfig, big);
        // Status is rewritten at most every few seconds while only its message changes.
        const all = condition?.reason === "TenantLimitExceeded" && condition.message.startsWith("3 objects not synced");
        return (condition?.status === "False" && all && condition) || undefined;
      },
      { timeoutMs: 30_000, description: "Synced=False TenantLimitExceeded" },
    );
    const { condition } = await syncedState(host.kubeConfig, big);
    expect(condition?.message).toContain(
      `3 objects not synced, over the tenant limits: 1 beyond ${LIMITS.perKind} objects per kind (the chart value services.sync-worker.env.TENANT_MAX_OBJECTS_PER_KIND); 1 beyond 64 KiB per object`,
    );
    for (const e of expected) expect(condition?.message).toContain(e.value);

    // The other tenant is not held back by any of it.
    await waitFor(async () => (await hostConfigMap(SMALL.name, "fine")) ?? undefined, {
      timeoutMs: 30_000,
      description: "the other tenant's ConfigMap on the host",
    });
    await waitForSynced(host.kubeConfig, SMALL.name, 30_000);

    // Several full passes later, still one Skip for each (published once, not on every pass).
    await new Promise((r) => setTimeout(r, (RESYNC_SECONDS * 3 + 1) * 1000));
    for (const e of expected) expect(skipsOf(big, e.name)).toHaveLength(1);
    expect(worker.process.running()).toBe(true);
  });

  it("keeps a copy whose source grows past the per-object limit, and syncs held-back objects once room is free, without a change of their own", async () => {
    const big = BIG.name;
    const client = clients.get(big)!;
    // c1 grows past 64 KiB: one Skip, and its copy stays as it was.
    await client.request("PATCH", resourcePath("v1", "configmaps", "data", "c1"), {
      body: { data: { payload: "y".repeat(LIMITS.objectBytes + 10) } },
      contentType: "application/merge-patch+json",
    });
    await waitFor(() => skipsOf(big, "c1")[0], { timeoutMs: 30_000, description: "the Skip of the grown c1" });
    expect(skipsOf(big, "c1")[0]?.reason).toContain("per object");
    // c1's count is free now: c5, held back by the count and untouched since, is read again and synced.
    const copy = await waitFor(async () => (await hostConfigMap(big, "c5")) ?? undefined, {
      timeoutMs: 30_000,
      description: "c5 synced once room is free",
    });
    await new Promise((r) => setTimeout(r, (RESYNC_SECONDS * 2 + 1) * 1000));
    expect((await hostConfigMap(big, "c1"))?.data).toEqual({ payload: "x".repeat(100) });
    expect(skipsOf(big, "c1")).toHaveLength(1);

    // Deleting a Secret frees bytes: s4, held back by the total, follows the same way.
    await client.request("DELETE", resourcePath("v1", "secrets", "data", "s1"));
    await waitFor(async () => (await hostSecretNames(big)) === "s2,s3,s4" || undefined, {
      timeoutMs: 30_000,
      description: "s4 synced and s1's copy gone once s1 is deleted",
    });
    // What is left over the limits is c1 and huge, each over the per-object limit.
    await waitFor(
      async () => {
        const { condition } = await syncedState(host.kubeConfig, big);
        return (
          (condition?.message.startsWith("2 objects not synced, over the tenant limits: 2 beyond 64 KiB per object") &&
            condition) ||
          undefined
        );
      },
      { timeoutMs: 30_000, description: "Synced naming the two objects still over the per-object limit" },
    );
    expect(copy.data).toEqual({ payload: "x".repeat(100) });
  });
  it("writes a tenant's copies within its byte budget, and reads them back from the host as metadata only", async () => {
    const small = SMALL.name;
    // When each copy first appears on the host, from a metadata-only watch of its own.
    const appeared = new Map<string, number>();
    const watches = (["configmaps", "secrets"] as const).map((plural) =>
      startListWatch({
        client: new JsonClient(host.kubeConfig),
        path: resourcePath("v1", plural, `tp-${small}`),
        apiVersion: "v1",
        kind: plural === "secrets" ? "Secret" : "ConfigMap",
        labelSelector: "tenantplane.io/kind",
        metadataOnly: true,
        logger: createLogger("test", "silent"),
        onEvent: (e) => {
          const name = e.object.metadata.annotations?.["tenantplane.io/virtual-name"];
          if (e.type === "add" && name !== undefined && !appeared.has(name)) appeared.set(name, performance.now());
        },
      }),
    );
    await Promise.all(watches.map((w) => w.synced));
    const before = await receivedBytes();
    for (const name of ["m1", "m2"]) await create(small, "ConfigMap", name, 60_000);
    await create(small, "Secret", "m3", 60_000);
    const copies = await waitFor(
      async () => {
        const found = await Promise.all([hostConfigMap(small, "m1"), hostConfigMap(small, "m2")]);
        const secret = await core
          .readNamespacedSecret({ name: hostNameOf(small, "m3"), namespace: `tp-${small}` })
          .catch(() => undefined);
        return found.every((c) => c !== undefined) && secret !== undefined ? { found, secret } : undefined;
      },
      { timeoutMs: 30_000, description: "the three 60 KB copies on the host" },
    );
    // Paced by bytes: created in the tenant at once, the three copies took two seconds of the
    // tenant's 60,000 bytes a second to reach the host.
    const times = ["m1", "m2", "m3"].map((n) => appeared.get(n)!);
    for (const w of watches) w.stop();
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(1_500);
    // Written whole: the host stores the payload.
    for (const c of copies.found) expect(c?.data?.["payload"]).toHaveLength(60_000);
    expect(Buffer.from(copies.secret.data?.["payload"] ?? "", "base64")).toHaveLength(45_000);
    // Time for the copies' watch events to reach the worker.
    await new Promise((r) => setTimeout(r, 3_000));
    const after = await receivedBytes();
    // It read the three objects from the tenant (180 KB) but from the host neither the answers to
    // its creates nor its copies' watch events whole (360 KB): less than one payload in all.
    expect(after.tenant - before.tenant).toBeGreaterThan(180_000);
    expect(after.host - before.host).toBeLessThan(60_000);
    await waitForSynced(host.kubeConfig, small, 30_000);
  });
  it("says in the Synced condition while its byte budget holds a tenant's writes back, and stops once they are written", async () => {
    const small = SMALL.name;
    // 120 KB of changes a second against 60,000 bytes a second: the writes queue up behind the budget.
    let rounds = 0;
    let stop = false;
    const updating = (async () => {
      while (!stop && rounds < 40) {
        rounds++;
        const payload = String.fromCharCode(97 + (rounds % 26)).repeat(60_000);
        for (const name of ["m1", "m2"]) {
          await clients.get(small)!.request("PATCH", `${resourcePath("v1", "configmaps", "data")}/${name}`, {
            body: { data: { payload } },
            contentType: "application/merge-patch+json",
          });
        }
        await new Promise((r) => setTimeout(r, 1_000));
      }
    })();
    const paced = await waitFor(
      async () => {
        const { condition } = await syncedState(host.kubeConfig, small);
        return condition?.reason === "WritesPaced" ? condition : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "Synced=False WritesPaced" },
    ).finally(() => {
      stop = true;
    });
    await updating;
    expect(paced.status).toBe("False");
    expect(paced.message).toMatch(
      /^host writes of this tenant's objects are paced to 58\.6 KiB\/s \(the worker's TENANT_WRITE_BYTES_PER_SECOND\) and have waited for it for \d+ s/,
    );
    // Once the last change is written the condition says Synced again, and the copies hold it.
    await waitForSynced(host.kubeConfig, small, 30_000);
    const last = String.fromCharCode(97 + (rounds % 26)).repeat(60_000);
    for (const name of ["m1", "m2"]) expect((await hostConfigMap(small, name))?.data?.["payload"]).toBe(last);
  });
});
