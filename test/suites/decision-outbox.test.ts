import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { Objects } from "@tenantplane/kube";
import { consumers, publishTenantChange, type Decision, type PlannedDecision } from "@tenantplane/messaging";
import {
  applyTracked,
  createTracked,
  decisionRecordAnnotation,
  decisionRecords,
  deleteTracked,
  publishPendingDeletes,
  publishRecordedDecision,
  recordedDecisionOf,
  tenantDecider,
} from "@tenantplane/service";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  createArtifactsDir,
  stablePort,
  installCrds,
  releaseArtifactsDir,
  startHostCluster,
  startNats,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type RunningService,
  StopWaiting,
} from "../harness/index.js";
import { startProcess, type ManagedProcess } from "../harness/process.js";

const failures = trackFailures();
const fixture = fileURLToPath(new URL("./fixtures/outbox-service.ts", import.meta.url));
// Publishes used to be given up after about 20 s of retries; 45 s is well past that while
// keeping the suite short. OUTAGE_SECONDS=300 runs a five-minute outage (it passes too).
const OUTAGE_SECONDS = Number(process.env.OUTAGE_SECONDS ?? 45);

let host: HostCluster;
let nats: NatsServer;
let nc: NatsConnection;
let js: JetStreamClient;
let core: CoreV1Api;
let fleet: ServiceFleet;
const logsDir = createArtifactsDir("outbox");
const fixtures: ManagedProcess[] = [];

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "outbox" }), startNats()]);
  await installCrds(host.kubeConfig, crdManifests());
  core = host.kubeConfig.makeApiClient(CoreV1Api);
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  js = jetstream(nc);
  fleet = new ServiceFleet({ kubeconfigPath: host.kubeconfigPath, natsUrl: nats.url });
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await Promise.all(fixtures.map((p) => p.stop()));
  releaseArtifactsDir(logsDir, keepLogs);
  await nc?.close();
  await fleet?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

async function startFixture(env: NodeJS.ProcessEnv = {}): Promise<ManagedProcess> {
  const id = `outbox-fixture-${fixtures.length + 1}`;
  const proc = startProcess({
    name: id,
    command: process.execPath,
    args: ["--conditions=@tenantplane/source", "--import", "tsx", fixture],
    logPath: join(logsDir, `${id}.log`),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KUBECONFIG: host.kubeconfigPath,
      NATS_URL: nats.url,
      HTTP_PORT: String(await stablePort()),
      POD_NAME: id,
      LOG_LEVEL: "debug",
      ...env,
    },
  });
  fixtures.push(proc);
  return proc;
}

/** Every Decision of `tenant` stored in the DECISIONS stream, read as an outside subscriber would. */
async function storedDecisions(tenant: string): Promise<Decision[]> {
  const reader = await js.consumers.get("DECISIONS", { filter_subjects: [`tenantplane.decisions.${tenant}.>`] });
  const out: Decision[] = [];
  for await (const m of await reader.fetch({ max_messages: 1000, expires: 1500 })) out.push(m.json<Decision>());
  return out;
}

/** Resolves once the service has declared its streams and consumers and says it is ready. */
async function ready(service: RunningService): Promise<void> {
  await waitFor(
    async () => {
      service.process.assertRunning();
      return (await service.probe("/readyz").catch(() => ({ status: 0 }))).status === 200;
    },
    {
      description: `${service.name} /readyz`,
      intervalMs: 200,
    },
  );
}

function facts(decisions: readonly Decision[]): string[] {
  return decisions.map((d) => `${d.action} ${d.kind} ${d.hostRef.namespace}/${d.hostRef.name}`).sort();
}

describe("Decisions are published only for tenantplane's own changes", () => {
  it("reports nothing while a concurrent writer bumps resourceVersion, and one Update for a real change", async () => {
    const objects = new Objects(host.kubeConfig, "tenantplane-outbox-test");
    const published: PlannedDecision[] = [];
    const decide = tenantDecider("busy", async (d) => {
      published.push(d);
    });
    const desired = (value: string) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "busy-settings",
        namespace: "default",
        labels: { "app.kubernetes.io/managed-by": "tenantplane" },
      },
      data: { value },
    });
    await applyTracked(objects, desired("1"), { decide, reason: "settings" });
    expect(published.map((d) => d.action)).toEqual(["Create"]);

    // Someone else keeps writing their own label onto the same object.
    const other = KubernetesObjectApi.makeApiClient(host.kubeConfig);
    let writing = true;
    let bumps = 0;
    const bump = () =>
      other.patch(
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "busy-settings", namespace: "default", labels: { bump: String(bumps++) } },
        },
        undefined,
        undefined,
        "someone-else",
        undefined,
        PatchStrategy.MergePatch,
      );
    const writer = (async () => {
      while (writing) {
        await bump();
        await new Promise((r) => setTimeout(r, 15));
      }
    })();
    const versions = new Set<string>();
    for (let i = 0; i < 10; i++) {
      // At least one foreign write between two passes, more while a pass runs.
      await bump();
      const { action, object } = await applyTracked(objects, desired("1"), { decide, reason: "settings" });
      expect(action).toBeUndefined();
      versions.add((object as KubernetesObject).metadata?.resourceVersion ?? "");
    }
    const { action } = await applyTracked(objects, desired("2"), { decide, reason: "settings changed" });
    writing = false;
    await writer;
    expect(bumps).toBeGreaterThanOrEqual(10);
    expect(versions.size).toBe(10);
    expect(action).toBe("Update");
    expect(published.map((d) => `${d.action}: ${d.reason}`)).toEqual(["Create: settings", "Update: settings changed"]);
    // The object keeps the record of the write that made it what it is.
    const stored = await core.readNamespacedConfigMap({ name: "busy-settings", namespace: "default" });
    expect(recordedDecisionOf(stored, "tenantplane-outbox-test")).toMatchObject({
      id: published[1]!.id,
      action: "Update",
      reason: "settings changed",
    });
  });
});

describe("no Decision is lost", () => {
  it("creates once, and publishes a Decision a crashed create left on its object with the recorded id", async () => {
    const objects = new Objects(host.kubeConfig, "tenantplane-outbox-test");
    const published: PlannedDecision[] = [];
    const decide = tenantDecider("once", async (d) => {
      published.push(d);
    });
    const secret = (name: string) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: "default" },
      stringData: { key: "value" },
    });
    expect(await createTracked(objects, secret("once-pki"), { decide, reason: "tenant PKI" })).toBeDefined();
    expect(await createTracked(objects, secret("once-pki"), { decide, reason: "tenant PKI" })).toBeUndefined();
    expect(published.map((d) => `${d.action} ${d.hostRef.name}`)).toEqual(["Create once-pki"]);
    expect(published[0]?.id).toBeTruthy();

    // What a create leaves behind when its service dies before publishing: a record nobody here published.
    const leftBehind = async (name: string, time: Date) => {
      const recorded = { id: randomUUID(), time: time.toISOString(), action: "Create", reason: "tenant PKI" };
      const left = await core.createNamespacedSecret({
        namespace: "default",
        body: {
          metadata: {
            name,
            annotations: { [decisionRecordAnnotation("tenantplane-outbox-test")]: JSON.stringify(recorded) },
          },
          stringData: { key: "value" },
        },
      });
      return { recorded, left: { ...left, apiVersion: "v1", kind: "Secret" } };
    };
    const recent = await leftBehind("crashed-pki", new Date(Date.now() - 30_000));
    await publishRecordedDecision(objects, recent.left, decide);
    expect(published.at(-1)).toMatchObject({
      action: "Create",
      hostRef: { name: "crashed-pki" },
      id: recent.recorded.id,
      time: recent.recorded.time,
    });
    // Published once by this process; the record stays on the object and costs no write.
    await publishRecordedDecision(objects, recent.left, decide);
    expect(published.filter((d) => d.id === recent.recorded.id)).toHaveLength(1);
    const stored = await core.readNamespacedSecret({ name: "crashed-pki", namespace: "default" });
    expect(stored.metadata?.resourceVersion).toBe(recent.left.metadata?.resourceVersion);

    // Past the duplicate window a republish would be stored twice: a record that old is taken as published.
    const old = await leftBehind("ancient-pki", new Date(Date.now() - decisionRecords.windowMs - 1_000));
    await publishRecordedDecision(objects, old.left, decide);
    expect(published.some((d) => d.id === old.recorded.id)).toBe(false);
  });

  it("publishes the Decision of a write whose service was SIGKILLed before publishing, once", async () => {
    const crashing = await startFixture({ TENANTPLANE_FAULT_KILL_AFTER_HOST_WRITE: "1" });
    // Connected is not enough: until the fixture has declared the stream, a publish has no responder.
    const jsm = await js.jetstreamManager();
    const { stream, durable } = consumers.syncWorker;
    await waitFor(
      () =>
        jsm.consumers.info(stream, durable).then(
          () => true,
          () => undefined,
        ),
      { timeoutMs: 60_000, description: "the fixture's stream and consumer declared" },
    );
    await publishTenantChange(js, { tenant: "crash", reason: "TenantChanged" });
    expect(await crashing.exited).toBeNull();

    const written = await core.readNamespacedConfigMap({ name: "crash-first", namespace: "default" });
    const recorded = recordedDecisionOf(written);
    expect(recorded).toMatchObject({ action: "Create", reason: "first ConfigMap of crash" });
    expect(await storedDecisions("crash")).toEqual([]);

    // A fresh replica gets the unacked message once ack_wait passes, and publishes the recorded Decision first.
    await startFixture();
    const decisions = await waitFor(
      async () => {
        const stored = await storedDecisions("crash");
        return stored.length >= 2 ? stored : undefined;
      },
      { description: "both Decisions of tenant crash", timeoutMs: 90_000, intervalMs: 1_000 },
    );
    expect(facts(decisions)).toEqual(["Create ConfigMap default/crash-first", "Create ConfigMap default/crash-second"]);
    const first = decisions.find((d) => d.hostRef.name === "crash-first")!;
    expect(first.id).toBe(recorded!.id);
    expect(first.time).toBe(recorded!.time);
    // Each ConfigMap keeps the record of its write, under the id that was stored.
    for (const name of ["crash-first", "crash-second"]) {
      const cm = await core.readNamespacedConfigMap({ name, namespace: "default" });
      expect(recordedDecisionOf(cm)?.id).toBe(decisions.find((d) => d.hostRef.name === name)?.id);
    }
    // Another pass over the same tenant changes nothing and says nothing.
    await publishTenantChange(js, { tenant: "crash", reason: "Resync" });
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await storedDecisions("crash")).toHaveLength(2);
  });

  it("loses no Decision when the real provisioner and isolation are SIGKILLed right after a host write", async () => {
    const tenant = "killed";
    const namespace = `tp-${tenant}`;
    const api = KubernetesObjectApi.makeApiClient(host.kubeConfig);
    await api.create({
      apiVersion: "tenantplane.io/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: tenant },
      spec: {},
    } as KubernetesObject);
    // Runs `name` with the fault hook until it dies after its first tracked host write. It may
    // meet the tenant's message still in the stream and die before it ever reports healthy.
    const runUntilKilled = async (name: "provisioner" | "isolation") => {
      try {
        const service = await fleet.start(name, { TENANTPLANE_FAULT_KILL_AFTER_HOST_WRITE: "1" });
        await ready(service);
        await publishTenantChange(js, { tenant, reason: "TenantChanged" });
        await service.process.exited;
      } catch (err) {
        if (!(err instanceof StopWaiting)) throw err;
      }
    };

    // The provisioner dies right after creating the namespace, before publishing its Create.
    await runUntilKilled("provisioner");
    const created = (await core.readNamespace({ name: namespace })) as KubernetesObject;
    const provisionerRecord = recordedDecisionOf(created, "tenantplane-provisioner");
    expect(provisionerRecord).toMatchObject({ action: "Create" });

    // Isolation dies right after its first write into that namespace.
    await runUntilKilled("isolation");
    const isolationWrites = [
      (await core.readNamespace({ name: namespace })) as KubernetesObject,
      ...(await new Objects(host.kubeConfig, "e2e").list("networking.k8s.io/v1", "NetworkPolicy", { namespace })),
    ];
    const isolationRecord = isolationWrites
      .map((o) => recordedDecisionOf(o, "tenantplane-isolation"))
      .find((r) => r !== undefined);
    expect(isolationRecord).toBeDefined();
    // Neither service's record overwrote the other's.
    expect(recordedDecisionOf(isolationWrites[0]!, "tenantplane-provisioner")?.id).toBe(provisionerRecord!.id);
    // Nothing published by either yet (the fixture service of the test before also answers every tenant).
    const byServices = (decisions: Decision[]) =>
      decisions.filter((d) => d.service === "provisioner" || d.service === "isolation");
    expect(byServices(await storedDecisions(tenant))).toEqual([]);

    await Promise.all([fleet.start("provisioner"), fleet.start("isolation")]);
    await publishTenantChange(js, { tenant, reason: "Resync" });
    const decisions = await waitFor(
      async () => {
        const stored = await storedDecisions(tenant);
        const ids = new Set(stored.map((d) => d.id));
        return ids.has(provisionerRecord!.id) && ids.has(isolationRecord!.id) ? stored : undefined;
      },
      { description: "the Decisions both killed services recorded", timeoutMs: 120_000, intervalMs: 1_000 },
    );
    expect(decisions.find((d) => d.id === provisionerRecord!.id)).toMatchObject({
      service: "provisioner",
      action: "Create",
      kind: "Namespace",
      hostRef: { namespace: "", name: namespace },
      time: provisionerRecord!.time,
    });
    expect(decisions.find((d) => d.id === isolationRecord!.id)).toMatchObject({
      service: "isolation",
      action: isolationRecord!.action,
      time: isolationRecord!.time,
    });
    expect(new Set(byServices(decisions).map((d) => d.id)).size).toBe(byServices(decisions).length);
    // The restarted services published each record once more at most, and the stream kept one of each.
    const after = (await core.readNamespace({ name: namespace })) as KubernetesObject;
    expect(recordedDecisionOf(after, "tenantplane-provisioner")?.id).toBe(provisionerRecord!.id);
  });

  it("publishes a Delete recorded on its anchor only when the delete happened", async () => {
    const objects = new Objects(host.kubeConfig, "tenantplane-outbox-test");
    const published: PlannedDecision[] = [];
    const decide = tenantDecider("deleting", async (d) => {
      published.push(d);
    });
    const anchor = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "anchor" } },
    });
    const anchorObject = { ...anchor, apiVersion: "v1", kind: "ConfigMap" };
    const pendingOnAnchor = async () =>
      Object.keys(
        (await core.readNamespacedConfigMap({ name: "anchor", namespace: "default" })).metadata?.annotations ?? {},
      );

    await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "doomed" } } });
    const target = { apiVersion: "v1", kind: "ConfigMap", name: "doomed", namespace: "default" };
    expect(await deleteTracked(objects, target, { decide, reason: "no longer wanted", anchor: anchorObject })).toBe(
      true,
    );
    expect(await deleteTracked(objects, target, { decide, reason: "no longer wanted", anchor: anchorObject })).toBe(
      false,
    );
    expect(published.map((d) => `${d.action} ${d.hostRef.name}`)).toEqual(["Delete doomed"]);
    expect(await pendingOnAnchor()).toEqual([]);

    // What a service killed between a delete and its publish leaves on the anchor, and one
    // killed before its delete: only the first is a fact.
    const gone = await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "gone" } } });
    const kept = await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "kept" } } });
    const record = (name: string, uid: string, id: string) =>
      JSON.stringify({
        id,
        time: "2026-01-01T00:00:00.000Z",
        action: "Delete",
        reason: `${name} no longer wanted`,
        target: { apiVersion: "v1", kind: "ConfigMap", name, namespace: "default", uid },
      });
    const goneId = "aaaaaaaa-0000-0000-0000-000000000001";
    await core.patchNamespacedConfigMap(
      {
        name: "anchor",
        namespace: "default",
        body: {
          metadata: {
            annotations: {
              "tenantplane.io/pending-delete.gone": record("gone", gone.metadata!.uid!, goneId),
              "tenantplane.io/pending-delete.kept": record(
                "kept",
                kept.metadata!.uid!,
                "bbbbbbbb-0000-0000-0000-000000000002",
              ),
            },
          },
        },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedConfigMap({ name: "gone", namespace: "default" });
    published.length = 0;
    const withPending = await core.readNamespacedConfigMap({ name: "anchor", namespace: "default" });
    expect(await publishPendingDeletes(objects, { ...withPending, apiVersion: "v1", kind: "ConfigMap" }, decide)).toBe(
      1,
    );
    expect(published).toEqual([
      expect.objectContaining({ action: "Delete", hostRef: { namespace: "default", name: "gone" }, id: goneId }),
    ]);
    expect(await pendingOnAnchor()).toEqual([]);
    const survivor = await core.readNamespacedConfigMap({ name: "kept", namespace: "default" });
    expect(survivor.metadata?.uid).toBe(kept.metadata?.uid);
  });

  it(
    `publishes every Decision of writes made during a ${OUTAGE_SECONDS} s NATS outage, each once`,
    async () => {
      const tenant = "outage";
      await Promise.all([fleet.start("provisioner"), fleet.start("isolation")]);
      const api = KubernetesObjectApi.makeApiClient(host.kubeConfig);
      await api.create({
        apiVersion: "tenantplane.io/v1alpha1",
        kind: "TenantCluster",
        metadata: { name: tenant },
        spec: {},
      } as KubernetesObject);
      await publishTenantChange(js, { tenant, reason: "TenantChanged" });
      await waitFor(() => core.readNamespace({ name: `tp-${tenant}` }), {
        description: `namespace tp-${tenant}`,
        intervalMs: 20,
      });
      await nats.stopServer();
      // The provisioner writes the tenant's PKI while NATS is away; its handler then holds
      // the message and retries the Decision until NATS is back.
      await waitFor(() => core.readNamespacedSecret({ name: `${tenant}-pki`, namespace: `tp-${tenant}` }), {
        description: "the PKI Secret, written during the outage",
        timeoutMs: 60_000,
      });
      await new Promise((r) => setTimeout(r, OUTAGE_SECONDS * 1000));
      await nats.startAgain();

      const expected = [
        `Create Namespace /tp-${tenant}`,
        `Create Secret tp-${tenant}/${tenant}-pki`,
        `Create Secret tp-${tenant}/${tenant}-kubeconfig`,
        `Create StatefulSet tp-${tenant}/k3s`,
        `Create NetworkPolicy tp-${tenant}/tenantplane-default-deny`,
      ];
      const decisions = await waitFor(
        async () => {
          const stored = await storedDecisions(tenant);
          const have = new Set(facts(stored));
          return expected.every((e) => have.has(e)) ? stored : undefined;
        },
        { description: "the Decisions of writes made during the outage", timeoutMs: 120_000, intervalMs: 2_000 },
      );
      // Let any redelivery run its course, then check that nothing was published twice.
      await new Promise((r) => setTimeout(r, 5_000));
      const settled = await storedDecisions(tenant);
      expect(new Set(settled.map((d) => d.id)).size).toBe(settled.length);
      expect(new Set(facts(settled)).size).toBe(settled.length);
      expect(settled.length).toBeGreaterThanOrEqual(decisions.length);
    },
    (OUTAGE_SECONDS + 240) * 1000,
  );
});
