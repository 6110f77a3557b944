import { CoordinationV1Api, KubernetesObjectApi, type KubernetesObject, type V1Lease } from "@kubernetes/client-node";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import type { TenantChange } from "@tenantplane/messaging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  logTail,
  startHostCluster,
  startNats,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type RunningService,
} from "../harness/index.js";

const failures = trackFailures();
const NAMESPACE = "tenantplane-system";
const LEASE = "tenantplane-watcher";
const LEASE_SECONDS = 4;
const watcherEnv = {
  POD_NAMESPACE: NAMESPACE,
  LEASE_DURATION_SECONDS: String(LEASE_SECONDS),
  RESYNC_INTERVAL_SECONDS: "3600",
};

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let leases: CoordinationV1Api;
let nc: NatsConnection;
let js: JetStreamClient;
let first: RunningService;
let second: RunningService;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z") as unknown as Date;
const holder = async () =>
  (await leases.readNamespacedLease({ name: LEASE, namespace: NAMESPACE })).spec?.holderIdentity ?? "";

/** Tenant-change messages stored for `tenant`, as the consumers would get them. */
async function changesOf(tenant: string): Promise<TenantChange[]> {
  const reader = await js.consumers.get("TENANTS", { filter_subjects: [`tenantplane.tenants.${tenant}.changed`] });
  const out: TenantChange[] = [];
  for await (const m of await reader.fetch({ max_messages: 1000, expires: 1500 })) out.push(m.json<TenantChange>());
  return out;
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "leader-election" }), startNats()]);
  await installCrds(host.kubeConfig, crdManifests());
  const api = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } } as KubernetesObject);
  // A tenant whose profile exists before any watcher starts.
  await api.create({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "IsolationProfile",
    metadata: { name: "strict" },
    spec: {},
  } as KubernetesObject);
  await api.create({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: "gated" },
    spec: { isolationProfileRef: { name: "strict" } },
  } as KubernetesObject);
  leases = host.kubeConfig.makeApiClient(CoordinationV1Api);
  fleet = new ServiceFleet({ kubeconfigPath: host.kubeconfigPath, natsUrl: nats.url });
  nc = await connect({ servers: nats.url });
  js = jetstream(nc);
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("watcher leader election", () => {
  it("never takes a lease over from a live holder whose clock is an hour behind", async () => {
    // The holder renews faithfully, but stamps renewTime from a clock an hour slow.
    const skew = 3600_000;
    const created = await leases.createNamespacedLease({
      namespace: NAMESPACE,
      body: {
        metadata: { name: LEASE, namespace: NAMESPACE },
        spec: {
          holderIdentity: "skewed-holder",
          leaseDurationSeconds: LEASE_SECONDS,
          renewTime: microTime(Date.now() - skew),
        },
      },
    });
    let renewing = true;
    let lease: V1Lease = created;
    const renewer = (async () => {
      while (renewing) {
        await sleep(1_000);
        if (!renewing) break;
        lease = await leases.replaceNamespacedLease({
          name: LEASE,
          namespace: NAMESPACE,
          body: { ...lease, spec: { ...lease.spec, renewTime: microTime(Date.now() - skew) } },
        });
      }
    })();
    first = await fleet.start("watcher", watcherEnv);
    await sleep(3 * LEASE_SECONDS * 1000);
    renewing = false;
    await renewer;
    expect(await holder()).toBe("skewed-holder");

    // Once the holder stops renewing, the watcher takes over after one lease duration of its own clock.
    const stopped = Date.now();
    await waitFor(async () => (await holder()) === first.name, {
      description: `${first.name} holding the lease`,
      timeoutMs: 20_000,
    });
    expect(Date.now() - stopped).toBeGreaterThanOrEqual(LEASE_SECONDS * 1000 - 1_000);
  });

  it("publishes a tenant once at start, not again for the profiles and policies listed with it", async () => {
    const changes = await waitFor(
      async () => {
        const list = await changesOf("gated");
        return list.length > 0 ? list : undefined;
      },
      { description: "the watcher's first message for tenant gated" },
    );
    await sleep(2_000);
    expect((await changesOf("gated")).map((c) => c.reason)).toEqual(["TenantChanged"]);
    expect(changes[0]?.reason).toBe("TenantChanged");

    // A real change of the profile still reaches its tenant.
    const api = KubernetesObjectApi.makeApiClient(host.kubeConfig);
    await api.patch(
      {
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "IsolationProfile",
        metadata: { name: "strict", labels: { touched: "yes" } },
      } as KubernetesObject,
      undefined,
      undefined,
      "e2e",
      undefined,
      "application/merge-patch+json",
    );
    await waitFor(async () => (await changesOf("gated")).some((c) => c.reason === "IsolationProfileChanged"), {
      description: "IsolationProfileChanged for tenant gated",
    });
  });

  it("hands over from a frozen leader, which exits non-zero when it wakes and never steals the lease back", async () => {
    second = await fleet.start("watcher", watcherEnv);
    await sleep(2 * LEASE_SECONDS * 1000);
    expect(await holder()).toBe(first.name);

    process.kill(-first.process.pid, "SIGSTOP");
    const frozen = Date.now();
    await waitFor(async () => (await holder()) === second.name, {
      description: `${second.name} taking over from the frozen ${first.name}`,
      timeoutMs: 30_000,
    });
    const handover = Date.now() - frozen;
    expect(handover).toBeLessThan(4 * LEASE_SECONDS * 1000);

    process.kill(-first.process.pid, "SIGCONT");
    const code = await Promise.race([first.process.exited, sleep(15_000).then(() => "still running" as const)]);
    expect(code, logTail(first.process.logPath)).toBe(1);
    expect(logTail(first.process.logPath, 200)).toMatch(/leadership lost; exiting/);
    await sleep(2 * LEASE_SECONDS * 1000);
    expect(await holder()).toBe(second.name);
  });

  it("releases the lease on SIGTERM so a successor needs no expiry", async () => {
    const third = await fleet.start("watcher", watcherEnv);
    await second.stop();
    expect(await second.process.exited).toBe(0);
    const released = Date.now();
    await waitFor(async () => (await holder()) === third.name, {
      description: `${third.name} taking over a released lease`,
      timeoutMs: 15_000,
    });
    expect(Date.now() - released).toBeLessThan(LEASE_SECONDS * 1000);
  });
});
