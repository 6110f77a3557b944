import { describe, expect, it } from "vitest";
import type { PlannedDecisionWithObject } from "./plan.js";
import { predictedHostObjects } from "./predicted-hosts.js";

const target = (kind: string, name: string) => ({
  tenant: "dev",
  kind,
  tenantRef: { namespace: "shop", name },
  hostRef: { namespace: "tp-dev", name },
  hashed: false,
});
const object = (kind: string, name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind,
  metadata: { name, namespace: "tp-dev", labels: {}, annotations: {} },
  spec,
});

describe("predictedHostObjects", () => {
  it("applies Creates, Updates and Deletes, with placeholders for what the host will assign", () => {
    const hosts = [
      { ...object("Service", "kept", { clusterIP: "10.96.0.7" }) },
      { ...object("Pod", "old"), status: { podIP: "10.244.0.1" } },
      { ...object("Pod", "running"), status: { podIP: "10.244.0.2" } },
      object("ConfigMap", "untouched"),
    ];
    const decisions: PlannedDecisionWithObject[] = [
      { ...target("Service", "kept"), action: "Update", reason: "r", object: object("Service", "kept", { ports: [] }) },
      { ...target("Service", "new"), action: "Create", reason: "r", object: object("Service", "new") },
      {
        ...target("Service", "headless"),
        action: "Create",
        reason: "r",
        object: object("Service", "headless", { clusterIP: "None" }),
      },
      { ...target("Pod", "old"), action: "Delete", reason: "r" },
      { ...target("Pod", "running"), action: "Update", reason: "r", object: object("Pod", "running", { x: 1 }) },
      { ...target("Pod", "fresh"), action: "Create", reason: "r", object: object("Pod", "fresh") },
      { ...target("ConfigMap", "skipped"), action: "Skip", reason: "r" },
    ];
    const byName = new Map(
      predictedHostObjects(hosts, decisions).map((o) => [(o as { metadata: { name: string } }).metadata.name, o]),
    );
    expect([...byName.keys()].sort()).toEqual(["fresh", "headless", "kept", "new", "running", "untouched"]);
    expect(byName.get("kept")).toMatchObject({ spec: { ports: [], clusterIP: "10.96.0.7" } });
    expect(byName.get("new")).toMatchObject({ spec: { clusterIP: "<ClusterIP of tp-dev/new>" } });
    expect(byName.get("headless")).toMatchObject({ spec: { clusterIP: "None" } });
    expect(byName.get("running")).toMatchObject({ spec: { x: 1 }, status: { podIP: "10.244.0.2" } });
    expect(byName.get("fresh")).toMatchObject({
      status: { podIP: "<IP of Pod tp-dev/fresh once Ready>", conditions: [{ type: "Ready", status: "True" }] },
    });
    // The inputs are left as they were.
    expect(hosts[0]).toMatchObject({ spec: { clusterIP: "10.96.0.7" } });
  });
});
