import { defaultSyncPolicySpec, type SyncPolicySpec } from "@tenantplane/api";
import { hostName } from "@tenantplane/mapping";
import { defaultHostRules, parseTenantObject, transform, type PlannedDecisionWithObject } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import { planKey, planPass, type ObjectMeta, type TenantPlanContext } from "./key-plan.js";
import { encodeKey, type SourceKey } from "./source-key.js";

const tenant = "acme";
const hostNs = "tp-acme";
const hashKey = "test-key";

function ctx(
  completeKinds: string[] = ["ConfigMap"],
  policy: SyncPolicySpec = defaultSyncPolicySpec,
): TenantPlanContext {
  return { tenant, policy, rules: defaultHostRules, hashKey, completeKinds };
}

function configMap(namespace: string, name: string, data: Record<string, string> = { a: "1" }) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { namespace, name }, data };
}

function copyOf(source: ReturnType<typeof configMap>) {
  const parsed = parseTenantObject(source);
  if (!parsed.ok) throw new Error(parsed.problem);
  return transform(parsed.object, tenant, { hashKey });
}

function foreign(name: string, kind = "ConfigMap") {
  return { apiVersion: "v1", kind, metadata: { namespace: hostNs, name, labels: { app: "other" } } };
}

// A small deterministic generator, so a failure reproduces.
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const keyOf = (d: PlannedDecisionWithObject) =>
  encodeKey({ kind: d.kind, namespace: d.tenantRef.namespace, name: d.tenantRef.name });
const summary = (ds: readonly PlannedDecisionWithObject[]) =>
  ds.map((d) => `${d.action} ${d.hostRef.name} ${d.reason}`).sort();

// The host objects the syncer hands planKey: the one at the target name and copies naming the key.
function hostsFor(key: SourceKey, hosts: readonly unknown[]) {
  const target = hostName({ tenant, namespace: key.namespace, name: key.name }).name;
  return hosts.filter((h) => {
    const meta = (h as ObjectMeta).metadata ?? {};
    return (
      meta.name === target ||
      (meta.annotations?.["tenantplane.io/virtual-name"] === key.name &&
        meta.annotations?.["tenantplane.io/virtual-namespace"] === key.namespace)
    );
  });
}

describe("planKey", () => {
  it("gives every source the same answer as the full pass (random worlds, deleted namespaces and deleting sources included)", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const random = rng(seed);
      const sources: Record<string, unknown>[] = [];
      const hosts: unknown[] = [];
      for (let i = 0; i < 12; i++) {
        const ns = random() < 0.4 ? "a" : random() < 0.5 ? "b" : "gone";
        const src: Record<string, unknown> = configMap(ns, `cm${i}`, { v: String(Math.floor(random() * 3)) });
        if (random() < 0.15) (src.metadata as Record<string, unknown>).deletionTimestamp = "2026-01-01T00:00:00Z";
        const roll = random();
        if (roll < 0.6) sources.push(src);
        if (roll > 0.3 && roll < 0.8)
          hosts.push(copyOf(configMap(ns, `cm${i}`, { v: String(Math.floor(random() * 3)) })));
        if (roll >= 0.9) hosts.push(foreign(hostName({ tenant, namespace: ns, name: `cm${i}` }).name));
      }
      const deletedNamespaces = new Set(["gone"]);
      const full = planPass({ ...ctx(), sources, hosts, deletedNamespaces });
      const keys = new Set<string>(
        sources.map((s) => {
          const m = s.metadata as { namespace: string; name: string };
          return encodeKey({ kind: "ConfigMap", namespace: m.namespace, name: m.name });
        }),
      );
      for (const d of full.decisions) keys.add(keyOf(d));
      for (const text of keys) {
        const [kind, namespace, name] = text.split("/") as [string, string, string];
        const key = { kind, namespace, name };
        const source = sources.find((s) => {
          const m = s.metadata as { namespace: string; name: string };
          return m.namespace === namespace && m.name === name;
        });
        const one = planKey({
          ...ctx(),
          key,
          source,
          namespaceDeleted: deletedNamespaces.has(namespace),
          hosts: hostsFor(key, hosts),
        });
        expect(summary(one.decisions), `seed ${seed} key ${text}`).toEqual(
          summary(full.decisions.filter((d) => keyOf(d) === text)),
        );
      }
    }
  });

  it("never deletes while the kind's listings are not complete and current", () => {
    const key = { kind: "ConfigMap", namespace: "a", name: "y" };
    const hosts = [copyOf(configMap("a", "y"))];
    const base = { key, source: undefined, namespaceDeleted: false, hosts };
    expect(planKey({ ...ctx([]), ...base }).decisions).toEqual([]);
    expect(planKey({ ...ctx(), ...base }).decisions.map((d) => d.action)).toEqual(["Delete"]);
  });

  it("deletes the copy of a source whose namespace was deleted, saying so", () => {
    const src = configMap("a", "y");
    const key = { kind: "ConfigMap", namespace: "a", name: "y" };
    const result = planKey({ ...ctx(), key, source: src, namespaceDeleted: true, hosts: [copyOf(src)] });
    expect(result.decisions.map((d) => [d.action, d.reason])).toEqual([
      ["Delete", "namespace a deleted in tenant acme"],
    ]);
  });

  it("deletes the copy of a source being deleted in the tenant, saying so", () => {
    const src = {
      ...configMap("a", "y"),
      metadata: { namespace: "a", name: "y", deletionTimestamp: "2026-01-01T00:00:00Z" },
    };
    const key = { kind: "ConfigMap", namespace: "a", name: "y" };
    const result = planKey({
      ...ctx(),
      key,
      source: src,
      namespaceDeleted: false,
      hosts: [copyOf(configMap("a", "y"))],
    });
    expect(result.decisions.map((d) => [d.action, d.reason])).toEqual([
      ["Delete", "source ConfigMap a/y is being deleted in tenant acme"],
    ]);
  });

  it("deletes the copies of a kind that left the SyncPolicy once its host listing is complete, and leaves foreign objects", () => {
    const src = configMap("a", "y");
    const key = { kind: "ConfigMap", namespace: "a", name: "y" };
    const podsOnly: SyncPolicySpec = { toHost: [{ kind: "Pod" }] };
    const base = { key, source: src, namespaceDeleted: false, hosts: [copyOf(src), foreign("z")] };
    expect(planKey({ ...ctx(["Pod"], podsOnly), ...base }).decisions).toEqual([]);
    const result = planKey({ ...ctx(["Pod", "ConfigMap"], podsOnly), ...base });
    expect(result.decisions.map((d) => [d.action, d.hostRef.name])).toEqual([["Delete", "y-x-a-x-acme"]]);
    expect(result.decisions[0]?.reason).toMatch(/left the SyncPolicy/);
  });
});

describe("planPass", () => {
  it("plans no Delete for a kind whose listings are not complete and current", () => {
    const base = { sources: [], hosts: [copyOf(configMap("a", "gone"))], deletedNamespaces: new Set<string>() };
    expect(planPass({ ...ctx([]), ...base }).decisions).toEqual([]);
    expect(planPass({ ...ctx(), ...base }).decisions.map((d) => d.action)).toEqual(["Delete"]);
  });

  it("treats the objects of a deleted tenant namespace as gone", () => {
    const src = configMap("a", "y");
    const result = planPass({ ...ctx(), sources: [src], hosts: [copyOf(src)], deletedNamespaces: new Set(["a"]) });
    expect(result.decisions.map((d) => d.reason)).toEqual(["namespace a deleted in tenant acme"]);
  });

  it("keeps an unchanged copy in sync with no decision", () => {
    const src = configMap("a", "y");
    const result = planPass({ ...ctx(), sources: [src], hosts: [copyOf(src)], deletedNamespaces: new Set() });
    expect(result.decisions).toEqual([]);
    expect(result.inSync.map((t) => t.hostRef.name)).toEqual(["y-x-a-x-acme"]);
  });
});

describe("a bound tenant Pod that lost its host copy", () => {
  const pod = (nodeName?: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { namespace: "web", name: "app" },
    spec: { containers: [{ name: "app", image: "nginx" }], ...(nodeName ? { nodeName } : {}) },
  });
  const podCtx = ctx(["Pod"]);
  const key = { kind: "Pod", namespace: "web", name: "app" };

  it("is not made again on the host, by one key or by a full pass", () => {
    expect(planKey({ ...podCtx, key, source: pod("node-a"), namespaceDeleted: false, hosts: [] }).decisions).toEqual(
      [],
    );
    expect(
      planPass({ ...podCtx, sources: [pod("node-a")], hosts: [], deletedNamespaces: new Set() }).decisions,
    ).toEqual([]);
  });

  it("while an unbound one is created, and a bound one with its copy stays in sync", () => {
    const created = planKey({ ...podCtx, key, source: pod(), namespaceDeleted: false, hosts: [] }).decisions;
    expect(created.map((d) => d.action)).toEqual(["Create"]);
    const parsed = parseTenantObject(pod());
    if (!parsed.ok) throw new Error(parsed.problem);
    const copy = transform(parsed.object, tenant, { hashKey });
    const pass = planPass({ ...podCtx, sources: [pod("node-a")], hosts: [copy], deletedNamespaces: new Set() });
    expect(pass.decisions).toEqual([]);
    expect(pass.inSync).toHaveLength(1);
  });
});

describe("sources held back beyond the tenant's limits", () => {
  const reason = "ConfigMap shop/big is 2 MiB, over the limit";
  const big = configMap("shop", "big", { k: "v" });
  const key = { kind: "ConfigMap", namespace: "shop", name: "big" };
  const heldBack = (k: SourceKey) => (encodeKey(k) === encodeKey(key) ? reason : undefined);

  it("planKey: a Skip with the limit's reason, and a copy made before is kept, not deleted or updated", () => {
    const stale = copyOf(configMap("shop", "big", { k: "old" }));
    for (const hosts of [[], [stale]]) {
      const plan = planKey({ ...ctx(), heldBack, key, source: big, namespaceDeleted: false, hosts });
      expect(plan.decisions.map((d) => [d.action, d.hostRef.name, d.reason])).toEqual([
        ["Skip", hostName({ tenant, namespace: "shop", name: "big" }).name, reason],
      ]);
      expect(plan.decisions[0]?.object).toBeUndefined();
    }
  });

  it("planKey: a held-back source that is gone is deleted as usual", () => {
    const plan = planKey({ ...ctx(), heldBack, key, source: undefined, namespaceDeleted: false, hosts: [copyOf(big)] });
    expect(plan.decisions.map((d) => d.action)).toEqual(["Delete"]);
  });

  it("planPass: the same Skip, once, while the other sources plan as before", () => {
    const small = configMap("shop", "small");
    const pass = planPass({
      ...ctx(),
      heldBack,
      sources: [big, small],
      hosts: [copyOf(configMap("shop", "big", { k: "old" }))],
      deletedNamespaces: new Set(),
    });
    expect(summary(pass.decisions)).toEqual([
      `Create ${hostName({ tenant, namespace: "shop", name: "small" }).name} host ConfigMap tp-acme/${hostName({ tenant, namespace: "shop", name: "small" }).name} absent`,
      `Skip ${hostName({ tenant, namespace: "shop", name: "big" }).name} ${reason}`,
    ]);
  });
});
