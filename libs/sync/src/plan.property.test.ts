import { SYNC_KINDS, type SyncPolicySpec } from "@tenantplane/api";
import { hostName, reverseMapping } from "@tenantplane/mapping";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KubeObjectSchema } from "./kube-object.js";
import { plan, type PlanResult } from "./plan.js";
import { transform } from "./transform.js";

/** Property budget: random tenant/host worlds checked for idempotency. */
const IDEMPOTENCY_RUNS = 300;

const tenant = "dev";
const namespaces = fc.constantFrom("default", "shop", "kube-system");
const names = fc.constantFrom("web", "db", "app.config", "default", "kube-root-ca.crt", "x".repeat(70), "a-x-b");
const kinds = fc.constantFrom(...SYNC_KINDS, "Deployment");
const payload = fc.record({
  labels: fc.dictionary(fc.constantFrom("app", "tier", "tenantplane.io/tenant"), fc.constantFrom("a", "b")),
  data: fc.constantFrom("MQ==", "Mg=="),
});

const tenantObject = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: kinds, namespace: namespaces, name: names, payload }).map(build) },
  {
    weight: 1,
    arbitrary: fc
      .record({ kind: kinds, name: names })
      .map(({ kind, name }) => ({ apiVersion: "v1", kind, metadata: { name: name.toUpperCase() } })),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "broken", namespace: "default" },
      spec: { volumes: 3 },
    }),
  },
);

// Host worlds mix stale managed copies, copies of gone sources, foreign objects and other
// tenants' copies, all at names the tenant's objects may want.
const hostObject = fc.oneof(
  fc.record({ kind: kinds, namespace: namespaces, name: names, payload }).map((spec) => {
    const source = build(spec);
    return spec.kind === "Deployment" ? source : transform(KubeObjectSchema.parse(source), tenant);
  }),
  fc.record({ kind: kinds, namespace: namespaces, name: names }).map(({ kind, namespace, name }) => ({
    kind,
    metadata: { name: hostName({ tenant, namespace, name }).name, namespace: "tp-dev", labels: { app: "foreign" } },
  })),
  fc.record({ kind: kinds, namespace: namespaces, name: names }).map(({ kind, namespace, name }) => ({
    kind,
    metadata: {
      name: hostName({ tenant, namespace, name }).name,
      namespace: "tp-dev",
      ...reverseMapping({ tenant: "other", namespace, name }, kind),
    },
  })),
  // The tenant's control plane and its Secrets: managed, same tenant, no kind label.
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
  .subarray([...SYNC_KINDS])
  .map((ks) => ({ toHost: ks.map((kind) => ({ kind })) }));

function build({
  kind,
  namespace,
  name,
  payload: p,
}: {
  kind: string;
  namespace: string;
  name: string;
  payload: { labels: Record<string, string>; data: string };
}) {
  const spec =
    kind === "Pod"
      ? { spec: { containers: [{ name: "c", envFrom: [{ secretRef: { name: "db" } }] }] } }
      : kind === "Service"
        ? { spec: { selector: p.labels } }
        : {};
  return { apiVersion: "v1", kind, metadata: { name, namespace, labels: p.labels }, data: { v: p.data }, ...spec };
}

type Host = { kind?: string; metadata: { name: string } };

function apply(hosts: Host[], result: PlanResult): Host[] {
  const byKey = new Map(hosts.map((h) => [`${h.kind}/${h.metadata.name}`, h]));
  for (const d of result.decisions) {
    const key = `${d.kind}/${d.hostRef.name}`;
    if (d.action === "Delete") byKey.delete(key);
    if ((d.action === "Create" || d.action === "Update") && d.object !== undefined) byKey.set(key, d.object);
  }
  return [...byKey.values()];
}

const dedupe = (hosts: Host[]) => [...new Map(hosts.map((h) => [`${h.kind}/${h.metadata.name}`, h])).values()];

describe("plan (property)", () => {
  it("is idempotent: after applying its Create/Update/Delete decisions, replanning only repeats its Skips", () => {
    fc.assert(
      fc.property(
        policy,
        fc.array(tenantObject, { maxLength: 12 }),
        fc.array(hostObject, { maxLength: 12 }),
        (p, tenantObjects, rawHosts) => {
          const hostObjects = dedupe(rawHosts as Host[]);
          const first = plan({ tenant, policy: p, tenantObjects, hostObjects });
          const second = plan({ tenant, policy: p, tenantObjects, hostObjects: apply(hostObjects, first) });
          expect(second.decisions.filter((d) => d.action !== "Skip")).toEqual([]);
          expect(second.decisions).toEqual(first.decisions.filter((d) => d.action === "Skip"));
          expect(second.ignored).toEqual(first.ignored);
          const deleted = first.decisions.filter((d) => d.action === "Delete").map((d) => d.hostRef.name);
          expect(deleted.filter((name) => ["dev-kubeconfig", "dev-pki", "k3s-0"].includes(name))).toEqual([]);
        },
      ),
      { numRuns: IDEMPOTENCY_RUNS },
    );
  });
});
