import { JsonClient } from "@tenantplane/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chartDir, helm, removeHelmHome } from "../harness/helm.js";
import {
  requestOutcome,
  serviceAccountKubeConfig,
  startHostCluster,
  trackFailures,
  waitFor,
  type HostCluster,
} from "../harness/index.js";

// The sync worker holds create, update and delete on StorageClasses for the tenants' class
// copies; the chart's ValidatingAdmissionPolicy narrows them to those copies. The chart is
// installed by helm on a real API server and the sync worker's own ServiceAccount token writes.

const failures = trackFailures();
const release = "tenantplane";
const namespace = "tenantplane-system";
const PATH = "/apis/storage.k8s.io/v1/storageclasses";

let cluster: HostCluster;
let worker: JsonClient;

/** A StorageClass as the worker writes a tenant's copy (labels and annotations as given). */
function storageClass(name: string, labels: Record<string, string>, annotations: Record<string, string> = {}) {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name, labels, annotations },
    provisioner: "tenantplane.io/test-hostpath",
    reclaimPolicy: "Delete",
    volumeBindingMode: "Immediate",
  };
}

const acme = { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "acme" };

const outcome = requestOutcome;

beforeAll(async () => {
  cluster = await startHostCluster({ name: "claims-storage-class-policy" });
  await helm([
    "install",
    release,
    chartDir,
    "--namespace",
    namespace,
    "--create-namespace",
    "--set",
    "nats.url=nats://nats:4222",
    "--kubeconfig",
    cluster.kubeconfigPath,
  ]);
  worker = new JsonClient(await serviceAccountKubeConfig(cluster, namespace, `${release}-sync-worker`));
  // A policy is enforced once the API server has compiled it: until then a dry run of a foreign
  // class (admitted, never stored) passes.
  const probe = { query: { dryRun: "All" }, body: storageClass("premium", acme) };
  await waitFor(async () => (await outcome(worker.request("POST", PATH, probe))).code === 403 || undefined, {
    timeoutMs: 30_000,
    intervalMs: 250,
    description: "the storage-class-copies policy in force",
  });
}, 300_000);

afterAll(async () => {
  await cluster?.stop({ keepLogs: failures.failed() });
  removeHelmHome();
});

describe("the sync worker's StorageClass rights", () => {
  it("cover a tenant's copy: create, update, delete", async () => {
    const created = await worker.request<{ metadata: { resourceVersion: string } }>("POST", PATH, {
      body: storageClass("tp-acme.standard", acme, { "tenantplane.io/storage-class": "standard" }),
    });
    const copy = storageClass("tp-acme.standard", acme);
    const updated = {
      ...copy,
      metadata: { ...copy.metadata, resourceVersion: created.metadata.resourceVersion },
      allowVolumeExpansion: true,
    };
    expect((await outcome(worker.request("PUT", `${PATH}/tp-acme.standard`, { body: updated }))).code).toBe(200);
    expect((await outcome(worker.request("DELETE", `${PATH}/tp-acme.standard`))).code).toBe(200);
  });

  it("refuse any other class: the host's own, one not labelled as the tenant's copy, one named for another tenant", async () => {
    const deleted = await outcome(worker.request("DELETE", `${PATH}/standard`));
    expect(deleted.code).toBe(403);
    expect(deleted.message).toContain("may write only the StorageClass copies of tenants");
    expect(deleted.message).toContain("not StorageClass standard");
    for (const [name, labels] of [
      ["premium", acme],
      ["tp-acme.fast", { "app.kubernetes.io/managed-by": "tenantplane" }],
      ["tp-bank.fast", acme],
    ] as const) {
      const refused = await outcome(worker.request("POST", PATH, { body: storageClass(name, labels) }));
      expect(refused.code, name).toBe(403);
      expect(refused.message).toContain(`not StorageClass ${name}`);
    }
    // Nor may it take over the host's class by relabelling it.
    const host = new JsonClient(cluster.kubeConfig);
    const current = await host.request<Record<string, unknown> & { metadata: Record<string, unknown> }>(
      "GET",
      `${PATH}/standard`,
    );
    const relabelled = { ...current, metadata: { ...current.metadata, labels: acme, name: "standard" } };
    expect((await outcome(worker.request("PUT", `${PATH}/standard`, { body: relabelled }))).code).toBe(403);
    expect(await host.request("GET", `${PATH}/standard`)).toMatchObject({ metadata: { name: "standard" } });
  });

  it("refuse marking a copy as a default class, which would take every host claim naming none", async () => {
    for (const key of [
      "storageclass.kubernetes.io/is-default-class",
      "storageclass.beta.kubernetes.io/is-default-class",
    ]) {
      const refused = await outcome(
        worker.request("POST", PATH, { body: storageClass("tp-acme.standard", acme, { [key]: "true" }) }),
      );
      expect(refused.code, key).toBe(403);
      expect(refused.message).toContain("may not mark StorageClass tp-acme.standard as a default class");
    }
  });
});
