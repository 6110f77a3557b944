import { randomUUID } from "node:crypto";
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  type CoreV1Event,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  startHostCluster,
  startNats,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type RunningService,
} from "../harness/index.js";

const failures = trackFailures();
const BURST = 20;
const PER_SECOND = 2;

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let recorder: RunningService;
let core: CoreV1Api;
let nc: NatsConnection;
let js: JetStreamClient;

function decision(tenant: string, action: string, name: string, reason: string) {
  return {
    id: randomUUID(),
    time: new Date().toISOString(),
    tenant,
    service: "sync-worker",
    action,
    kind: "ConfigMap",
    tenantRef: { namespace: "default", name },
    hostRef: { namespace: `tp-${tenant}`, name: `${name}-x-default-x-${tenant}` },
    reason,
  };
}

async function publish(d: ReturnType<typeof decision>): Promise<void> {
  await js.publish(`tenantplane.decisions.${d.tenant}.${d.kind}.${d.action}`, JSON.stringify(d), { msgID: d.id });
}

async function eventsFor(tenant: string): Promise<CoreV1Event[]> {
  const list = await core.listEventForAllNamespaces({
    fieldSelector: `involvedObject.kind=TenantCluster,involvedObject.name=${tenant}`,
  });
  return list.items;
}

async function createTenant(name: string): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  const tc = {
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name },
    spec: {},
  } as KubernetesObject;
  await api.patch(tc, undefined, undefined, "e2e", true, PatchStrategy.ServerSideApply);
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "decisions" }), startNats()]);
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  await installCrds(host.kubeConfig, crdManifests());
  for (const t of ["quiet", "noisy"]) await createTenant(t);
  fleet = new ServiceFleet({ kubeconfigPath: host.kubeconfigPath, natsUrl: nats.url });
  recorder = await fleet.start("recorder", { EVENT_BURST: String(BURST), EVENTS_PER_SECOND: String(PER_SECOND) });
  await waitFor(async () => (await recorder.probe("/readyz")).status === 200, { description: "recorder ready" });
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

describe("recorder", () => {
  it("explains decisions as Events on the TenantCluster: Delete as Warning, the rest Normal", async () => {
    await publish(decision("quiet", "Create", "settings", "host ConfigMap absent"));
    await publish(decision("quiet", "Delete", "old", "tenant source is gone"));
    const events = await waitFor(
      async () => {
        const list = await eventsFor("quiet");
        return list.length >= 2 ? list : undefined;
      },
      { description: "two events" },
    );
    const byReason = Object.fromEntries(events.map((e) => [e.reason, e]));
    expect(byReason.CreateConfigMap?.type).toBe("Normal");
    expect(byReason.CreateConfigMap?.message).toBe(
      "ConfigMap default/settings -> host tp-quiet/settings-x-default-x-quiet: host ConfigMap absent [sync-worker]",
    );
    expect(byReason.DeleteConfigMap?.type).toBe("Warning");
    expect(byReason.DeleteConfigMap?.involvedObject.uid).toBeTruthy();
  });

  it("folds repeats of the same decision into one Event with a count", async () => {
    for (let i = 0; i < 5; i++)
      await publish(decision("quiet", "Skip", "taken", "held by foreign object (not managed by tenantplane)"));
    const event = await waitFor(
      async () => (await eventsFor("quiet")).find((e) => e.reason === "SkipConfigMap" && e.count === 5),
      {
        description: "one SkipConfigMap event with count 5",
      },
    );
    expect((await eventsFor("quiet")).filter((e) => e.reason === "SkipConfigMap")).toHaveLength(1);
    expect(event.count).toBe(5);
  });

  it("rate-limits a noisy tenant while every decision stays on the stream for other subscribers", async () => {
    const total = 200;
    const seen: string[] = [];
    const sub = nc.subscribe("tenantplane.decisions.noisy.>");
    const collecting = (async () => {
      for await (const m of sub) {
        seen.push(m.subject);
        if (seen.length === total) break;
      }
    })();
    const started = Date.now();
    for (let i = 0; i < total; i++)
      await publish(decision("noisy", "Create", `cm-${i}`, `host ConfigMap absent (${i})`));
    await collecting;
    await waitFor(
      async () =>
        /tenantplane_recorder_events_total\{[^}]*outcome="dropped"[^}]*\} [1-9]/.test(
          (await recorder.probe("/metrics")).body,
        ),
      { description: "dropped events counted" },
    );
    const created = (await eventsFor("noisy")).length;
    const elapsedSeconds = (Date.now() - started) / 1000;
    expect(seen).toHaveLength(total);
    expect(created).toBeGreaterThanOrEqual(BURST);
    expect(created).toBeLessThanOrEqual(BURST + Math.ceil(elapsedSeconds * PER_SECOND) + 1);
    const info = await (await jetstreamManager(nc)).streams.info("DECISIONS");
    expect(info.state.messages).toBeGreaterThanOrEqual(total);
  });

  it("drains and exits 0 on SIGTERM", async () => {
    await recorder.stop();
    expect(await recorder.process.exited).toBe(0);
  });
});
