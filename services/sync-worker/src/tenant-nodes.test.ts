import { describe, expect, it } from "vitest";
import { LABEL_VIRTUAL_NODE } from "./back-sync/nodes.js";
import { leanNode, privateNodeNames } from "./tenant-nodes.js";

describe("tenant nodes", () => {
  const node = (name: string, labels?: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, uid: `u-${name}`, resourceVersion: "7", ...(labels === undefined ? {} : { labels }) },
    status: { images: [{ names: ["big"] }], capacity: { cpu: "4" } },
  });

  it("names the Nodes joined to the tenant's API: every one without the virtual-node label", () => {
    const names = privateNodeNames([
      node("host-1", { [LABEL_VIRTUAL_NODE]: "true" }),
      node("own-1", { "kubernetes.io/hostname": "own-1" }),
      node("own-2"),
      node("odd", { [LABEL_VIRTUAL_NODE]: "false" }),
    ]);
    expect([...names].sort()).toEqual(["odd", "own-1", "own-2"]);
  });

  it("keeps a Node's name and labels only", () => {
    expect(leanNode(node("own-1", { a: "b" }))).toEqual({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "own-1", uid: "u-own-1", resourceVersion: "7", labels: { a: "b" } },
    });
  });
});
