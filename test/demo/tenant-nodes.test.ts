import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { tenantNodeCommands, type WorkloadPlacement } from "./tenant-nodes.js";

describe("tenantNodeCommands", () => {
  it("labels the node for every enforced selector entry and taints it for every keyed toleration", () => {
    const placement: WorkloadPlacement = {
      nodeSelector: { "pool/tenants": "true", zone: "a" },
      tolerations: [
        { key: "pool/tenants", operator: "Exists", effect: "NoSchedule" },
        { key: "dedicated", operator: "Equal", value: "payments", effect: "NoExecute" },
        { operator: "Exists" },
        { key: "no-effect", operator: "Exists" },
      ],
    };
    expect(tenantNodeCommands("n1", placement)).toEqual([
      ["label", "node", "n1", "pool/tenants=true", "zone=a"],
      ["taint", "node", "n1", "pool/tenants:NoSchedule", "dedicated=payments:NoExecute"],
    ]);
  });

  it("asks nothing of a node when the profile places Pods anywhere", () => {
    expect(tenantNodeCommands("n1", {})).toEqual([]);
  });

  it("agrees with examples/isolationprofile.yaml", () => {
    const profile = YAML.parse(
      readFileSync(new URL("../../examples/isolationprofile.yaml", import.meta.url), "utf8"),
    ) as { spec: { workloads: WorkloadPlacement } };
    expect(tenantNodeCommands("kwok-node-1", profile.spec.workloads)).toEqual([
      ["label", "node", "kwok-node-1", "node-role.example.com/tenants=true"],
      ["taint", "node", "kwok-node-1", "node-role.example.com/tenants:NoSchedule"],
    ]);
  });
});
