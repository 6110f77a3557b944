import { defaultSyncPolicySpec, type SyncPolicySpec } from "@tenantplane/api";
import { hostName } from "@tenantplane/mapping";
import { parseTenantObject, transform, type PlannedDecisionWithObject } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import { planKey, planPass, type ObjectMeta } from "./key-plan.js";
import { encodeKey, type SourceKey } from "./source-key.js";

const tenant = "acme";
const hostNs = "tp-acme";

function configMap(namespace: string, name: string, data: Record<string, string> = { a: "1" }) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { namespace, name }, data };
}

function copyOf(source: ReturnType<typeof configMap>) {
  const parsed = parseTenantObject(source);
  if (!parsed.ok) throw new Error(parsed.problem);
  return transform(parsed.object, tenant);
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

function keyOf(d: PlannedDecisionWithObject): string {
  return encodeKey({ kind: d.kind, namespace: d.tenantRef.namespace, name: d.tenantRef.name });
}

function summary(ds: readonly PlannedDecisionWithObject[]) {
  return ds.map((d) => `${d.action} ${d.hostRef.name} ${d.reason}`).sort();
}

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
  it("gives every source the same answer as the full pass (random worlds)", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const random = rng(seed);
      const sources: ReturnType<typeof configMap>[] = [];
      const hosts: unknown[] = [];
      for (let i = 0; i < 12; i++) {
        const ns = random() < 0.5 ? "a" : "b";
        const src = configMap(ns, `cm${i}`, { v: String(Math.floor(random() * 3)) });
        const roll = random();
        if (roll < 0.6) sources.push(src);
        if (roll > 0.3 && roll < 0.8)
          hosts.push(copyOf(configMap(ns, `cm${i}`, { v: String(Math.floor(random() * 3)) })));
        if (roll >= 0.9) hosts.push(foreign(hostName({ tenant, namespace: ns, name: `cm${i}` }).name));
      }
      const policy: SyncPolicySpec = defaultSyncPolicySpec;
      const full = planPass({
        tenant,
        policy,
        policyName: undefined,
        sources,
        hosts,
        deletedNamespaces: new Set(),
        completeKinds: new Set(["ConfigMap"]),
      });
      const keys = new Set<string>([
        ...sources.map((s) => encodeKey({ kind: "ConfigMap", namespace: s.metadata.namespace, name: s.metadata.name })),
      ]);
      for (const d of full.decisions) keys.add(keyOf(d));
      for (const text of keys) {
        const [kind, namespace, name] = text.split("/") as [string, string, string];
        const key = { kind, namespace, name };
        const source = sources.find((s) => s.metadata.namespace === namespace && s.metadata.name === name);
        const one = planKey({
          tenant,
          policy,
          policyName: undefined,
          key,
          source,
          namespaceDeleted: false,
          hosts: hostsFor(key, hosts),
        });
        expect(summary(one.decisions), `seed ${seed} key ${text}`).toEqual(
          summary(full.decisions.filter((d) => keyOf(d) === text)),
        );
      }
    }
  });

  it("never turns another source's copy at the target name into a Delete when the source is absent", () => {
    const other = copyOf(configMap("b", "x"));
    const key = { kind: "ConfigMap", namespace: "a", name: "y" };
    const result = planKey({
      tenant,
      policy: defaultSyncPolicySpec,
      policyName: undefined,
      key,
      source: undefined,
      namespaceDeleted: false,
      hosts: [other, foreign("y-x-a-x-acme")],
    });
    expect(result.decisions).toEqual([]);
  });

  it("deletes the copy of a source whose namespace was deleted, saying so", () => {
    const src = configMap("a", "y");
    const key = { kind: "ConfigMap", namespace: "a", name: "y" };
    const result = planKey({
      tenant,
      policy: defaultSyncPolicySpec,
      policyName: undefined,
      key,
      source: src,
      namespaceDeleted: true,
      hosts: [copyOf(src)],
    });
    expect(result.decisions.map((d) => [d.action, d.reason])).toEqual([
      ["Delete", "namespace a deleted in tenant acme"],
    ]);
  });

  it("deletes the copies of a kind that left the SyncPolicy, naming the policy", () => {
    const src = configMap("a", "y");
    const key = { kind: "ConfigMap", namespace: "a", name: "y" };
    const result = planKey({
      tenant,
      policy: { toHost: [{ kind: "Pod" }] },
      policyName: "workloads",
      key,
      source: src,
      namespaceDeleted: false,
      hosts: [copyOf(src), foreign("y-x-a-x-acme")],
    });
    expect(result.decisions.map((d) => [d.action, d.hostRef.name, d.reason])).toEqual([
      ["Delete", "y-x-a-x-acme", "kind ConfigMap removed from SyncPolicy workloads toHost"],
    ]);
  });
});

describe("a source being deleted", () => {
  it("has its copy deleted, incrementally and in the full pass, with the same reason", () => {
    const src = {
      ...configMap("a", "y"),
      metadata: { namespace: "a", name: "y", deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: ["x"] },
    };
    const copy = copyOf(configMap("a", "y"));
    const key = { kind: "ConfigMap", namespace: "a", name: "y" };
    const one = planKey({
      tenant,
      policy: defaultSyncPolicySpec,
      policyName: undefined,
      key,
      source: src,
      namespaceDeleted: false,
      hosts: [copy],
    });
    const all = planPass({
      tenant,
      policy: defaultSyncPolicySpec,
      policyName: undefined,
      sources: [src],
      hosts: [copy],
      deletedNamespaces: new Set(),
      completeKinds: new Set(["ConfigMap"]),
    });
    expect(one.decisions.map((d) => [d.action, d.reason])).toEqual([
      ["Delete", "source ConfigMap a/y is being deleted in tenant acme"],
    ]);
    expect(summary(all.decisions)).toEqual(summary(one.decisions));
  });
});

describe("planPass", () => {
  it("plans no Delete for a kind whose listings are not complete and current", () => {
    const orphan = copyOf(configMap("a", "gone"));
    const base = {
      tenant,
      policy: defaultSyncPolicySpec,
      policyName: undefined,
      sources: [],
      hosts: [orphan],
      deletedNamespaces: new Set<string>(),
    };
    expect(planPass({ ...base, completeKinds: new Set() }).decisions).toEqual([]);
    expect(planPass({ ...base, completeKinds: new Set(["ConfigMap"]) }).decisions.map((d) => d.action)).toEqual([
      "Delete",
    ]);
  });

  it("deletes copies of kinds outside the policy only when their host listing is complete", () => {
    const copy = copyOf(configMap("a", "y"));
    const base = {
      tenant,
      policy: { toHost: [{ kind: "Pod" as const }] },
      policyName: "workloads",
      sources: [],
      hosts: [copy, foreign("z")],
      deletedNamespaces: new Set<string>(),
    };
    expect(planPass({ ...base, completeKinds: new Set(["Pod"]) }).decisions).toEqual([]);
    expect(planPass({ ...base, completeKinds: new Set(["Pod", "ConfigMap"]) }).decisions.map((d) => d.reason)).toEqual([
      "kind ConfigMap removed from SyncPolicy workloads toHost",
    ]);
  });

  it("treats the objects of a deleted tenant namespace as gone", () => {
    const src = configMap("a", "y");
    const result = planPass({
      tenant,
      policy: defaultSyncPolicySpec,
      policyName: undefined,
      sources: [src],
      hosts: [copyOf(src)],
      deletedNamespaces: new Set(["a"]),
      completeKinds: new Set(["ConfigMap"]),
    });
    expect(result.decisions.map((d) => d.reason)).toEqual(["namespace a deleted in tenant acme"]);
  });
});
