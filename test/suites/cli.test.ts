import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, type KubernetesObject } from "@kubernetes/client-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { crdManifests } from "@tenantplane/api";
import { kubeConfigFromString, Objects } from "@tenantplane/kube";
import { type Decision, decisionId, ensureTopology, publishDecision } from "@tenantplane/messaging";
import { plan, defaultHostRules } from "@tenantplane/sync";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createArtifactsDir,
  installCrds,
  releaseArtifactsDir,
  ServiceFleet,
  setLoadBalancerIngress,
  startHostCluster,
  startNats,
  startTenantStandIn,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
  type TenantApiServer,
} from "../harness/index.js";

const failures = trackFailures();
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const cliMain = join(repoRoot, "libs/cli/bin/tenantplane.js");
const example = (file: string) =>
  YAML.parse(readFileSync(join(repoRoot, "examples", file), "utf8")) as KubernetesObject;

const TENANT = "cli-a";
const ADDRESS = "127.0.0.200";
const HOST_NS = `tp-${TENANT}`;
// Nothing listens here: the address is in this suite's range and no stand-in is started on it.
const UNREACHABLE = "127.0.0.219";

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: Objects;
let nc: NatsConnection;
let tenantApi: TenantApiServer;
let workDir: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the installed entry point as a user would, with the host kubeconfig and NATS in the environment. */
function tp(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliMain, ...args], {
      env: { PATH: process.env.PATH, HOME: workDir, KUBECONFIG: host.kubeconfigPath, NATS_URL: nats.url, ...env },
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

type Obj = KubernetesObject & Record<string, unknown>;

const configMap = (namespace: string, name: string, data: Record<string, string>): Obj => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data,
});

/** The host copy the planner wants for a tenant object, exactly as the sync worker would write it. */
function desiredCopy(source: Obj, hashKey?: string): Obj {
  const result = plan({
    ...(hashKey === undefined ? {} : { hashKey }),
    tenant: TENANT,
    policy: { toHost: [{ kind: "ConfigMap" }] },
    rules: defaultHostRules,
    tenantObjects: [source],
    hostObjects: [],
  });
  const object = result.decisions[0]?.object;
  if (object === undefined) throw new Error(`no desired object for ${JSON.stringify(source)}`);
  return object as unknown as Obj;
}

beforeAll(async () => {
  workDir = createArtifactsDir("cli");
  [host, nats] = await Promise.all([startHostCluster({ name: "cli" }), startNats()]);
  objects = new Objects(host.kubeConfig, "e2e");
  await installCrds(host.kubeConfig, crdManifests());
  await objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
  nc = await connect({ servers: nats.url });
  await ensureTopology(await jetstreamManager(nc), []);
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  await Promise.all([fleet.start("watcher"), fleet.start("provisioner"), fleet.start("isolation")]);
  await objects.apply(example("isolationprofile.yaml"));
  await objects.apply(example("syncpolicy.yaml"));
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await nc?.close();
  await fleet?.stop({ keepLogs });
  await tenantApi?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
  if (workDir) releaseArtifactsDir(workDir, keepLogs);
});

describe("tenantplane against a live installation", () => {
  it("creates a tenant, lists it Ready with its external endpoint, and prints its kubeconfig", async () => {
    const created = await tp([
      "create",
      "tenant",
      TENANT,
      "--profile",
      "standard",
      "--policy",
      "workloads",
      "--expose",
    ]);
    expect(created).toMatchObject({ code: 0, stdout: `tenantcluster.tenantplane.io/${TENANT} created\n` });
    const stored = await objects.get<Obj>("tenantplane.io/v1alpha1", "TenantCluster", TENANT);
    expect(stored?.["spec"]).toMatchObject({
      isolationProfileRef: { name: "standard" },
      syncPolicyRef: { name: "workloads" },
      controlPlane: { expose: { loadBalancer: { enabled: true } } },
    });
    const again = await tp(["create", "tenant", TENANT]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`TenantCluster ${TENANT} already exists`);

    await setLoadBalancerIngress(host.kubeConfig, HOST_NS, "k3s", ADDRESS);
    tenantApi = await startTenantStandIn(host.kubeConfig, TENANT, ADDRESS);
    await waitFor(
      async () => {
        const r = await tp(["get", "tenants", "-o", "json"]);
        const tc = (JSON.parse(r.stdout) as { items: Obj[] }).items.find((t) => (t.metadata?.name ?? "") === TENANT);
        const status = tc?.["status"] as { phase?: string; conditions?: unknown[] } | undefined;
        if (status?.phase === "Ready") return tc;
        // Thrown, so a timeout quotes the conditions that say what the tenant waits for.
        throw new Error(`phase ${status?.phase ?? "unset"}: ${JSON.stringify(status?.conditions ?? [])}`);
      },
      { timeoutMs: 150_000, intervalMs: 1000, description: `${TENANT} Ready` },
    );

    const table = await tp(["get", "tenants"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME +PHASE +CONDITIONS +ENDPOINT +SYNC +AGE\n/);
    const row = table.stdout.split("\n").find((l) => l.startsWith(`${TENANT} `));
    expect(row).toMatch(
      new RegExp(`^${TENANT} +Ready +\\S*ControlPlaneReady=True\\S* +https://${ADDRESS.replaceAll(".", "\\.")}:6443 `),
    );
    expect((await tp(["get", "tc", TENANT, "-o", "name"])).stdout).toBe(`tenantcluster.tenantplane.io/${TENANT}\n`);

    const kubeconfig = await tp(["kubeconfig", TENANT]);
    expect(kubeconfig.code).toBe(0);
    const external = await tp(["kubeconfig", TENANT, "--external"]);
    expect(
      (YAML.parse(external.stdout) as { clusters: Array<{ cluster: { server: string } }> }).clusters[0]?.cluster.server,
    ).toBe(`https://${ADDRESS}:6443`);
    // The printed kubeconfig works: it lists the tenant API's namespaces.
    const tenant = new Objects(kubeConfigFromString(external.stdout), "e2e");
    const namespaces = await tenant.list("v1", "Namespace");
    expect(namespaces.map((n) => n.metadata?.name)).toContain("default");

    // Someone who may read TenantClusters but not Secrets is told which permission is missing.
    await objects.create({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "tc-reader", namespace: "default" },
    });
    await objects.create({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "tc-reader" },
      rules: [{ apiGroups: ["tenantplane.io"], resources: ["tenantclusters"], verbs: ["get", "list"] }],
    } as Obj);
    await objects.create({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "tc-reader" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "tc-reader" },
      subjects: [{ kind: "ServiceAccount", name: "tc-reader", namespace: "default" }],
    } as Obj);
    const token = await host.kubeConfig.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
      name: "tc-reader",
      namespace: "default",
      body: { spec: { audiences: [] } },
    });
    const admin = YAML.parse(readFileSync(host.kubeconfigPath, "utf8")) as { clusters: unknown[] };
    const readerConfig = join(workDir, "reader.kubeconfig");
    await writeFile(
      readerConfig,
      YAML.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ ...(admin.clusters[0] as object), name: "host" }],
        users: [{ name: "reader", user: { token: token.status?.token } }],
        contexts: [{ name: "reader", context: { cluster: "host", user: "reader" } }],
        "current-context": "reader",
      }),
    );
    const forbidden = await tp(["kubeconfig", TENANT, "--kubeconfig", readerConfig]);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain(`forbidden to read Secret ${HOST_NS}/${TENANT}-kubeconfig`);
    expect(forbidden.stderr).toContain(`this needs RBAC permission "get" on "secrets" in namespace ${HOST_NS}`);
    expect(forbidden.stdout).toBe("");

    // --wait gives up after --timeout, saying where to look; nothing plays k3s for this tenant.
    const waited = await tp(["create", "tenant", "cli-b", "--wait", "--timeout", "3s"]);
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(
      /TenantCluster cli-b is still \w+ after --timeout; see 'tenantplane explain tc\/cli-b'/,
    );

    const missing = await tp(["kubeconfig", "no-such-tenant"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("TenantCluster no-such-tenant does not exist");
  });

  it("predicts Create, Update, Skip, Delete and InSync against the live host namespace", async () => {
    const v1 = {
      settings: configMap("shop", "settings", { mode: "v1" }),
      same: configMap("shop", "same", { a: "1" }),
      old: configMap("shop", "old", { gone: "yes" }),
    };
    // Host state as a sync worker and a stranger left it: an outdated copy, a current copy,
    // an orphaned copy, and a foreign object holding a name a tenant object maps to.
    for (const source of Object.values(v1)) await objects.create(desiredCopy(source));
    // A tenant object the manifest does not mention, already synced: applying the manifest leaves it alone.
    const tenant = new Objects(kubeConfigFromString((await tp(["kubeconfig", TENANT, "--external"])).stdout), "e2e");
    await tenant.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
    const kept = configMap("shop", "kept", { k: "v" });
    await tenant.create(kept);
    await objects.create(desiredCopy(kept));
    await objects.create(configMap(HOST_NS, `foreign-x-shop-x-${TENANT}`, { owner: "someone else" }));

    const manifest = [
      configMap("shop", "settings", { mode: "v2" }),
      v1.same,
      configMap("shop", "foreign", { x: "1" }),
      configMap("shop", "fresh", { y: "1" }),
    ];
    const file = join(workDir, "manifest.yaml");
    await writeFile(file, manifest.map((m) => YAML.stringify(m)).join("---\n"));

    const json = await tp(["explain-sync", "--tenant", TENANT, "-f", file, "-o", "json"]);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const decisions = JSON.parse(json.stdout) as Decision[];
    const action = (host: string) =>
      decisions.filter((d) => d.kind === "ConfigMap" && d.hostRef.name === host).map((d) => d.action);
    expect(action(`settings-x-shop-x-${TENANT}`)).toEqual(["Update"]);
    expect(action(`foreign-x-shop-x-${TENANT}`)).toEqual(["Skip"]);
    expect(action(`old-x-shop-x-${TENANT}`)).toEqual(["Delete"]);
    expect(action(`fresh-x-shop-x-${TENANT}`)).toEqual(["Create"]);
    expect(action(`same-x-shop-x-${TENANT}`)).toEqual([]);
    expect(action(`kept-x-shop-x-${TENANT}`)).toEqual([]);
    expect(decisions.find((d) => d.action === "Skip")?.reason).toMatch(/foreign|not managed|managed-by/i);
    // tenantplane's own objects in the namespace (kubeconfig Secret, isolation objects) are never planned for.
    expect(decisions.filter((d) => d.action === "Delete").map((d) => d.hostRef.name)).toEqual([
      `old-x-shop-x-${TENANT}`,
    ]);

    const table = await tp(["explain-sync", "--tenant", TENANT, "-f", file]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      new RegExp(`^ConfigMap +shop/same +${HOST_NS}/same-x-shop-x-${TENANT} +no +InSync +`, "m"),
    );
    expect(table.stdout).not.toContain("\u001b[");
    expect(table.stdout).not.toContain("kept");

    // A copy written under the worker's content-hash key is in sync only when explain-sync uses that key.
    const hashKey = "a-content-hash-key-of-the-installation";
    await objects.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "tp-sync", namespace: "tenantplane-system" },
      stringData: { "hash-key": hashKey },
    } as Obj);
    const keyed = configMap("shop", "keyed", { z: "1" });
    await objects.create(desiredCopy(keyed, hashKey));
    const keyedFile = join(workDir, "keyed.yaml");
    await writeFile(keyedFile, YAML.stringify(keyed));
    const withKey = await tp([
      "explain-sync",
      "--tenant",
      TENANT,
      "-f",
      keyedFile,
      "--hash-key-secret",
      "tenantplane-system/tp-sync",
    ]);
    expect(withKey.stdout).toMatch(new RegExp(`^ConfigMap +shop/keyed +\\S+ +no +InSync `, "m"));
    const withEnv = await tp(["explain-sync", "--tenant", TENANT, "-f", keyedFile], { CONTENT_HASH_KEY: hashKey });
    expect(withEnv.stdout).toMatch(new RegExp(`^ConfigMap +shop/keyed +\\S+ +no +InSync `, "m"));
    const withoutKey = await tp(["explain-sync", "--tenant", TENANT, "-f", keyedFile]);
    expect(withoutKey.stdout).toMatch(new RegExp(`^ConfigMap +shop/keyed +\\S+ +no +Update `, "m"));

    // The same input offline cannot see the host: everything is a Create.
    const offline = await tp(["explain-sync", "--offline", "--tenant", TENANT, "-f", file, "-o", "json"]);
    expect((JSON.parse(offline.stdout) as Decision[]).map((d) => d.action)).toEqual([
      "Create",
      "Create",
      "Create",
      "Create",
    ]);
  });

  it("explains a sync copy (source, rule, content hash, last Decisions) and says a foreign object is not tenantplane's", async () => {
    // The tenant objects behind the copies, in the tenant API, reached through the tenant's kubeconfig.
    const tenant = new Objects(kubeConfigFromString((await tp(["kubeconfig", TENANT, "--external"])).stdout), "e2e");
    await tenant.create(configMap("shop", "same", { a: "1" }));
    await tenant.create(configMap("shop", "settings", { mode: "v2" }));
    const js = jetstream(nc);
    const planned = {
      tenant: TENANT,
      action: "Create" as const,
      kind: "ConfigMap",
      tenantRef: { namespace: "shop", name: "same" },
      hostRef: { namespace: HOST_NS, name: `same-x-shop-x-${TENANT}` },
      reason: `host ConfigMap ${HOST_NS}/same-x-shop-x-${TENANT} absent`,
    };
    const decision: Decision = {
      ...planned,
      id: decisionId(planned, "sync-worker", "e2e"),
      time: new Date().toISOString(),
      service: "sync-worker",
    };
    await publishDecision(js, decision);

    const same = await tp(["explain", `configmap/same-x-shop-x-${TENANT}`, "-n", HOST_NS]);
    expect(same.stderr).toBe("");
    expect(same.code).toBe(0);
    expect(same.stdout).toContain(`source:       tenant ${TENANT}, ConfigMap shop/same`);
    expect(same.stdout).toContain("rule:         SyncPolicy workloads spec.toHost[1] (kind: ConfigMap)");
    expect(same.stdout).toMatch(/content hash: in sync: /);
    expect(same.stdout).toContain(`Create  sync-worker: ${planned.reason}`);

    const drifted = await tp(["explain", `cm/settings-x-shop-x-${TENANT}`, "-n", HOST_NS, "-o", "json"]);
    expect(drifted.code).toBe(0);
    const view = JSON.parse(drifted.stdout) as {
      owner: string;
      contentHash: { state: string; recorded: string; desired: string };
    };
    expect(view.owner).toBe("sync-copy");
    expect(view.contentHash.state).toBe("drifted");
    expect(view.contentHash.recorded).not.toBe(view.contentHash.desired);

    const foreign = await tp(["explain", `configmap/foreign-x-shop-x-${TENANT}`, "-n", HOST_NS]);
    expect(foreign.code).toBe(0);
    expect(foreign.stdout).toContain("not tenantplane's");
    expect(foreign.stdout).not.toContain("source:");

    const quota = await tp(["explain", "tc/" + TENANT]);
    expect(quota.code).toBe(0);
    expect(quota.stdout).toMatch(/^ {2}ControlPlaneReady +True/m);
    expect(quota.stdout).toMatch(/NetworkPolicy +tenantplane-default-deny +standard +spec\.network\.defaultDeny/);
    expect(quota.stdout).toMatch(/ResourceQuota +tenantplane-quota +standard +spec\.resourceQuota/);
    expect(quota.stdout).toMatch(/Namespace +tp-cli-a +standard +spec\.podSecurity \(labels .*enforce=baseline/);
    // A tenant that never changed mode: Shared asked for and in effect, no migration.
    expect(quota.stdout).toMatch(
      /^Isolation mode:\n {2}effective: +Shared.*\n {2}spec: +Shared\n {2}dedicated nodes: none\n {2}migration: +none recorded\n/m,
    );

    // The reverse mapping alone does not make a copy: outside tp-<tenant> the worker never acts.
    const forged = desiredCopy(configMap("shop", "same", { a: "1" }));
    await objects.create({ ...forged, metadata: { ...forged.metadata, name: "forged", namespace: "default" } });
    const outside = await tp(["explain", "configmap/forged", "-n", "default", "-o", "json"]);
    expect(outside.code).toBe(0);
    expect(JSON.parse(outside.stdout)).toMatchObject({
      owner: "foreign",
      summary: expect.stringContaining(`lives outside ${HOST_NS}`),
    });

    const absent = await tp(["explain", "configmap/nothing-here", "-n", HOST_NS]);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain(`ConfigMap ${HOST_NS}/nothing-here does not exist`);
  });

  it("explains a tenant object from the tenant's side, copied or never copied, and lists what a tenant has not synced", async () => {
    const tenant = new Objects(kubeConfigFromString((await tp(["kubeconfig", TENANT, "--external"])).stdout), "e2e");
    await tenant.create(configMap("shop", "lonely", { never: "copied" }));
    const js = jetstream(nc);
    const skip = async (name: string, reason: string) => {
      const planned = {
        tenant: TENANT,
        action: "Skip" as const,
        kind: "ConfigMap",
        tenantRef: { namespace: "shop", name },
        hostRef: { namespace: HOST_NS, name: `${name}-x-shop-x-${TENANT}` },
        reason,
      };
      await publishDecision(js, {
        ...planned,
        id: decisionId(planned, "sync-worker", "e2e"),
        time: new Date().toISOString(),
        service: "sync-worker",
      });
    };
    await skip("lonely", "held by foreign object (not managed by tenantplane)");
    // An object the tenant has deleted since its Skip is not listed as not synced.
    await skip("deleted-since", "held by foreign object (not managed by tenantplane)");

    for (const args of [
      ["explain", "cm/shop/lonely", "--tenant", TENANT],
      ["explain", "configmap/lonely", "-n", "shop", "--tenant", TENANT],
    ]) {
      const lonely = await tp(args);
      expect({ args, stderr: lonely.stderr, code: lonely.code }).toEqual({ args, stderr: "", code: 0 });
      expect(lonely.stdout).toContain(
        `owner:        no host copy: tenant ${TENANT}'s ConfigMap shop/lonely maps to ${HOST_NS}/lonely-x-shop-x-${TENANT}, which does not exist`,
      );
      expect(lonely.stdout).toContain("rule:         SyncPolicy workloads spec.toHost[1] (kind: ConfigMap)");
      // What happens now: the host would take it (the dry run of the Create passes).
      expect(lonely.stdout).toContain(
        `planned now:  Create: host ConfigMap ${HOST_NS}/lonely-x-shop-x-${TENANT} absent`,
      );
      expect(lonely.stdout).toContain("Skip    sync-worker: held by foreign object (not managed by tenantplane)");
    }
    // A tenant object with a host copy is explained through its copy.
    const same = await tp(["explain", "cm/shop/same", "--tenant", TENANT]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain(`ConfigMap ${HOST_NS}/same-x-shop-x-${TENANT}\n`);
    expect(same.stdout).toContain(`source:       tenant ${TENANT}, ConfigMap shop/same`);

    const tc = await tp(["explain", `tc/${TENANT}`]);
    expect(tc.stderr).toBe("");
    expect(tc.code).toBe(0);
    expect(tc.stdout).toMatch(
      /^Not synced \(each object's latest Decision is a Skip or a Fail\):\n {2}KIND +OBJECT +ACTION +SINCE +REASON\n {2}ConfigMap +shop\/lonely +Skip +\S+ +held by foreign object \(not managed by tenantplane\)\n(?! {2}ConfigMap +shop\/deleted-since)/m,
    );
    expect(tc.stdout).not.toContain("deleted-since");
    const withoutNats = await tp(["explain", `tc/${TENANT}`], { NATS_URL: "" });
    expect(withoutNats.code).toBe(0);
    expect(withoutNats.stdout).toContain("  Decisions not read: pass --nats-url or set NATS_URL\n");
  });

  it("without any kubeconfig, every live command names the sources it tried and points at --offline", async () => {
    const emptyHome = createArtifactsDir("cli-empty-home");
    const manifest = join(workDir, "manifest.yaml");
    for (const args of [
      ["get", "tenants"],
      ["create", "tenant", "nowhere"],
      ["kubeconfig", TENANT],
      ["explain", `tc/${TENANT}`],
      ["explain", "cm/shop/same", "--tenant", TENANT],
      ["explain-sync", "--tenant", TENANT, "-f", manifest],
    ]) {
      const r = await tp(args, { HOME: emptyHome, KUBECONFIG: undefined });
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(r.stderr).toContain(`tenantplane ${args[0]}: no host cluster configured. Tried:\n`);
      expect(r.stderr).toContain("  - KUBECONFIG (unset)\n");
      expect(r.stderr).toContain(`  - ~/.kube/config (${emptyHome}/.kube/config: no such file)\n`);
      expect(r.stderr).toContain(
        "  - the in-cluster service account (KUBERNETES_SERVICE_HOST unset: not running in a Pod)\n",
      );
      expect(r.stderr).toContain("tenantplane explain-sync --offline --tenant <name> -f <file>");
      expect(r.stderr).not.toContain("HTTP protocol is not allowed");
    }
    // --offline needs none of them.
    const offline = await tp(["explain-sync", "--offline", "--tenant", TENANT, "-f", manifest], {
      HOME: emptyHome,
      KUBECONFIG: undefined,
    });
    expect(offline.code).toBe(0);
    expect(offline.stdout).toMatch(/^ConfigMap +shop\/fresh .* Create /m);
    releaseArtifactsDir(emptyHome, false);
  });

  it("decisions reads history with filters and --follow prints a Decision published after it started", async () => {
    const js = jetstream(nc);
    const publish = async (action: "Update" | "Delete", name: string) => {
      const planned = {
        tenant: TENANT,
        action,
        kind: "Pod",
        tenantRef: { namespace: "shop", name },
        hostRef: { namespace: HOST_NS, name: `${name}-x-shop-x-${TENANT}` },
        reason: `${action} of ${name} for the decisions test`,
      };
      const d: Decision = {
        ...planned,
        id: decisionId(planned, "sync-worker", name),
        time: new Date().toISOString(),
        service: "sync-worker",
      };
      await publishDecision(js, d);
      return d;
    };
    const first = await publish("Delete", "history");
    const history = await tp([
      "decisions",
      "--tenant",
      TENANT,
      "--kind",
      "pods",
      "--action",
      "delete",
      "--since",
      "10m",
      "-o",
      "json",
    ]);
    expect(history.code).toBe(0);
    const lines = history.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Decision);
    expect(lines).toEqual([first]);

    const child = spawn(process.execPath, [cliMain, "decisions", "--tenant", TENANT, "--follow", "--since", "1s"], {
      env: { PATH: process.env.PATH, NATS_URL: nats.url, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await waitFor(() => out.startsWith("TIME"), { timeoutMs: 20_000, description: "follow header" });
    // The consumer may still be starting: publish until one arrives (ids differ, so none are deduplicated away).
    let live: Decision | undefined;
    await waitFor(
      async () => {
        live = await publish("Update", `live-${Date.now()}`);
        await new Promise((r) => setTimeout(r, 500));
        return out.includes(live.reason);
      },
      { timeoutMs: 20_000, description: "followed Decision" },
    );
    expect(out).toMatch(
      new RegExp(
        `^\\S+ +${TENANT} +Update +Pod +${HOST_NS}/${live!.hostRef.name} .*sync-worker +${live!.reason}$`,
        "m",
      ),
    );
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  });

  it("exits 3 when the host cluster or NATS cannot be reached, and 2 on a bad command line", async () => {
    const kubeconfig = join(workDir, "unreachable.kubeconfig");
    await writeFile(
      kubeconfig,
      YAML.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          { name: "gone", cluster: { server: `https://${UNREACHABLE}:6443`, "insecure-skip-tls-verify": true } },
        ],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "gone", context: { cluster: "gone", user: "u" } }],
        "current-context": "gone",
      }),
    );
    for (const args of [
      ["get", "tenants", "--kubeconfig", kubeconfig],
      ["explain-sync", "--tenant", TENANT, "-f", join(workDir, "manifest.yaml"), "--kubeconfig", kubeconfig],
      ["kubeconfig", TENANT, "--kubeconfig", kubeconfig],
      ["decisions", "--nats-url", `nats://${UNREACHABLE}:4222`],
    ]) {
      const r = await tp(args);
      expect({ args, code: r.code }).toEqual({ args, code: 3 });
      expect(r.stderr).toMatch(new RegExp(`cannot reach .*${UNREACHABLE.replaceAll(".", "\\.")}`));
    }
    // explain still says what it found when only NATS is down, and exits 3.
    const noNats = await tp([
      "explain",
      `configmap/same-x-shop-x-${TENANT}`,
      "-n",
      HOST_NS,
      "--nats-url",
      `nats://${UNREACHABLE}:4222`,
    ]);
    expect(noNats.code).toBe(3);
    expect(noNats.stdout).toContain(`source:       tenant ${TENANT}, ConfigMap shop/same`);
    expect(noNats.stdout).toMatch(/decisions:\n {4}cannot reach NATS at nats:\/\/127\.0\.0\.219:4222/);
    // With the tenant API down the content hash cannot be checked, and explain says so.
    await tenantApi.stop();
    const noTenant = await tp(["explain", `configmap/same-x-shop-x-${TENANT}`, "-n", HOST_NS, "-o", "json"]);
    expect(noTenant.code).toBe(0);
    expect(
      (JSON.parse(noTenant.stdout) as { contentHash: { state: string; detail: string } }).contentHash,
    ).toMatchObject({
      state: "unchecked",
      detail: expect.stringMatching(
        /^cannot be checked: the tenant object is not reachable \(cannot reach tenant cli-a's API/,
      ),
    });

    // Without the tenant's listing, explain-sync predicts no Delete for the policy's kinds, and says why.
    const blind = await tp(["explain-sync", "--tenant", TENANT, "-f", join(workDir, "manifest.yaml"), "-o", "json"]);
    expect(blind.code).toBe(0);
    expect(blind.stderr).toMatch(/note: cannot list tenant cli-a's objects \(cannot reach tenant cli-a's API/);
    expect((JSON.parse(blind.stdout) as Decision[]).filter((d) => d.action === "Delete")).toEqual([]);

    const usage = await tp(["decisions", "--bogus"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("Run 'tenantplane decisions --help' for usage.");
  });
});
