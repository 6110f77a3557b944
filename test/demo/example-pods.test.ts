import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { expectedPods, judgePods, type PodView, type WorkloadManifest } from "./example-pods.js";

const pod = (name: string, phase: string, extra: Partial<PodView> = {}): PodView => ({
  namespace: "shop",
  name,
  phase,
  deleting: false,
  ...extra,
});

describe("expectedPods", () => {
  it("counts bare Pods, replicas (1 when unset) and Job completions, and collects their namespaces", () => {
    const manifests: WorkloadManifest[] = [
      { kind: "Pod", metadata: { name: "a", namespace: "shop" } },
      { kind: "Deployment", metadata: { name: "b", namespace: "shop" }, spec: { replicas: 3 } },
      { kind: "StatefulSet", metadata: { name: "c", namespace: "db" } },
      { kind: "Job", metadata: { name: "d", namespace: "jobs" }, spec: { completions: 2 } },
      { kind: "ConfigMap", metadata: { name: "e", namespace: "config-only" } },
      { kind: "Deployment", metadata: { name: "f", namespace: "scaled-down" }, spec: { replicas: 0 } },
    ];
    expect(expectedPods(manifests)).toEqual({ total: 7, namespaces: ["db", "jobs", "shop"] });
  });

  it("refuses a kind whose Pod count the manifest does not fix, naming the object", () => {
    expect(() => expectedPods([{ kind: "CronJob", metadata: { name: "nightly", namespace: "ops" } }])).toThrow(
      "CronJob ops/nightly: the demo cannot count its Pods",
    );
  });

  it("counts the bundled examples/tenant/workloads.yaml", () => {
    const text = readFileSync(new URL("../../examples/tenant/workloads.yaml", import.meta.url), "utf8");
    const docs = YAML.parseAllDocuments(text).map((d) => d.toJSON() as WorkloadManifest);
    // web, ledger, catalog x2, postgres-0, ledger-migrate's Pod.
    expect(expectedPods(docs)).toEqual({ total: 6, namespaces: ["payments", "shop"] });
  });
});

describe("judgePods", () => {
  it("is done when exactly the expected Pods run and a Job's Pod succeeded", () => {
    const pods = [pod("web", "Running"), pod("migrate-x", "Succeeded", { ownerKind: "Job" })];
    expect(judgePods(2, pods)).toEqual({
      done: true,
      running: 2,
      notRunning: [],
      summary: "all 2 example Pods running",
    });
  });

  it("names each Pod that does not run, with its reason, and counts the missing ones", () => {
    const pods = [
      pod("web", "Pending", { why: "PodScheduled=False: 0/2 nodes are available" }),
      pod("migrate-x", "Running", { ownerKind: "Job" }),
      pod("old", "Running", { deleting: true }),
    ];
    expect(judgePods(3, pods)).toEqual({
      done: false,
      running: 0,
      notRunning: ["shop/migrate-x", "shop/web"],
      summary:
        "0 of 3 example Pods running; 1 not created yet; not running: shop/migrate-x Running; shop/web Pending (PodScheduled=False: 0/2 nodes are available)",
    });
  });

  it("is not done with a Pod more than the examples make", () => {
    const judged = judgePods(1, [pod("a", "Running"), pod("b", "Running")]);
    expect(judged.done).toBe(false);
    expect(judged.summary).toBe("2 of 1 example Pods running; 1 more than the examples make");
  });

  it("is not done when a Pod failed, even with the count right", () => {
    expect(judgePods(1, [pod("a", "Failed", { why: "Evicted" })]).done).toBe(false);
  });
});
