import { readFileSync } from "node:fs";
import { CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { DecisionSchema, subjects, whenJetStreamAnswers, type Decision } from "@tenantplane/messaging";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  setLoadBalancerIngress,
  startHostCluster,
  startNatsCluster,
  startTenantStandIn,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsCluster,
  type RunningService,
  type TenantApiServer,
} from "../harness/index.js";

// Three NATS nodes, streams at three replicas, and the services as processes. The
// faults are a node dying (SIGKILL) while TenantClusters are created and deleted: first
// the JetStream meta leader, then the leader of DECISIONS.

const failures = trackFailures();
const example = (file: string) =>
  YAML.parse(readFileSync(new URL(`../../examples/${file}`, import.meta.url), "utf8")) as KubernetesObject;

let host: HostCluster;
let nats: NatsCluster;
let fleet: ServiceFleet;
let objects: KubernetesObjectApi;
let nc: NatsConnection;
const services: RunningService[] = [];
const standIns: TenantApiServer[] = [];
/** Tenants that must exist at the end, and whether each is exposed through a load balancer. */
const alive = new Map<string, { exposed: boolean }>();
const deleted = new Set<string>();
const figures: string[] = [];
/** Set once beforeAll has finished, so a failed start keeps its logs too. */
let started = false;

type Tc = KubernetesObject & {
  status?: { phase?: string; conditions?: Array<{ type: string; status: string; reason: string }> };
};

const STREAMS = [subjects.tenantsStream, subjects.decisionsStream] as const;
// A fault round waits for an election, several tenants (one behind a tenant API server) and a
// catch-up on a 2-core machine that other work shares: more than the default test timeout.
const ROUND_TIMEOUT_MS = 480_000;

async function apply(obj: KubernetesObject): Promise<void> {
  await objects.patch(obj, undefined, undefined, "e2e", true, PatchStrategy.ServerSideApply);
}

async function read<T extends KubernetesObject>(apiVersion: string, kind: string, name: string, namespace?: string) {
  try {
    return (await objects.read({ apiVersion, kind, metadata: { name, namespace } })) as T;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

const readTc = (name: string) => read<Tc>("tenantplane.io/v1alpha1", "TenantCluster", name);

async function createTenant(name: string, exposed: boolean): Promise<void> {
  await apply({
    apiVersion: "tenantplane.io/v1alpha1",
    kind: "TenantCluster",
    metadata: { name },
    spec: {
      isolationProfileRef: { name: "standard" },
      ...(exposed ? { controlPlane: { expose: { loadBalancer: { enabled: true } } } } : {}),
    },
  } as KubernetesObject);
  alive.set(name, { exposed });
}

async function deleteTenant(name: string): Promise<void> {
  // Mid-provisioning on purpose, but only once there is a namespace whose removal is a Decision.
  await waitFor(() => read("v1", "Namespace", `tp-${name}`), {
    description: `namespace tp-${name}`,
    timeoutMs: 120_000,
  });
  await objects.delete({ apiVersion: "tenantplane.io/v1alpha1", kind: "TenantCluster", metadata: { name } });
  alive.delete(name);
  deleted.add(name);
}

/** Plays the cloud load balancer and k3s for an exposed tenant, so it can become Ready. */
async function standInFor(tenant: string, address: string): Promise<void> {
  await setLoadBalancerIngress(host.kubeConfig, `tp-${tenant}`, "k3s", address);
  standIns.push(await startTenantStandIn(host.kubeConfig, tenant, address));
}

/** Why `tenant` has not converged yet, or undefined once it has. */
async function notConverged(tenant: string): Promise<string | undefined> {
  const tc = await readTc(tenant);
  if (deleted.has(tenant)) {
    if (tc) return `${tenant} still exists`;
    return (await read("v1", "Namespace", `tp-${tenant}`)) ? `namespace tp-${tenant} still exists` : undefined;
  }
  const conditions = new Map(tc?.status?.conditions?.map((c) => [c.type, c]));
  if (conditions.get("IsolationApplied")?.status !== "True") return `${tenant}: isolation not applied`;
  if (alive.get(tenant)?.exposed) return tc?.status?.phase === "Ready" ? undefined : `${tenant}: phase not Ready`;
  // Service DNS does not resolve from the test process: the provisioner gets as far as
  // probing the in-cluster API endpoint, which means every step before it was done.
  const cp = conditions.get("ControlPlaneReady");
  return cp?.reason === "ApiServerUnreachable" ? undefined : `${tenant}: control plane ${cp?.reason ?? "pending"}`;
}

async function waitConverged(description: string): Promise<void> {
  await waitFor(
    async () => {
      for (const tenant of [...alive.keys(), ...deleted]) {
        if (await notConverged(tenant)) return false;
      }
      return true;
    },
    { description, timeoutMs: 240_000, intervalMs: 500 },
  );
}

/** Every message in DECISIONS, in stream order, parsed. */
async function allDecisions(): Promise<Decision[]> {
  // Right after the whole cluster restarts, the tenants may converge (their services wake on
  // host watches) before JetStream answers again: this reader waits for it like the services do.
  const last = await whenJetStreamAnswers(
    async () => (await (await jetstreamManager(nc)).streams.info(subjects.decisionsStream)).state.last_seq,
    { onRetry: () => undefined, signal: AbortSignal.timeout(60_000), baseMs: 500 },
  );
  const found: Decision[] = [];
  if (last === 0) return found;
  const consumer = await jetstream(nc).consumers.get(subjects.decisionsStream);
  const messages = await consumer.consume();
  for await (const m of messages) {
    found.push(DecisionSchema.parse(m.json()));
    if (m.seq >= last) break;
  }
  return found;
}

/** Ids stored more than once. */
function duplicates(decisions: Decision[]): string[] {
  const seen = new Map<string, number>();
  for (const d of decisions) seen.set(d.id, (seen.get(d.id) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
}

/**
 * Host objects with more than one Create Decision: the same fact reported twice under
 * different ids, which a count by id alone would not see. (No object in this suite is
 * deleted and created again under one name.)
 */
function repeatedCreates(decisions: Decision[]): string[] {
  const creates = new Map<string, number>();
  for (const d of decisions.filter((x) => x.action === "Create")) {
    const key = `${d.service} ${d.kind}/${d.hostRef.namespace}/${d.hostRef.name}`;
    creates.set(key, (creates.get(key) ?? 0) + 1);
  }
  return [...creates].filter(([, n]) => n > 1).map(([key]) => key);
}

/** Which of the host objects the services created have no Decision in DECISIONS. */
async function objectsWithoutDecision(decisions: Decision[]): Promise<string[]> {
  const explained = new Set(
    decisions
      .filter((d) => d.action === "Create" || d.action === "Update")
      .map((d) => `${d.kind}/${d.hostRef.namespace}/${d.hostRef.name}`),
  );
  const missing: string[] = [];
  const kinds = [
    ["v1", "Secret"],
    ["v1", "Service"],
    ["apps/v1", "StatefulSet"],
    ["networking.k8s.io/v1", "NetworkPolicy"],
    ["v1", "ResourceQuota"],
    ["v1", "LimitRange"],
  ] as const;
  for (const tenant of alive.keys()) {
    const namespace = `tp-${tenant}`;
    if (!explained.has(`Namespace//${namespace}`)) missing.push(`Namespace//${namespace}`);
    for (const [apiVersion, kind] of kinds) {
      const list = await objects.list(
        apiVersion,
        kind,
        namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        "app.kubernetes.io/managed-by=tenantplane",
      );
      for (const o of list.items) {
        const key = `${kind}/${namespace}/${o.metadata?.name}`;
        if (!explained.has(key)) missing.push(key);
      }
    }
  }
  const deletes = new Set(decisions.filter((d) => d.action === "Delete").map((d) => `${d.kind}/${d.hostRef.name}`));
  for (const tenant of deleted) {
    if (!deletes.has(`Namespace/tp-${tenant}`)) missing.push(`Delete Namespace/tp-${tenant}`);
  }
  return missing;
}

/** Whether `node` holds a current replica of every stream (or leads it). */
async function caughtUp(node: string): Promise<boolean> {
  for (const stream of STREAMS) {
    const cluster = (await nats.streamInfo(stream)).cluster;
    if (cluster?.leader === node) continue;
    const replica = cluster?.replicas?.find((r) => r.name === node);
    if (!replica?.current) return false;
  }
  return true;
}

/**
 * Kills `victim` while tenants are created and deleted, waits for everything to
 * converge, then restarts it and waits until it has caught up. Prints the figures.
 */
async function faultRound(label: string, victim: string, prefix: string, address: string, older: string[]) {
  // Work already in flight when the node dies.
  await createTenant(`${prefix}-a`, false);
  await createTenant(`${prefix}-lb`, true);
  const before = (await allDecisions()).length;

  const leaderOf = () => (label.startsWith("meta") ? nats.metaLeader() : nats.streamLeader(subjects.decisionsStream));
  const killedAt = Date.now();
  await nats.stopNode(victim, { signal: "SIGKILL" });
  const elected = waitFor(
    async () => {
      const leader = await leaderOf();
      return leader !== undefined && leader !== victim ? { leader, ms: Date.now() - killedAt } : undefined;
    },
    { description: `a new ${label} after ${victim} died`, timeoutMs: 60_000, intervalMs: 100 },
  );
  // Awaited after convergence; a failure before that must not surface as an unhandled rejection.
  elected.catch(() => undefined);
  // Work that arrives during the election and after it.
  await createTenant(`${prefix}-b`, false);
  await deleteTenant(`${prefix}-a`);
  for (const tenant of older) await deleteTenant(tenant);
  await standInFor(`${prefix}-lb`, address);
  await waitConverged(`every tenant to converge after the ${label} (${victim}) died`);
  const convergedMs = Date.now() - killedAt;
  const election = await elected;

  const restartedAt = Date.now();
  await nats.startNode(victim);
  await waitFor(() => caughtUp(victim), {
    description: `${victim} to hold a current replica of TENANTS and DECISIONS again`,
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  const caughtUpMs = Date.now() - restartedAt;
  // Read from the restarted node itself: its copy holds every message the leader has.
  for (const stream of STREAMS) {
    const { state } = await nats.streamInfo(stream);
    await waitFor(async () => (await nats.nodeStreamState(victim, stream))?.last_seq === state.last_seq, {
      description: `${victim}'s own copy of ${stream} to reach sequence ${state.last_seq}`,
      timeoutMs: 30_000,
    });
  }

  const decisions = await allDecisions();
  const dupes = duplicates(decisions);
  figures.push(
    `${label} ${victim} killed: ${election.leader} elected in ${(election.ms / 1000).toFixed(1)} s; ` +
      `every tenant converged in ${(convergedMs / 1000).toFixed(1)} s; ` +
      `restarted node current again in ${(caughtUpMs / 1000).toFixed(1)} s; ` +
      `decisions in DECISIONS ${decisions.length} (${decisions.length - before} during the round), ` +
      `distinct ids ${new Set(decisions.map((d) => d.id)).size}, duplicates ${dupes.length}`,
  );
  console.error(`[nats-cluster] ${figures.at(-1)}`);
  expect(dupes).toEqual([]);
  expect(repeatedCreates(decisions)).toEqual([]);
  expect(await objectsWithoutDecision(decisions)).toEqual([]);
  for (const svc of services) expect(svc.process.running(), `${svc.name} still running`).toBe(true);
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "nats-cluster" }), startNatsCluster()]);
  objects = KubernetesObjectApi.makeApiClient(host.kubeConfig);
  await installCrds(host.kubeConfig, crdManifests());
  await host.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: "tenantplane-system" } } });
  await apply(example("isolationprofile.yaml"));
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: {
      NATS_STREAM_REPLICAS: "3",
      RESYNC_INTERVAL_SECONDS: "30",
      // The faults here are NATS's: a lease long enough that a slow API server on a loaded
      // machine does not cost the watcher its leadership (which it answers by exiting).
      LEASE_DURATION_SECONDS: "30",
      POD_NAMESPACE: "tenantplane-system",
      LOG_LEVEL: "info",
    },
  });
  services.push(
    ...(await Promise.all(
      (["watcher", "provisioner", "isolation", "recorder"] as const).map((name) => fleet.start(name)),
    )),
  );
  for (const svc of services) {
    await waitFor(async () => (await svc.probe("/readyz")).status === 200, {
      description: `${svc.name} ready`,
      timeoutMs: 120_000,
    });
  }
  nc = await connect({ servers: nats.nodes.map((n) => n.url) });
  started = true;
}, 300_000);

afterAll(async () => {
  const keepLogs = failures.failed() || !started;
  if (figures.length > 0) console.error(`[nats-cluster] fault figures:\n  ${figures.join("\n  ")}`);
  await nc?.close();
  await fleet?.stop({ keepLogs });
  for (const api of standIns) await api.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("services on a three-node NATS cluster", () => {
  it("declares TENANTS and DECISIONS with three replicas, each on its own node", async () => {
    for (const stream of STREAMS) {
      const info = await nats.streamInfo(stream);
      expect(info.config.num_replicas).toBe(3);
      const members = [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)];
      expect(members.sort()).toEqual(["n1", "n2", "n3"]);
    }
  });

  it(
    "loses and repeats no Decision when the JetStream meta leader dies mid-flow, and the node catches up",
    async () => {
      const leader = await waitFor(() => nats.metaLeader(), { description: "a meta leader" });
      await faultRound("meta leader", leader, "meta", "127.0.0.240", []);
    },
    ROUND_TIMEOUT_MS,
  );

  it(
    "loses and repeats no Decision when the DECISIONS stream leader dies mid-flow, and the node catches up",
    async () => {
      const leader = await waitFor(() => nats.streamLeader(subjects.decisionsStream), {
        description: "a DECISIONS leader",
      });
      await faultRound("DECISIONS leader", leader, "stream", "127.0.0.241", ["meta-b"]);
    },
    ROUND_TIMEOUT_MS,
  );

  it(
    "services move to any member that is left, and are not ready while no member is",
    async () => {
      const [first, second, last] = nats.nodes;
      await nats.stopNode(first!.name);
      await nats.stopNode(second!.name);
      // Every service's connection is now on the one node left.
      await waitFor(
        async () => {
          const res = await fetch(`${last!.monitorUrl}/connz?limit=1024`);
          const names = ((await res.json()) as { connections?: Array<{ name?: string }> }).connections?.map(
            (c) => c.name ?? "",
          );
          return services.every((s) => names?.some((n) => n.endsWith(s.name)));
        },
        { description: `every service connected to ${last!.name}`, timeoutMs: 30_000 },
      );
      const stoppedAt = Date.now();
      await nats.stopNode(last!.name);
      for (const svc of services) {
        await waitFor(async () => (await svc.probe("/readyz")).status === 503, {
          description: `${svc.name} /readyz 503 with every NATS node down`,
          timeoutMs: 5_000,
          intervalMs: 100,
        });
      }
      figures.push(`all nodes down: every /readyz 503 within ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`);

      const startedAt = Date.now();
      await Promise.all(nats.nodes.map((n) => nats.startNode(n.name)));
      for (const svc of services) {
        await waitFor(async () => (await svc.probe("/readyz")).status === 200, {
          description: `${svc.name} /readyz 200 once the cluster is back`,
          timeoutMs: 60_000,
        });
      }
      figures.push(`cluster back: every /readyz 200 within ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
      console.error(`[nats-cluster] ${figures.at(-2)}; ${figures.at(-1)}`);
      for (const svc of services) expect(svc.process.running(), `${svc.name} still running`).toBe(true);

      // And they work again: a new tenant converges.
      await createTenant("after-outage", false);
      await waitConverged("a tenant created after the outage to converge");
      const decisions = await allDecisions();
      expect(duplicates(decisions)).toEqual([]);
      expect(repeatedCreates(decisions)).toEqual([]);
      expect(await objectsWithoutDecision(decisions)).toEqual([]);
    },
    ROUND_TIMEOUT_MS,
  );
});
