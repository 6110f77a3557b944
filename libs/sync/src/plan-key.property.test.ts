import { SYNC_KINDS, type SyncPolicySpec } from "@tenantplane/api";
import { hostName, reverseMapping } from "@tenantplane/mapping";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultHostRules } from "./host-rules.js";
import { KubeObjectSchema } from "./kube-object.js";
import {
  plan,
  type PlanInput,
  planKey,
  PlanMemo,
  planSteps,
  prepareSource,
  restrictToKey,
  type SourceKey,
} from "./plan.js";
import { transform } from "./transform.js";

/** Property budget: random worlds in which every key is planned alone and compared with the full pass. */
const WORLD_RUNS = 300;

const tenant = "dev";
// Small domains, so that objects of one world often share keys and host names.
const namespaces = fc.constantFrom("default", "kube-system");
const names = fc.constantFrom("web", "default", "x".repeat(70));
const KINDS = ["Pod", "Secret", "ServiceAccount", "Deployment"];
const kinds = fc.constantFrom(...KINDS);
const ref = fc.record({ kind: kinds, namespace: namespaces, name: names });
const data = fc.constantFrom("MQ==", "Mg==");

function source({ kind, namespace, name }: SourceKey, value: string) {
  const spec =
    kind === "Pod" ? { spec: { containers: [{ name: "c", envFrom: [{ secretRef: { name: "db" } }] }] } } : {};
  return { apiVersion: "v1", kind, metadata: { name, namespace }, data: { v: value }, ...spec };
}

function copyOf(key: SourceKey, value: string, forTenant = tenant) {
  return transform(KubeObjectSchema.parse(source(key, value)), forTenant);
}

const tenantObject = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(ref, data).map(([key, value]) => source(key, value)) },
  { weight: 1, arbitrary: ref.map(({ kind, name }) => ({ apiVersion: "v1", kind, metadata: { name: `${name}_` } })) },
  { weight: 1, arbitrary: fc.constant({ apiVersion: "v1", metadata: { name: "nameless-kind" } }) },
  { weight: 1, arbitrary: ref.map(({ kind, namespace }) => ({ apiVersion: "v1", kind, metadata: { namespace } })) },
  {
    weight: 1,
    arbitrary: ref.map(({ namespace, name }) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace },
      spec: { volumes: 3 },
    })),
  },
  // Refused by the host rules: a Skip whose old copy, if any, is deleted.
  {
    weight: 1,
    arbitrary: ref.map(({ namespace, name }) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace },
      spec: { hostNetwork: true, containers: [{ name: "c" }] },
    })),
  },
  { weight: 1, arbitrary: fc.constant("not an object") },
);

// Every way a host object can relate to a key: its own copy (current or stale), a stray
// copy at another key's name, a copy that lost its reverse mapping, another tenant's
// copy, a foreign object, a kind-label mismatch, and the tenant's own control plane.
const hostObject = fc.oneof(
  fc.tuple(ref, data).map(([key, value]) => (key.kind === "Deployment" ? source(key, value) : copyOf(key, value))),
  fc.tuple(ref, ref, data).map(([key, at, value]) => {
    const copy = copyOf({ ...key, kind: at.kind }, value);
    return { ...copy, metadata: { ...copy.metadata, name: hostName({ tenant, ...at }).name } };
  }),
  ref.map((key) => {
    const copy = copyOf(key, "MQ==");
    return { ...copy, metadata: { ...copy.metadata, annotations: {} } };
  }),
  ref.map((key) => ({
    kind: key.kind,
    metadata: {
      name: hostName({ tenant, ...key }).name,
      namespace: "tp-dev",
      ...reverseMapping({ tenant: "other", namespace: key.namespace, name: key.name }, key.kind),
    },
  })),
  ref.map((key) => ({
    kind: key.kind,
    metadata: { name: hostName({ tenant, ...key }).name, namespace: "tp-dev", labels: { app: "foreign" } },
  })),
  fc.tuple(ref, kinds).map(([key, label]) => {
    const copy = copyOf(key, "MQ==");
    return {
      ...copy,
      metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, "tenantplane.io/kind": label } },
    };
  }),
  fc.record({ kind: kinds, name: fc.constantFrom("dev-kubeconfig", "dev-pki", "k3s-0") }).map(({ kind, name }) => ({
    kind,
    metadata: {
      name,
      namespace: "tp-dev",
      labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": tenant },
    },
  })),
);

const policy: fc.Arbitrary<SyncPolicySpec> = fc
  .subarray(SYNC_KINDS.filter((kind) => KINDS.includes(kind)))
  .map((ks) => ({ toHost: ks.map((kind) => ({ kind })) }));

const world: fc.Arbitrary<PlanInput> = fc.record({
  tenant: fc.constant(tenant),
  policy,
  tenantObjects: fc.array(tenantObject, { maxLength: 10 }),
  hostObjects: fc.array(hostObject, { maxLength: 10 }),
  completeKinds: fc.option(fc.subarray(KINDS), { nil: undefined }),
});

/** Every key the world mentions: those in the full plan, plus a fixed grid of keys that may not appear at all. */
function keysOf(input: PlanInput): SourceKey[] {
  const full = plan(input);
  const keys = new Map<string, SourceKey>();
  const add = (key: SourceKey) => keys.set(JSON.stringify([key.kind, key.namespace, key.name]), key);
  for (const entry of [...full.decisions, ...full.ignored, ...full.inSync])
    add({ kind: entry.kind, ...entry.tenantRef });
  for (const kind of ["Pod", "Secret"])
    for (const name of ["web", "db", "x".repeat(70)]) add({ kind, namespace: "default", name });
  return [...keys.values()];
}

describe("planKey (property)", () => {
  it("equals the full pass restricted to the key, for every key of any world", () => {
    fc.assert(
      fc.property(world, (input) => {
        const full = plan(input);
        for (const key of keysOf(input)) {
          expect(planKey(input, key)).toEqual(restrictToKey(full, tenant, key));
        }
      }),
      { numRuns: WORLD_RUNS },
    );
  });

  it("restricted results cover the whole plan: no entry belongs to no key", () => {
    fc.assert(
      fc.property(world, (input) => {
        const full = plan(input);
        const keys = keysOf(input);
        const covered = (entries: readonly object[], pick: (r: ReturnType<typeof plan>) => readonly object[]) =>
          entries.every((entry) => keys.some((key) => pick(restrictToKey(full, tenant, key)).includes(entry)));
        expect(covered(full.decisions, (r) => r.decisions)).toBe(true);
        expect(covered(full.inSync, (r) => r.inSync)).toBe(true);
      }),
      { numRuns: WORLD_RUNS },
    );
  });
});

describe("PlanMemo (property)", () => {
  it("changes no answer: full passes and single keys with one memo shared across worlds equal those without", () => {
    const memo = new PlanMemo();
    fc.assert(
      fc.property(world, fc.boolean(), (input, keyed) => {
        const withKey = keyed ? { ...input, hashKey: "a-key-of-sixteen-chars" } : input;
        const memoized = { ...withKey, memo };
        // Twice: the second pass reads every object's work back from the memo.
        expect(plan(memoized)).toEqual(plan(withKey));
        expect(plan(memoized)).toEqual(plan(withKey));
        for (const key of keysOf(withKey)) expect(planKey(memoized, key)).toEqual(planKey(withKey, key));
      }),
      { numRuns: WORLD_RUNS },
    );
  });
});

describe("prepareSource (property)", () => {
  it("changes no answer: every source prepared first, then planned from the memo, equals planning without one", () => {
    fc.assert(
      fc.property(world, fc.boolean(), (input, keyed) => {
        const withKey = keyed ? { ...input, hashKey: "a-key-of-sixteen-chars" } : input;
        const memoized = { ...withKey, memo: new PlanMemo() };
        for (const value of withKey.tenantObjects) for (const _ of prepareSource(memoized, value));
        expect(plan(memoized)).toEqual(plan(withKey));
        for (const key of keysOf(withKey)) expect(planKey(memoized, key)).toEqual(planKey(withKey, key));
      }),
      { numRuns: WORLD_RUNS },
    );
  });
});

describe("prepareSource", () => {
  it("hashes a megabyte ConfigMap in slices, and the plan after it takes the translation from the memo", () => {
    const memo = new PlanMemo();
    const big = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "big" }, data: { k: "x".repeat(1_000_000) } };
    const input: PlanInput = {
      tenant,
      policy: { toHost: [{ kind: "ConfigMap" }] },
      tenantObjects: [big],
      hostObjects: [],
      hashKey: "a-key-of-sixteen-chars",
      memo,
    };
    let pauses = 0;
    for (const _ of prepareSource(input, big)) pauses++;
    expect(pauses).toBeGreaterThan(10);
    // Remembered: planning now, and preparing again, translates nothing.
    expect(memo.hasSource(big)).toBe(true);
    expect([...prepareSource(input, big)]).toEqual([]);
    const key = { kind: "ConfigMap", namespace: "default", name: "big" };
    const planned = planKey(input, key).decisions[0]?.object;
    expect(planKey(input, key).decisions[0]?.object).toBe(planned);
    expect(planned).toEqual(planKey({ ...input, memo: undefined }, key).decisions[0]?.object);
  });
});

describe("planSteps", () => {
  it("pauses after every object and gives plan's answer", () => {
    fc.assert(
      fc.property(world, (input) => {
        const steps = planSteps(input);
        let pauses = 0;
        let next = steps.next();
        for (; next.done !== true; next = steps.next()) pauses++;
        expect(pauses).toBeGreaterThanOrEqual(input.tenantObjects.length + input.hostObjects.length);
        expect(next.value).toEqual(plan(input));
      }),
      { numRuns: WORLD_RUNS },
    );
  });

  it("a paused preparation stores nothing in a context another plan switched to meanwhile", () => {
    const memo = new PlanMemo();
    const big = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "big" }, data: { k: "x".repeat(300_000) } };
    const input: PlanInput = {
      tenant,
      policy: { toHost: [{ kind: "ConfigMap" }] },
      tenantObjects: [big],
      hostObjects: [],
      hashKey: "first-key-sixteen-chars",
      memo,
    };
    const key = { kind: "ConfigMap", namespace: "default", name: "big" };
    const steps = prepareSource(input, big);
    steps.next();
    // Another key's plan under another hash key switches the memo's context while this one waits.
    const rekeyed = { ...input, hashKey: "other-key-sixteen-chars" };
    planKey({ ...rekeyed, tenantObjects: [] }, key);
    for (let next = steps.next(); next.done !== true; next = steps.next());
    expect(planKey(rekeyed, key).decisions[0]?.object).toEqual(
      planKey({ ...rekeyed, memo: undefined }, key).decisions[0]?.object,
    );
  });
});

describe("PlanMemo", () => {
  it("forgets its translations when the hash key or the rules change", () => {
    const memo = new PlanMemo();
    const key = { kind: "Pod", namespace: "default", name: "web" };
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "c" }] } };
    const input: PlanInput = { tenant, policy: { toHost: [{ kind: "Pod" }] }, tenantObjects: [pod], hostObjects: [] };
    const desired = (extra: Partial<PlanInput>) => planKey({ ...input, ...extra, memo }, key).decisions[0]?.object;
    const first = desired({ hashKey: "first-key-sixteen-chars" });
    expect(desired({ hashKey: "first-key-sixteen-chars" })).toBe(first);
    const rekeyed = desired({ hashKey: "other-key-sixteen-chars" });
    expect(rekeyed?.metadata.annotations).not.toEqual(first?.metadata.annotations);
    const strict = { ...defaultHostRules, nodeSelector: { pool: "tenants" } };
    const ruled = desired({ hashKey: "other-key-sixteen-chars", rules: strict });
    expect((ruled?.["spec"] as { nodeSelector?: unknown }).nodeSelector).toEqual({ pool: "tenants" });
  });
});

describe("planKey", () => {
  it("needs only the key's own object and relevant host objects", () => {
    const key = { kind: "Secret", namespace: "default", name: "db" };
    const stale = copyOf(key, "MQ==");
    const unrelated = copyOf({ kind: "Secret", namespace: "default", name: "web" }, "MQ==");
    const alone = planKey(
      {
        tenant,
        policy: { toHost: [{ kind: "Secret" }] },
        tenantObjects: [source(key, "Mg==")],
        hostObjects: [stale, unrelated],
      },
      key,
    );
    expect(alone.decisions.map((d) => [d.action, d.tenantRef.name, d.reason])).toEqual([
      ["Update", "db", "host copy differs from the desired object"],
    ]);
    const deleted = planKey(
      { tenant, policy: { toHost: [{ kind: "Secret" }] }, tenantObjects: [], hostObjects: [stale, unrelated] },
      key,
    );
    expect(deleted.decisions.map((d) => [d.action, d.tenantRef.name])).toEqual([["Delete", "db"]]);
  });
});
