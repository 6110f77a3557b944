import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubernetesObject, V1Deployment } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { Objects } from "@tenantplane/kube";
import { httpStatusOf } from "@tenantplane/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  installCrds,
  liveProcesses,
  serviceAccountKubeConfig,
  serviceAccountKubeconfigFile,
  ServiceFleet,
  startHostCluster,
  startNats,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
} from "../harness/index.js";
import { POLICY_API, removeHelmHome, renderChart } from "../harness/helm.js";

// Isolation modes, first slice: a Dedicated tenant's host nodes are reserved for it by the
// isolation service (the taint tenantplane.io/dedicated=<tenant>:NoSchedule, kept in step with
// node labels and the tenant's spec, read back from the server), two tenants claiming one node
// are told so, the CRD refuses what cannot work, and the chart's admission policy keeps every
// other Pod from tolerating the taint. The isolation service runs with the chart's RBAC (its own
// ServiceAccount's token), so what it needs of nodes is what the chart grants. No tenant API is
// needed here: nothing is synced.

const failures = trackFailures();
const release = "tenantplane";
const namespace = "tenantplane-system";
const KEY = "tenantplane.io/dedicated";
const TC_API = "tenantplane.io/v1alpha1";
// Not tenantplane's: must survive every reservation and release untouched.
const FOREIGN_TAINT = { key: "example.com/gpu", value: "true", effect: "NoSchedule" };
// Watch-driven, not resync-driven: the watcher's resync is an hour away. A minute, not less: on a
// fully loaded machine a tenant's first change once reached the isolation service 21 s late.
const QUICK = { timeoutMs: 60_000, intervalMs: 250 };

type Taint = { key: string; value?: string; effect: string };
type Node = KubernetesObject & { spec?: { taints?: Taint[] } };
type Condition = { type: string; status: string; reason: string; message: string };
type Tc = KubernetesObject & {
  status?: { conditions?: Condition[]; isolation?: { dedicatedNodes?: string[] } };
};
type Event = KubernetesObject & {
  involvedObject: { kind: string; name: string };
  type: string;
  reason: string;
  message: string;
};

let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let admin: Objects;
const work = mkdtempSync(join(tmpdir(), "tenantplane-isolation-modes-"));

const tenantCluster = (name: string, isolation: unknown) => ({
  apiVersion: TC_API,
  kind: "TenantCluster",
  metadata: { name },
  spec: { isolation },
});
const dedicated = (nodeSelector: Record<string, string>) => ({ mode: "Dedicated", dedicated: { nodeSelector } });

const readNode = (name: string) => admin.get<Node>("v1", "Node", name);
/** The values of the dedicated taints the server stored on `name`, sorted. */
async function dedicatedOn(name: string): Promise<string[]> {
  const taints = (await readNode(name))?.spec?.taints ?? [];
  return taints
    .filter((t) => t.key === KEY)
    .map((t) => `${t.value}:${t.effect}`)
    .sort();
}
async function waitForDedicated(name: string, expected: string[], options = QUICK): Promise<void> {
  await waitFor(async () => JSON.stringify(await dedicatedOn(name)) === JSON.stringify(expected), {
    ...options,
    description: `node ${name} to carry dedicated taints [${expected.join(", ")}]`,
  });
}
const labelNode = (name: string, labels: Record<string, string | null>) =>
  admin.mergePatch({ apiVersion: "v1", kind: "Node", metadata: { name } }, { metadata: { labels } });

const readTc = (name: string) => admin.get<Tc>(TC_API, "TenantCluster", name);
const conditionOf = async (tenant: string) =>
  (await readTc(tenant))?.status?.conditions?.find((c) => c.type === "NodesReserved");
async function waitForReservation(tenant: string, status: string, reason: string, nodes: string[] | undefined) {
  return waitFor(
    async () => {
      const tc = await readTc(tenant);
      const c = tc?.status?.conditions?.find((x) => x.type === "NodesReserved");
      const listed = tc?.status?.isolation?.dedicatedNodes;
      const nodesMatch = nodes === undefined || JSON.stringify(listed) === JSON.stringify(nodes);
      return c?.status === status && c.reason === reason && nodesMatch ? c : undefined;
    },
    { ...QUICK, description: `${tenant} NodesReserved=${status} (${reason}) with dedicatedNodes ${nodes?.join(",")}` },
  );
}
async function waitForEvent(tenant: string, type: string, reason: string, ...texts: string[]): Promise<Event> {
  return waitFor(
    async () =>
      (await admin.list<Event>("v1", "Event")).find(
        (e) =>
          e.involvedObject.kind === "TenantCluster" &&
          e.involvedObject.name === tenant &&
          e.type === type &&
          e.reason === reason &&
          texts.every((t) => e.message.includes(t)),
      ),
    { ...QUICK, description: `${type} Event ${reason} on ${tenant} saying ${texts.join(" / ")}` },
  );
}

/** The answer to a create: the stored object, or the refusal's status code and message. */
async function tryCreate(client: Objects, obj: KubernetesObject) {
  try {
    return { stored: await client.create<KubernetesObject & { spec?: Record<string, unknown> }>(obj) };
  } catch (err) {
    const code = httpStatusOf(err);
    if (code === undefined) throw err;
    return { code, message: (err as Error).message };
  }
}

const pod = (name: string, ns: string, tolerations: unknown[]) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: ns },
  spec: { containers: [{ name: "c", image: "registry.invalid/pause:1" }], tolerations },
});

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "isolation-modes", nodes: 4 }), startNats()]);
  await installCrds(host.kubeConfig, crdManifests());
  admin = new Objects(host.kubeConfig, "e2e");
  await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  // The chart's RBAC and admission policies, as a release on a server serving them.
  const objects = await renderChart({
    release,
    namespace,
    apiVersions: [POLICY_API],
    set: ["nats.url=nats://nats.nats.svc:4222"],
  });
  const applied = new Set([
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
  ]);
  for (const object of objects.filter((o) => applied.has(o.kind ?? ""))) await admin.apply(object);

  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "3600", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: namespace },
  });
  const deployment = objects.find(
    (o) => o.kind === "Deployment" && o.metadata?.name === `${release}-isolation`,
  ) as V1Deployment;
  // The isolation service with the environment the chart gives it and only its ServiceAccount's rights.
  const env: NodeJS.ProcessEnv = {};
  for (const e of deployment.spec?.template.spec?.containers[0]?.env ?? []) {
    if (e.value !== undefined && !["NATS_URL", "HTTP_PORT", "LOG_LEVEL"].includes(e.name)) env[e.name] = e.value;
  }
  env.KUBECONFIG = await serviceAccountKubeconfigFile(
    host,
    namespace,
    `${release}-isolation`,
    join(work, "isolation.kubeconfig"),
  );
  await Promise.all([fleet.start("watcher"), fleet.start("recorder"), fleet.start("isolation", env)]);
}, 300_000);

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
  rmSync(work, { recursive: true, force: true });
  removeHelmHome();
  expect(liveProcesses()).toEqual([]);
});

describe("the CRD", () => {
  it("refuses Dedicated without a node selector and an unknown mode, naming the field", async () => {
    const noSelector = await tryCreate(admin, tenantCluster("no-selector", { mode: "Dedicated" }));
    expect(noSelector.code).toBe(422);
    expect(noSelector.message).toContain("spec.isolation.dedicated.nodeSelector: Required value");
    expect(noSelector.message).toContain("is required when spec.isolation.mode is Dedicated");
    const empty = await tryCreate(admin, tenantCluster("empty-selector", dedicated({})));
    expect(empty.message).toContain("spec.isolation.dedicated.nodeSelector: Required value");
    const unknownMode = await tryCreate(admin, tenantCluster("unknown-mode", { mode: "Exclusive" }));
    expect(unknownMode.code).toBe(422);
    expect(unknownMode.message).toContain('spec.isolation.mode: Unsupported value: "Exclusive"');
    expect(unknownMode.message).toContain('supported values: "Shared", "Dedicated", "Private"');
    for (const name of ["no-selector", "empty-selector", "unknown-mode"]) expect(await readTc(name)).toBeUndefined();
  });
});

describe("Dedicated node reservation", () => {
  it("taints the nodes the selector matches, keeps other taints, and reports them", async () => {
    const gpuNode = await admin.mergePatch<Node>(
      { apiVersion: "v1", kind: "Node", metadata: { name: "kwok-node-1" } },
      { spec: { taints: [...((await readNode("kwok-node-1"))?.spec?.taints ?? []), FOREIGN_TAINT] } },
    );
    expect(gpuNode.spec?.taints).toContainEqual(FOREIGN_TAINT);
    await labelNode("kwok-node-1", { "tenantplane.io/pool": "a" });
    await labelNode("kwok-node-2", { "tenantplane.io/pool": "a" });
    await admin.create(tenantCluster("team-a", dedicated({ "tenantplane.io/pool": "a" })));

    for (const node of ["kwok-node-1", "kwok-node-2"]) await waitForDedicated(node, ["team-a:NoSchedule"]);
    for (const node of ["kwok-node-0", "kwok-node-3"]) expect(await dedicatedOn(node)).toEqual([]);
    expect((await readNode("kwok-node-1"))?.spec?.taints).toContainEqual(FOREIGN_TAINT);
    const reserved = await waitForReservation("team-a", "True", "Reserved", ["kwok-node-1", "kwok-node-2"]);
    expect(reserved.message).toContain("2 host nodes reserved for team-a");
    // Each taint is a Decision, and the recorder makes it an Event on the TenantCluster.
    const added = await waitForEvent(
      "team-a",
      "Normal",
      "UpdateNode",
      "Node kwok-node-2",
      "added taint tenantplane.io/dedicated=team-a:NoSchedule",
    );
    expect(added.message).toContain("spec.isolation.dedicated.nodeSelector tenantplane.io/pool=a");
  });

  it("follows the labels: a newly labelled node joins, an unlabelled one leaves, without a resync", async () => {
    await labelNode("kwok-node-0", { "tenantplane.io/pool": "a" });
    await waitForDedicated("kwok-node-0", ["team-a:NoSchedule"]);
    await labelNode("kwok-node-2", { "tenantplane.io/pool": null });
    await waitForDedicated("kwok-node-2", []);
    await waitForReservation("team-a", "True", "Reserved", ["kwok-node-0", "kwok-node-1"]);
    await waitForEvent(
      "team-a",
      "Normal",
      "UpdateNode",
      "Node kwok-node-2",
      "removed taint tenantplane.io/dedicated=team-a:NoSchedule: the node no longer matches",
    );
  });

  it("reserves a node two tenants claim for the one that holds it, and tells the other naming both", async () => {
    await labelNode("kwok-node-1", { tier: "gold" });
    await labelNode("kwok-node-3", { tier: "gold" });
    await admin.create(tenantCluster("team-b", dedicated({ tier: "gold" })));

    await waitForDedicated("kwok-node-3", ["team-b:NoSchedule"]);
    const conflict = await waitForReservation("team-b", "False", "NodeConflict", ["kwok-node-3"]);
    expect(conflict.message).toContain(
      "node kwok-node-1 is matched by the spec.isolation.dedicated.nodeSelector of TenantCluster team-a and TenantCluster team-b and stays reserved for team-a",
    );
    await waitForEvent("team-b", "Warning", "NodeConflict", "node kwok-node-1", "team-a", "team-b");
    expect(await dedicatedOn("kwok-node-1")).toEqual(["team-a:NoSchedule"]);
    expect((await conditionOf("team-a"))?.status).toBe("True");
  });

  it("gives a node both claim while nobody holds it to neither, until one lets go", async () => {
    await labelNode("kwok-node-2", { "tenantplane.io/pool": "a", tier: "gold" });
    const a = await waitForReservation("team-a", "False", "NodeConflict", ["kwok-node-0", "kwok-node-1"]);
    expect(a.message).toContain(
      "node kwok-node-2 is matched by the spec.isolation.dedicated.nodeSelector of TenantCluster team-a and TenantCluster team-b and is reserved for neither",
    );
    const b = await waitForReservation("team-b", "False", "NodeConflict", ["kwok-node-3"]);
    expect(b.message).toContain("node kwok-node-2");
    expect(await dedicatedOn("kwok-node-2")).toEqual([]);

    await labelNode("kwok-node-2", { tier: null });
    await waitForDedicated("kwok-node-2", ["team-a:NoSchedule"]);
    await waitForReservation("team-a", "True", "Reserved", ["kwok-node-0", "kwok-node-1", "kwok-node-2"]);
  });

  it("releases every node when the tenant goes back to Shared, and the next claimant takes over", async () => {
    await admin.mergePatch(
      { apiVersion: TC_API, kind: "TenantCluster", metadata: { name: "team-a" } },
      {
        spec: { isolation: { mode: "Shared" } },
      },
    );
    for (const node of ["kwok-node-0", "kwok-node-2"]) await waitForDedicated(node, []);
    // kwok-node-1 was contested: team-b gets it once team-a lets go.
    await waitForDedicated("kwok-node-1", ["team-b:NoSchedule"]);
    expect((await readNode("kwok-node-1"))?.spec?.taints).toContainEqual(FOREIGN_TAINT);
    await waitFor(
      async () => {
        const tc = await readTc("team-a");
        const cleared =
          !tc?.status?.conditions?.some((c) => c.type === "NodesReserved") &&
          JSON.stringify(tc?.status?.isolation?.dedicatedNodes) === "[]";
        if (!cleared) throw new Error(`status still ${JSON.stringify(tc?.status)}`);
        return cleared;
      },
      { ...QUICK, description: "team-a's NodesReserved condition removed and dedicatedNodes emptied" },
    );
    await waitForEvent("team-a", "Normal", "UpdateNode", "removed taint", "team-a is no longer Dedicated");
    await waitForReservation("team-b", "True", "Reserved", ["kwok-node-1", "kwok-node-3"]);
  });

  it("releases every node of a deleted tenant", async () => {
    await admin.delete({ apiVersion: TC_API, kind: "TenantCluster", metadata: { name: "team-b" } });
    for (const node of ["kwok-node-1", "kwok-node-3"]) await waitForDedicated(node, []);
    expect((await readNode("kwok-node-1"))?.spec?.taints).toContainEqual(FOREIGN_TAINT);
  });
});

describe("the chart's dedicated-nodes admission policy", () => {
  const policy = `ValidatingAdmissionPolicy '${release}-dedicated-nodes'`;
  const own = { key: KEY, operator: "Equal", value: "team-a", effect: "NoSchedule" };
  let alice: Objects;

  beforeAll(async () => {
    // alice may create Pods in namespace apps, and nothing else.
    await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "apps" } });
    await admin.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "alice", namespace: "apps" } });
    await admin.create({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "pods", namespace: "apps" },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["create", "get"] }],
    });
    await admin.create({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "alice-pods", namespace: "apps" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pods" },
      subjects: [{ kind: "ServiceAccount", name: "alice", namespace: "apps" }],
    });
    // The host namespace of tenant team-a, labelled as the provisioner labels it.
    await admin.create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: "tp-team-a",
        labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "team-a" },
      },
    });
    for (const ns of ["apps", "tp-team-a"]) {
      await waitFor(async () => !!(await admin.get("v1", "ServiceAccount", "default", ns)), {
        timeoutMs: 30_000,
        description: `ServiceAccount ${ns}/default`,
      });
    }
    alice = new Objects(await serviceAccountKubeConfig(host, "apps", "alice"), "alice");
  });

  it("refuses a non-admin's Pod outside tp-team-a tolerating team-a's taint, in the policy's words", async () => {
    // A Pod without the toleration is admitted: the refusal below is the policy's, not RBAC's.
    const plain = await tryCreate(alice, pod("plain", "apps", []));
    expect(plain.stored?.metadata?.uid).toBeDefined();

    // The policy takes effect moments after it is created: until it refuses, remove what got in.
    const refused = await waitFor(
      async () => {
        const answer = await tryCreate(alice, pod("intruder", "apps", [own]));
        if (answer.stored)
          await admin.delete({ apiVersion: "v1", kind: "Pod", metadata: { name: "intruder", namespace: "apps" } });
        return answer.code ? answer : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: "the dedicated-nodes policy to refuse alice's Pod" },
    );
    expect(refused.code).toBe(403);
    expect(refused.message).toContain(policy);
    expect(refused.message).toContain(
      "a Pod in namespace apps may not tolerate tenantplane.io/dedicated=team-a: those host nodes are reserved for TenantCluster team-a",
    );
  });

  it("refuses operator Exists on the key, and a toleration of everything outside the listed namespaces", async () => {
    const exists = await tryCreate(alice, pod("exists", "apps", [{ key: KEY, operator: "Exists" }]));
    expect(exists.code).toBe(403);
    expect(exists.message).toContain("may not tolerate tenantplane.io/dedicated with operator Exists");
    const everything = await tryCreate(alice, pod("everything", "apps", [{ operator: "Exists" }]));
    expect(everything.code).toBe(403);
    expect(everything.message).toContain("may not tolerate every taint");
    expect(everything.message).toContain("admissionPolicy.dedicatedNodes.tolerateEverythingNamespaces (kube-system)");
    // A node agent in kube-system may, as the chart's default allows.
    const agent = await tryCreate(admin, pod("agent", "kube-system", [{ operator: "Exists" }]));
    expect(agent.stored?.spec).toMatchObject({ tolerations: [{ operator: "Exists" }] });
  });

  it("admits the tenant's own Pod in tp-team-a, and refuses another tenant's toleration there, admins included", async () => {
    const ownPod = await tryCreate(admin, pod("own", "tp-team-a", [own]));
    expect(ownPod.code).toBeUndefined();
    const stored = await admin.get<KubernetesObject & { spec: { tolerations: unknown[] } }>(
      "v1",
      "Pod",
      "own",
      "tp-team-a",
    );
    expect(stored?.spec.tolerations).toContainEqual(own);
    const other = await tryCreate(admin, pod("other", "tp-team-a", [{ ...own, value: "team-b" }]));
    expect(other.code).toBe(403);
    expect(other.message).toContain("may not tolerate tenantplane.io/dedicated=team-b");
  });
});
