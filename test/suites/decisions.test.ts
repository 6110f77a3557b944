import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
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
  // An Event per Decision (the routine series of the default are test/suites/event-policy.test.ts's).
  recorder = await fleet.start("recorder", {
    EVENT_BURST: String(BURST),
    EVENTS_PER_SECOND: String(PER_SECOND),
    ROUTINE_EVENTS: "each",
  });
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
      "created ConfigMap tp-quiet/settings-x-default-x-quiet from tenant ConfigMap default/settings: host ConfigMap absent",
    );
    // The deciding service reports the Event, not the recorder that wrote it.
    expect(byReason.CreateConfigMap?.reportingComponent).toBe("tenantplane.io/sync-worker");
    expect(byReason.CreateConfigMap?.source?.component).toBe("sync-worker");
    expect(byReason.DeleteConfigMap?.type).toBe("Warning");
    expect(byReason.DeleteConfigMap?.involvedObject.uid).toBeTruthy();
  });

  it("explains a Fail as a Warning naming the refused write and the host API's answer", async () => {
    const error = { code: 403, reason: "Forbidden", message: "exceeded quota: q, requested: count/configmaps=1" };
    await publish({
      ...decision("quiet", "Fail", "refused", `Forbidden: ${error.message}`),
      error: { ...error, attempted: "Create" },
    } as ReturnType<typeof decision>);
    const event = await waitFor(async () => (await eventsFor("quiet")).find((e) => e.reason === "FailConfigMap"), {
      description: "the FailConfigMap Event",
    });
    expect(event.type).toBe("Warning");
    expect(event.message).toBe(
      `host refused to create ConfigMap tp-quiet/refused-x-default-x-quiet from tenant ConfigMap default/refused: Forbidden: ${error.message}`,
    );
    expect(event.source?.component).toBe("sync-worker");
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

  it("rate-limits a noisy tenant's Event writes without discarding a single decision", async () => {
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
    // Every decision is counted in some Event: repeats by count, the many distinct ones combined.
    const events = await waitFor(
      async () => {
        const list = await eventsFor("noisy");
        return list.reduce((n, e) => n + (e.count ?? 0), 0) === total ? list : undefined;
      },
      { description: `Event counts of tenant noisy adding up to ${total}`, timeoutMs: 60_000 },
    );
    const elapsedSeconds = (Date.now() - started) / 1000;
    expect(seen).toHaveLength(total);
    expect(events.length).toBeLessThanOrEqual(BURST + Math.ceil(elapsedSeconds * PER_SECOND) + 1);
    expect(events.some((e) => e.message?.startsWith("(combined from similar events)"))).toBe(true);
    const info = await (await jetstreamManager(nc)).streams.info("DECISIONS");
    expect(info.state.messages).toBeGreaterThanOrEqual(total);
  });

  it("turns every decision into an Event after Event writes failed for a while", async () => {
    await createTenant("flaky");
    // A failing admission check on Events, as a broken webhook would be.
    const admission = KubernetesObjectApi.makeApiClient(host.kubeConfig);
    const policy = {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "refuse-flaky-events" },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["events"] },
          ],
        },
        validations: [{ expression: "object.involvedObject.name != 'flaky'", message: "events are down" }],
      },
    };
    const binding = {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: "refuse-flaky-events" },
      spec: { policyName: "refuse-flaky-events", validationActions: ["Deny"] },
    };
    await admission.create(policy as KubernetesObject);
    await admission.create(binding as KubernetesObject);
    // The policy takes a moment to load: wait until an Event about flaky is refused.
    await waitFor(
      async () => {
        try {
          await core.createNamespacedEvent({
            namespace: "default",
            body: {
              metadata: { generateName: "probe-" },
              involvedObject: { kind: "TenantCluster", name: "flaky" },
              reason: "Probe",
              message: "probe",
            },
          });
          return false;
        } catch {
          return true;
        }
      },
      { description: "Events about flaky refused" },
    );
    const total = 14;
    for (let i = 0; i < total; i++)
      await publish(decision("flaky", "Create", `cm-${i}`, `host ConfigMap absent (${i})`));
    await new Promise((r) => setTimeout(r, 15_000));
    const decisionEvents = async () => (await eventsFor("flaky")).filter((e) => e.reason === "CreateConfigMap");
    expect(await decisionEvents()).toHaveLength(0);
    await admission.delete(binding as KubernetesObject);
    const events = await waitFor(
      async () => {
        const list = await decisionEvents();
        return list.reduce((n, e) => n + (e.count ?? 0), 0) >= total ? list : undefined;
      },
      { description: `${total} decisions of tenant flaky counted in Events`, timeoutMs: 120_000 },
    );
    expect(events.reduce((n, e) => n + (e.count ?? 0), 0)).toBe(total);
  });

  it("records a redelivered or republished decision once, by id", async () => {
    const d = decision("quiet", "Update", "twice", "content changed");
    // Without a message id the stream stores both copies, as after the duplicate window.
    await js.publish(`tenantplane.decisions.quiet.ConfigMap.Update`, JSON.stringify(d));
    await js.publish(`tenantplane.decisions.quiet.ConfigMap.Update`, JSON.stringify(d));
    await publish(decision("quiet", "Update", "marker", "published after the duplicate"));
    await waitFor(async () => (await eventsFor("quiet")).find((e) => e.message?.includes("default/marker")), {
      description: "the marker decision's Event",
    });
    const twice = (await eventsFor("quiet")).filter((e) => e.message?.includes("default/twice"));
    expect(twice.map((e) => e.count)).toEqual([1]);
  });

  it("records the Delete of a tenant whose TenantCluster is already gone, naming the tenant", async () => {
    await publish(decision("vanished", "Delete", "old", "tenant source is gone"));
    const event = await waitFor(async () => (await eventsFor("vanished")).find((e) => e.reason === "DeleteConfigMap"), {
      description: "the Delete of tenant vanished as an Event",
    });
    expect(event.type).toBe("Warning");
    expect(event.metadata?.namespace).toBe("default");
    expect(event.message).toContain("tenant vanished: its TenantCluster no longer exists");
  });

  it("drains and exits 0 on SIGTERM", async () => {
    await recorder.stop();
    expect(await recorder.process.exited).toBe(0);
  });

  it("exits 0 on a SIGTERM that comes while it still waits for JetStream at start-up", async () => {
    // A NATS server without JetStream keeps the service in start-up (as a cluster still electing
    // its JetStream leader would), not ready, for as long as it runs.
    const plain = await startNats({ jetStream: false });
    try {
      const starting = await fleet.start("recorder", { NATS_URL: plain.url });
      await waitFor(() => readFileSync(starting.process.logPath, "utf8").includes("JetStream not available yet"), {
        description: "the recorder waiting for JetStream",
      });
      expect((await starting.probe("/readyz")).status).toBe(503);
      await starting.stop();
      expect(await starting.process.exited).toBe(0);
      expect(readFileSync(starting.process.logPath, "utf8")).toContain('"msg":"stopped"');
    } finally {
      await plain.stop({ keepLogs: failures.failed() });
    }
  });
});
