import { defaultSyncPolicySpec, type SyncPolicySpec } from "@tenantplane/api";
import { reverseMapping } from "@tenantplane/mapping";
import { describe, expect, it } from "vitest";
import { explanation, plan, planKey, type PlanInput } from "./plan.js";
import { transform } from "./transform.js";
import { KubeObjectSchema } from "./kube-object.js";

const tenant = "dev";

function obj(kind: string, namespace: string, name: string, rest: Record<string, unknown> = {}) {
  return { apiVersion: "v1", kind, metadata: { name, namespace }, ...rest };
}

function hostCopy(value: ReturnType<typeof obj>, forTenant = tenant) {
  return transform(KubeObjectSchema.parse(value), forTenant);
}

function run(partial: Partial<PlanInput>) {
  return plan({ tenant, policy: defaultSyncPolicySpec, tenantObjects: [], hostObjects: [], ...partial });
}

const summary = (entries: Array<{ action: string; kind: string; tenantRef: { namespace: string; name: string } }>) =>
  entries.map((d) => `${d.action} ${d.kind} ${d.tenantRef.namespace}/${d.tenantRef.name}`);

describe("plan", () => {
  it("creates an absent host copy, carrying the desired object", () => {
    const source = obj("Pod", "default", "web", { spec: { containers: [] } });
    const { decisions, ignored, inSync } = run({ tenantObjects: [source] });
    expect(decisions).toEqual([
      {
        tenant,
        kind: "Pod",
        action: "Create",
        tenantRef: { namespace: "default", name: "web" },
        hostRef: { namespace: "tp-dev", name: "web-x-default-x-dev" },
        hashed: false,
        reason: expect.stringMatching(/^host Pod tp-dev\/web-x-default-x-dev absent; tenant API tp-dev\/k3s at /),
        object: hostCopy(source),
      },
    ]);
    expect(ignored).toEqual([]);
    expect(inSync).toEqual([]);
  });

  it("does nothing for a host copy with the desired content hash", () => {
    const source = obj("ConfigMap", "default", "c", { data: { a: "1" } });
    const result = run({ tenantObjects: [source], hostObjects: [hostCopy(source)] });
    expect(result.decisions).toEqual([]);
    expect(summary(result.inSync.map((t) => ({ ...t, action: "InSync" })))).toEqual(["InSync ConfigMap default/c"]);
  });

  it("ignores fields the host added to its copy; only the content hash counts", () => {
    const source = obj("Service", "default", "api", { spec: { selector: { app: "api" } } });
    const copy = hostCopy(source);
    const withHostFields = { ...copy, spec: { ...(copy["spec"] as object), clusterIP: "10.96.0.7" }, status: {} };
    expect(run({ tenantObjects: [source], hostObjects: [withHostFields] }).decisions).toEqual([]);
  });

  it("updates a copy whose content hash differs, keeping both hashes out of the reason", () => {
    const old = hostCopy(obj("Secret", "default", "c", { data: { a: "MQ==" } }));
    const source = obj("Secret", "default", "c", { data: { a: "Mg==" } });
    const [decision] = run({ tenantObjects: [source], hostObjects: [old] }).decisions;
    const before = old.metadata.annotations["tenantplane.io/content-hash"] ?? "";
    const after = hostCopy(source).metadata.annotations["tenantplane.io/content-hash"] ?? "";
    expect(decision).toMatchObject({
      action: "Update",
      reason: "host copy differs from the desired object",
      object: hostCopy(source),
    });
    expect(decision?.reason).not.toContain(before);
    expect(decision?.reason).not.toContain(after);
  });

  it("keys the content hash with hashKey, so the recorded hash depends on the installation secret", () => {
    const source = obj("Secret", "default", "s", { data: { password: "aHVudGVyMg==" } });
    const plain = run({ tenantObjects: [source] }).decisions[0]?.object;
    const keyed = run({ tenantObjects: [source], hashKey: "installation-secret" }).decisions[0]?.object;
    const other = run({ tenantObjects: [source], hashKey: "another-secret" }).decisions[0]?.object;
    const hashOf = (o: typeof plain) => o?.metadata.annotations["tenantplane.io/content-hash"];
    expect(hashOf(keyed)).toMatch(/^[0-9a-f]{16}$/);
    expect(hashOf(keyed)).not.toBe(hashOf(plain));
    expect(hashOf(keyed)).not.toBe(hashOf(other));
    // The keyed copy is in sync under its own key only.
    const copy = keyed as NonNullable<typeof keyed>;
    expect(run({ tenantObjects: [source], hostObjects: [copy], hashKey: "installation-secret" }).decisions).toEqual([]);
  });

  it("updates a managed copy of this tenant that lost its content hash or reverse mapping", () => {
    const source = obj("ConfigMap", "default", "c");
    const copy = hostCopy(source);
    const { "tenantplane.io/content-hash": _hash, ...noHash } = copy.metadata.annotations;
    const { "tenantplane.io/virtual-name": _name, ...noName } = copy.metadata.annotations;
    const reasons = [noHash, noName].map(
      (annotations) =>
        run({ tenantObjects: [source], hostObjects: [{ ...copy, metadata: { ...copy.metadata, annotations } }] })
          .decisions[0]?.reason,
    );
    expect(reasons).toEqual(["host copy has no content hash", "host copy has incomplete reverse-mapping metadata"]);
  });

  it("skips a name held by a foreign object and never deletes foreign objects", () => {
    const foreign = {
      kind: "ConfigMap",
      metadata: { name: "c-x-default-x-dev", namespace: "tp-dev", labels: { app: "x" } },
    };
    const stray = { kind: "Secret", metadata: { name: "unrelated", namespace: "tp-dev" } };
    const { decisions } = run({ tenantObjects: [obj("ConfigMap", "default", "c")], hostObjects: [foreign, stray] });
    expect(decisions).toMatchObject([
      { action: "Skip", reason: "held by foreign object (not managed by tenantplane)" },
    ]);
  });

  it("skips a name held by another source, naming it", () => {
    const other = hostCopy(obj("ConfigMap", "shop", "c"));
    const forged = { ...other, metadata: { ...other.metadata, name: "c-x-default-x-dev" } };
    const foreignTenant = hostCopy(obj("Secret", "default", "s"), "other");
    const moved = {
      ...foreignTenant,
      metadata: { ...foreignTenant.metadata, name: "s-x-default-x-dev", namespace: "tp-dev" },
    };
    const { decisions } = run({
      tenantObjects: [obj("ConfigMap", "default", "c"), obj("Secret", "default", "s")],
      hostObjects: [forged, moved],
    });
    expect(decisions.map((d) => [d.action, d.reason])).toEqual([
      ["Skip", "held by tenant dev/shop/c"],
      ["Skip", "held by tenant other/default/s"],
      // The stray copy is removed even though another source wants its name; that source waits for it.
      ["Delete", "stray copy: source ConfigMap shop/c maps to tp-dev/c-x-shop-x-dev"],
    ]);
  });

  it("skips a name held by a managed object of another tenant with incomplete metadata", () => {
    const held = {
      kind: "ConfigMap",
      metadata: {
        name: "c-x-default-x-dev",
        namespace: "tp-dev",
        labels: reverseMapping({ tenant: "other", namespace: "x", name: "y" }, "ConfigMap").labels,
      },
    };
    const [decision] = run({ tenantObjects: [obj("ConfigMap", "default", "c")], hostObjects: [held] }).decisions;
    expect(decision?.reason).toBe(
      "held by object managed by tenantplane with incomplete reverse mapping (tenant other)",
    );
  });

  it("deletes managed copies of this tenant whose source is gone, and nothing else", () => {
    const gone = hostCopy(obj("Secret", "default", "old"));
    const otherTenant = {
      ...hostCopy(obj("Secret", "default", "old"), "other"),
      metadata: { ...hostCopy(obj("Secret", "default", "x"), "other").metadata, namespace: "tp-dev" },
    };
    const otherNamespace = { ...gone, metadata: { ...gone.metadata, namespace: "tp-prod" } };
    const { decisions } = run({ hostObjects: [gone, otherTenant, otherNamespace] });
    expect(decisions).toEqual([
      {
        tenant,
        kind: "Secret",
        action: "Delete",
        tenantRef: { namespace: "default", name: "old" },
        hostRef: { namespace: "tp-dev", name: "old-x-default-x-dev" },
        hashed: false,
        reason: "source Secret default/old gone from tenant dev",
      },
    ]);
  });

  it("never deletes or overwrites other tenantplane objects in the host namespace (no kind label)", () => {
    const labels = { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": tenant };
    const kubeconfig = { kind: "Secret", metadata: { name: "dev-kubeconfig", namespace: "tp-dev", labels } };
    const controlPlane = {
      kind: "Pod",
      metadata: { name: "k3s-0", namespace: "tp-dev", labels: { ...labels, "tenantplane.io/control-plane": "true" } },
    };
    const atTarget = { kind: "ConfigMap", metadata: { name: "c-x-default-x-dev", namespace: "tp-dev", labels } };
    const { decisions } = run({
      tenantObjects: [obj("ConfigMap", "default", "c")],
      hostObjects: [kubeconfig, controlPlane, atTarget],
    });
    expect(decisions.map((d) => [d.action, d.reason])).toEqual([
      ["Skip", "held by a tenantplane object that is not a sync copy (no tenantplane.io/kind label)"],
    ]);
  });

  it("finds a host object's kind from its kind label when the list item has none", () => {
    const { kind: _kind, ...withoutKind } = hostCopy(obj("Secret", "default", "old"));
    expect(summary(run({ hostObjects: [withoutKind] }).decisions)).toEqual(["Delete Secret default/old"]);
  });

  it("deletes a copy whose source stopped being synced, saying why", () => {
    const copy = hostCopy(obj("ServiceAccount", "default", "default"));
    const { decisions } = run({ tenantObjects: [obj("ServiceAccount", "default", "default")], hostObjects: [copy] });
    expect(decisions[0]?.action).toBe("Delete");
    expect(decisions[0]?.reason).toMatch(
      /^source ServiceAccount default\/default is not synced: ServiceAccount default exists/,
    );
  });

  it("deletes a managed copy with no readable source identity", () => {
    const copy = hostCopy(obj("Secret", "default", "s"));
    const broken = { ...copy, metadata: { ...copy.metadata, annotations: {} } };
    expect(run({ hostObjects: [broken] }).decisions[0]).toMatchObject({
      action: "Delete",
      tenantRef: { namespace: "", name: "s-x-default-x-dev" },
      reason: "managed copy has incomplete reverse-mapping metadata and no source claims it",
    });
  });

  it("never deletes copies of kinds outside the policy unless their host listing is complete", () => {
    const policy: SyncPolicySpec = { toHost: [{ kind: "Pod" }] };
    expect(run({ policy, hostObjects: [hostCopy(obj("Secret", "default", "old"))] }).decisions).toEqual([]);
  });

  it("deletes copies of a kind that left the policy when its host listing is complete, naming the change", () => {
    const policy: SyncPolicySpec = { toHost: [{ kind: "Pod" }] };
    const secret = hostCopy(obj("Secret", "default", "kept"));
    const result = run({
      policy,
      tenantObjects: [obj("Secret", "default", "kept")],
      hostObjects: [secret, hostCopy(obj("ConfigMap", "default", "c"))],
      completeKinds: ["Pod", "Secret"],
    });
    expect(result.decisions.map((d) => [d.action, d.kind, d.reason])).toEqual([
      ["Delete", "Secret", "kind Secret left the SyncPolicy: toHost no longer lists it"],
    ]);
  });

  it("collects garbage only for kinds whose listings are complete", () => {
    const gone = [hostCopy(obj("Secret", "default", "old")), hostCopy(obj("ConfigMap", "default", "old"))];
    // The Secret listing failed: its copies must survive, while the complete ConfigMap listing still collects.
    const partial = run({ hostObjects: gone, completeKinds: ["ConfigMap", "Pod"] });
    expect(summary(partial.decisions)).toEqual(["Delete ConfigMap default/old"]);
    expect(run({ hostObjects: gone, completeKinds: [] }).decisions).toEqual([]);
    // Creates and Updates do not depend on completeness.
    const created = run({ tenantObjects: [obj("Secret", "default", "new")], completeKinds: [] });
    expect(summary(created.decisions)).toEqual(["Create Secret default/new"]);
    // Absent means every policy kind.
    expect(summary(run({ hostObjects: gone }).decisions)).toEqual([
      "Delete ConfigMap default/old",
      "Delete Secret default/old",
    ]);
  });

  it("lists kinds outside the policy as ignored, not as decisions", () => {
    const policy: SyncPolicySpec = { toHost: [{ kind: "Pod" }] };
    const result = run({
      policy,
      tenantObjects: [
        obj("Secret", "default", "s"),
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" } },
      ],
    });
    expect(result.decisions).toEqual([]);
    expect(result.ignored.map((d) => [d.action, d.reason])).toEqual([
      [
        "Skip",
        "kind Deployment not in SyncPolicy toHost (tenantplane syncs Pod, ConfigMap, Secret, Service, ServiceAccount, PersistentVolumeClaim)",
      ],
      ["Skip", "kind Secret not in SyncPolicy toHost"],
    ]);
  });

  it("ignores the tenant's system namespaces", () => {
    const result = run({
      tenantObjects: ["kube-system", "kube-public", "kube-node-lease"].map((ns) => obj("ConfigMap", ns, "c")),
    });
    expect(result.decisions).toEqual([]);
    expect(result.ignored.map((d) => d.reason)).toEqual([
      "namespace kube-node-lease belongs to the tenant's control plane and is never synced",
      "namespace kube-public belongs to the tenant's control plane and is never synced",
      "namespace kube-system belongs to the tenant's control plane and is never synced",
    ]);
  });

  it("ignores objects Kubernetes creates in every namespace", () => {
    const result = run({
      tenantObjects: [
        obj("ConfigMap", "default", "kube-root-ca.crt"),
        obj("ServiceAccount", "shop", "default"),
        obj("Secret", "shop", "builder-token", { type: "kubernetes.io/service-account-token" }),
        obj("ServiceAccount", "shop", "builder"),
      ],
    });
    expect(summary(result.ignored)).toEqual([
      "Skip ConfigMap default/kube-root-ca.crt",
      "Skip Secret shop/builder-token",
      "Skip ServiceAccount shop/default",
    ]);
    expect(summary(result.decisions)).toEqual(["Create ServiceAccount shop/builder"]);
  });

  it("never syncs the tenant's own API Service, and syncs a Service of that name elsewhere", () => {
    const result = run({
      tenantObjects: [
        obj("Service", "default", "kubernetes", { spec: { ports: [{ port: 443 }] } }),
        obj("Service", "shop", "kubernetes", { spec: { ports: [{ port: 443 }] } }),
      ],
    });
    expect(summary(result.ignored)).toEqual(["Skip Service default/kubernetes"]);
    expect(result.ignored[0]?.reason).toContain("the tenant's own API server");
    expect(summary(result.decisions)).toEqual(["Create Service shop/kubernetes"]);
  });

  it("turns malformed objects into Skips and carries on", () => {
    const result = run({
      tenantObjects: [
        "not an object",
        obj("ConfigMap", "default", "Bad_Name"),
        { apiVersion: "v1", kind: "Secret", metadata: { name: "s", labels: { n: 1 } } },
        { apiVersion: "apps/v1", kind: "Pod", metadata: { name: "p" } },
        obj("Service", "default", "1api"),
        obj("Pod", "default", "p2", { spec: { containers: "nope" } }),
        obj("ConfigMap", "default", "fine"),
      ],
    });
    expect(result.decisions.every((d) => d.action === "Create" || d.malformed === true)).toBe(true);
    expect(result.decisions.map((d) => [d.action, d.reason])).toEqual([
      ["Skip", "malformed object (item 1): expected a Kubernetes object, found a string"],
      [
        "Skip",
        "malformed Service (item 5): metadata.name: a Service name starts with a letter, has no dots and at most 63 characters",
      ],
      ["Skip", expect.stringMatching(/^malformed ConfigMap \(item 2\): metadata\.name: use lowercase letters/)],
      ["Create", "host ConfigMap tp-dev/fine-x-default-x-dev absent"],
      ["Skip", "malformed Pod (item 4): apiVersion: Pod is served as v1, not apps/v1"],
      ["Skip", "cannot translate Pod default/p2 (item 6): spec.containers: expected a list"],
      ["Skip", "malformed Secret (item 3): metadata.labels.n: expected a string value"],
    ]);
  });

  it("keeps the host copy of a source that has become malformed", () => {
    const copy = hostCopy(obj("ConfigMap", "default", "c"));
    const broken = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "default", labels: { x: 1 } },
    };
    expect(summary(run({ tenantObjects: [broken], hostObjects: [copy] }).decisions)).toEqual([
      "Skip ConfigMap default/c",
    ]);
  });

  it("lets the first of two identical sources win", () => {
    const { decisions } = run({
      tenantObjects: [obj("ConfigMap", "default", "c"), obj("ConfigMap", "default", "c", { data: {} })],
    });
    expect(decisions.map((d) => [d.action, d.reason])).toEqual([
      ["Create", "host ConfigMap tp-dev/c-x-default-x-dev absent"],
      ["Skip", "duplicate of item 1: the first definition of ConfigMap default/c wins"],
    ]);
  });

  it("reports hashed host names", () => {
    const long = "a-very-long-configuration-name-that-will-not-fit-in-a-label";
    const [decision] = run({ tenantObjects: [obj("ConfigMap", "default", long)] }).decisions;
    expect(decision?.hashed).toBe(true);
    expect(decision?.hostRef.name).toMatch(/-[0-9a-f]{16}$/);
  });

  it("orders its output the same whatever the input order", () => {
    const objects = [
      obj("Pod", "b", "x"),
      obj("ConfigMap", "a", "y"),
      obj("Secret", "a", "y"),
      obj("Deployment", "a", "z"),
    ];
    const forward = run({ tenantObjects: objects });
    const backward = run({ tenantObjects: [...objects].reverse() });
    expect(backward).toEqual(forward);
    expect(summary(forward.decisions)).toEqual(["Create ConfigMap a/y", "Create Secret a/y", "Create Pod b/x"]);
  });

  it("explains decisions and ignored entries together in plan order", () => {
    const result = run({ tenantObjects: [obj("ConfigMap", "kube-system", "c"), obj("ConfigMap", "default", "c")] });
    expect(explanation(result).map((d) => d.tenantRef.namespace)).toEqual(["default", "kube-system"]);
  });

  it("notes a reference left in place whose kind the policy does not sync (a Pod's subdomain Service)", () => {
    const policy: SyncPolicySpec = { toHost: [{ kind: "Pod" }] };
    const pod = obj("Pod", "default", "web", { spec: { subdomain: "db", containers: [] } });
    const [decision] = run({ policy, tenantObjects: [pod] }).decisions;
    expect(decision?.action).toBe("Create");
    expect(decision?.reason).toMatch(
      new RegExp(
        "^host Pod tp-dev/web-x-default-x-dev absent; refers to Service db, but SyncPolicy toHost does not list Service: " +
          "no host copy will ever exist under that name; tenant API ",
      ),
    );
    const synced = run({ tenantObjects: [pod] }).decisions.find((d) => d.kind === "Pod");
    expect(synced?.reason).toMatch(/^host Pod tp-dev\/web-x-default-x-dev absent; tenant API /);
  });

  it("rejects an invalid tenant name outright", () => {
    expect(() => plan({ tenant: "Dev", policy: defaultSyncPolicySpec, tenantObjects: [], hostObjects: [] })).toThrow(
      /^tenant name "Dev" must be a DNS-1123 label of at most 60 characters/,
    );
  });
});

describe("a bound tenant Pod whose host Pod is gone", () => {
  // Bound by back-sync's binding, which sets PodScheduled.
  const pod = (nodeName?: string) =>
    obj("Pod", "web", "app", {
      spec: { containers: [{ name: "app", image: "nginx" }], ...(nodeName ? { nodeName } : {}) },
      ...(nodeName ? { status: { conditions: [{ type: "PodScheduled", status: "True" }] } } : {}),
    });
  const key = { kind: "Pod", namespace: "web", name: "app" };

  it("is not made again, and explain-sync says why, by a full pass and by its key", () => {
    const lost = run({ tenantObjects: [pod("node-a")] });
    expect(lost.decisions).toEqual([]);
    expect(lost.ignored.map((d) => `${d.action} ${d.hostRef.name}: ${d.reason}`)).toEqual([
      "Skip app-x-web-x-dev: Pod web/app is bound to node node-a but its host Pod is gone: lost on the host, so the tenant sees it Failed and it is not made again",
    ]);
    const input = { tenant, policy: defaultSyncPolicySpec, tenantObjects: [pod("node-a")], hostObjects: [] };
    expect(planKey(input, key)).toEqual(lost);
  });

  it("is refused, saying so, when the tenant set spec.nodeName itself: the host scheduler places host Pods", () => {
    const chosen = obj("Pod", "web", "app", {
      spec: { containers: [{ name: "app", image: "nginx" }], nodeName: "host-node-1" },
    });
    const result = run({ tenantObjects: [chosen] });
    expect(result.decisions).toEqual([]);
    expect(result.ignored.map((d) => `${d.action} ${d.hostRef.name}: ${d.reason}`)).toEqual([
      "Skip app-x-web-x-dev: Pod web/app sets spec.nodeName host-node-1 itself: the host scheduler places every host Pod (steer it with nodeSelector or affinity), so a Pod bound in the tenant is not made and the tenant sees it Failed",
    ]);
  });

  it("while an unbound one is created, and a bound one with its copy (even a stray one) stays in sync", () => {
    expect(summary(run({ tenantObjects: [pod()] }).decisions)).toEqual(["Create Pod web/app"]);
    const synced = run({ tenantObjects: [pod("node-a")], hostObjects: [hostCopy(pod())] });
    expect(synced.decisions).toEqual([]);
    expect(synced.inSync).toHaveLength(1);
    const stray = { ...hostCopy(pod()), metadata: { ...hostCopy(pod()).metadata, name: "elsewhere" } };
    expect(summary(run({ tenantObjects: [pod("node-a")], hostObjects: [stray] }).decisions)).toEqual([
      "Create Pod web/app",
      "Delete Pod web/app",
    ]);
  });
});
