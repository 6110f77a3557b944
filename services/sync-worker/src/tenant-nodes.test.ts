import { describe, expect, it } from "vitest";
import { LABEL_VIRTUAL_NODE } from "./back-sync/nodes.js";
import type { RawObject } from "@tenantplane/kube";
import { judgesPodsAgain, leanNode, privateNodeNames } from "./tenant-nodes.js";

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

describe("judgesPodsAgain", () => {
  const node = (rv: string, labels?: Record<string, string>) =>
    ({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "n1", resourceVersion: rv, ...(labels ? { labels } : {}) },
    }) as RawObject;
  const virtual = { [LABEL_VIRTUAL_NODE]: "true" };

  it("judges a node's Pods again when it comes, goes or its virtual-node label changes", () => {
    expect(judgesPodsAgain({ type: "add", object: node("1", virtual) })).toBe(true);
    expect(judgesPodsAgain({ type: "delete", object: node("2", virtual) })).toBe(true);
    expect(judgesPodsAgain({ type: "update", object: node("3"), previous: node("2", virtual) })).toBe(true);
  });

  it("leaves them alone for any other update (status, heartbeat, annotations)", () => {
    expect(judgesPodsAgain({ type: "update", object: node("3", virtual), previous: node("2", virtual) })).toBe(false);
    expect(judgesPodsAgain({ type: "update", object: node("3"), previous: node("2") })).toBe(false);
  });
});
