import { describe, expect, it } from "vitest";
import type { Taint } from "@tenantplane/api";
import {
  dedicatedTenantsOf,
  holdersOf,
  matchesSelector,
  nodeViewOf,
  planReservation,
  reservationCondition,
  tenantsAffectedByNode,
  withDedicatedTaint,
  type NodeView,
} from "./node-reservation.js";

const KEY = "tenantplane.io/dedicated";
const taintFor = (tenant: string, effect = "NoSchedule"): Taint => ({ key: KEY, value: tenant, effect });
const notReady: Taint = { key: "node.kubernetes.io/not-ready", effect: "NoSchedule" };
const node = (name: string, labels: Record<string, string>, taints: Taint[] = []): NodeView => ({
  name,
  labels,
  taints,
});
const poolA = { pool: "a" };

describe("matchesSelector", () => {
  it("needs every pair, and an empty selector matches no node", () => {
    expect(matchesSelector({ pool: "a", zone: "1" }, { pool: "a" })).toBe(true);
    expect(matchesSelector({ pool: "a" }, { pool: "a", zone: "1" })).toBe(false);
    expect(matchesSelector({ pool: "b" }, { pool: "a" })).toBe(false);
    expect(matchesSelector({ pool: "a" }, {})).toBe(false);
  });
});

describe("planReservation", () => {
  it("taints the matching nodes nobody holds or claims, and leaves the others alone", () => {
    const nodes = [node("n2", poolA), node("n1", poolA, [notReady]), node("n3", { pool: "b" })];
    expect(planReservation("a", poolA, [], nodes)).toEqual({
      reserve: ["n1", "n2"],
      release: [],
      reserved: ["n1", "n2"],
      conflicts: [],
      matched: 2,
    });
  });

  it("keeps what it holds without a write, and releases a node that stopped matching", () => {
    const nodes = [node("n1", poolA, [taintFor("a")]), node("n2", { pool: "b" }, [taintFor("a"), notReady])];
    expect(planReservation("a", poolA, [], nodes)).toMatchObject({ reserve: [], release: ["n2"], reserved: ["n1"] });
  });

  it("releases every node it holds once it has no selector (Shared, deleted), and no one else's", () => {
    const nodes = [node("n1", poolA, [taintFor("a")]), node("n2", poolA, [taintFor("b")]), node("n3", poolA)];
    expect(planReservation("a", undefined, [], nodes)).toEqual({
      reserve: [],
      release: ["n1"],
      reserved: [],
      conflicts: [],
      matched: 0,
    });
  });

  it("gives a node two tenants claim to neither while nobody holds it, and reports it on both", () => {
    const nodes = [node("n1", { pool: "a", shared: "yes" }), node("n2", poolA)];
    const a = planReservation("a", poolA, [{ name: "b", nodeSelector: { shared: "yes" } }], nodes);
    expect(a).toMatchObject({ reserve: ["n2"], reserved: ["n2"], conflicts: [{ node: "n1", tenants: ["a", "b"] }] });
    expect(a.conflicts[0]?.holder).toBeUndefined();
    const b = planReservation("b", { shared: "yes" }, [{ name: "a", nodeSelector: poolA }], nodes);
    expect(b).toMatchObject({
      reserve: [],
      reserved: [],
      conflicts: [{ node: "n1", tenants: ["a", "b"] }],
      matched: 1,
    });
  });

  it("leaves a node with its holder: the holder keeps it, the newcomer gets the conflict", () => {
    const nodes = [node("n1", { pool: "a", shared: "yes" }, [taintFor("a")])];
    const holder = planReservation("a", poolA, [{ name: "b", nodeSelector: { shared: "yes" } }], nodes);
    expect(holder).toMatchObject({ reserve: [], release: [], reserved: ["n1"], conflicts: [] });
    const newcomer = planReservation("b", { shared: "yes" }, [{ name: "a", nodeSelector: poolA }], nodes);
    expect(newcomer).toMatchObject({ reserve: [], release: [], reserved: [] });
    expect(newcomer.conflicts).toEqual([{ node: "n1", tenants: ["a", "b"], holder: "a" }]);
  });

  it("counts a hand-made dedicated taint of any effect as a holder, and never removes it", () => {
    const nodes = [
      node("n1", poolA, [taintFor("x", "NoExecute")]),
      node("n2", { pool: "b" }, [taintFor("a", "NoExecute")]),
    ];
    const plan = planReservation("a", poolA, [], nodes);
    expect(plan.conflicts).toEqual([{ node: "n1", tenants: ["a", "x"], holder: "x" }]);
    expect(plan.release).toEqual([]);
  });

  it("ignores the tenant itself among the Dedicated tenants it is given", () => {
    const plan = planReservation("a", poolA, [{ name: "a", nodeSelector: poolA }], [node("n1", poolA)]);
    expect(plan.reserve).toEqual(["n1"]);
  });
});

describe("withDedicatedTaint", () => {
  it("adds the tenant's taint once and removes only it, keeping every other taint in order", () => {
    const other = taintFor("b");
    expect(withDedicatedTaint([notReady, other], "a", true)).toEqual([notReady, other, taintFor("a")]);
    expect(withDedicatedTaint([notReady, taintFor("a"), other], "a", true)).toEqual([notReady, other, taintFor("a")]);
    expect(withDedicatedTaint([taintFor("a", "NoExecute"), taintFor("a"), notReady], "a", false)).toEqual([
      taintFor("a", "NoExecute"),
      notReady,
    ]);
  });
});

describe("holdersOf", () => {
  it("names every tenant a dedicated taint names, once", () => {
    expect(holdersOf(node("n", {}, [taintFor("b"), notReady, taintFor("a"), taintFor("b", "NoExecute")]))).toEqual([
      "a",
      "b",
    ]);
  });
});

describe("reservationCondition", () => {
  it("is True naming the count and the nodes", () => {
    expect(reservationCondition("a", poolA, { reserved: ["n1", "n2"], conflicts: [], matched: 2 })).toEqual({
      status: "True",
      reason: "Reserved",
      message: "2 host nodes reserved for a (tainted tenantplane.io/dedicated=a:NoSchedule): n1, n2. Selector: pool=a.",
    });
  });

  it("is NoMatchingNodes naming the selector", () => {
    const c = reservationCondition("a", { zone: "1", pool: "a" }, { reserved: [], conflicts: [], matched: 0 });
    expect(c).toMatchObject({ status: "False", reason: "NoMatchingNodes" });
    expect(c.message).toContain("spec.isolation.dedicated.nodeSelector pool=a,zone=1");
    expect(c.message).toContain("kubectl label node <node> pool=a zone=1");
  });

  it("is NodeConflict naming both tenants and the node, and what is reserved anyway", () => {
    const c = reservationCondition("b", poolA, {
      reserved: ["n2"],
      conflicts: [{ node: "n1", tenants: ["a", "b"], holder: "a" }],
      matched: 2,
    });
    expect(c).toMatchObject({ status: "False", reason: "NodeConflict" });
    expect(c.message).toContain(
      "node n1 is matched by the spec.isolation.dedicated.nodeSelector of TenantCluster a and TenantCluster b and stays reserved for a",
    );
    expect(c.message).toContain("1 host node reserved for b");
  });

  it("lists at most 20 nodes", () => {
    const reserved = Array.from({ length: 25 }, (_, i) => `n${String(i).padStart(2, "0")}`);
    expect(reservationCondition("a", poolA, { reserved, conflicts: [], matched: 25 }).message).toContain(
      "n19 and 5 more",
    );
  });
});

describe("tenantsAffectedByNode", () => {
  const dedicated = [
    { name: "a", nodeSelector: poolA },
    { name: "b", nodeSelector: { pool: "b" } },
  ];

  it("wakes nobody for a change that leaves labels and dedicated taints as they were", () => {
    expect(tenantsAffectedByNode(node("n", poolA, [notReady]), node("n", poolA, []), dedicated)).toEqual([]);
  });

  it("wakes the tenants matching before and after a relabelling", () => {
    expect(tenantsAffectedByNode(node("n", poolA), node("n", { pool: "b" }), dedicated)).toEqual(["a", "b"]);
  });

  it("wakes the tenant a taint names even when it is no longer Dedicated, and a new or deleted node's tenants", () => {
    expect(tenantsAffectedByNode(undefined, node("n", {}, [taintFor("gone")]), dedicated)).toEqual(["gone"]);
    expect(tenantsAffectedByNode(node("n", poolA), undefined, dedicated)).toEqual(["a"]);
    expect(tenantsAffectedByNode(undefined, node("n", {}, [taintFor("Not A Name")]), dedicated)).toEqual([]);
  });
});

describe("nodeViewOf and dedicatedTenantsOf", () => {
  it("read raw objects defensively", () => {
    expect(
      nodeViewOf({ metadata: { name: "n", labels: { a: "b" } }, spec: { taints: [notReady, { bad: 1 }] } }),
    ).toEqual(node("n", { a: "b" }, [notReady]));
    expect(nodeViewOf({ metadata: {} })).toBeUndefined();
  });

  it("keeps the Dedicated tenants with a selector that are not being deleted", () => {
    const tc = (name: string, isolation: unknown, deleting = false) => ({
      metadata: { name, ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
      spec: { isolation },
    });
    expect(
      dedicatedTenantsOf([
        tc("z", { mode: "Dedicated", dedicated: { nodeSelector: { pool: "z" } } }),
        tc("a", { mode: "Dedicated", dedicated: { nodeSelector: poolA } }),
        tc("shared", { mode: "Shared", dedicated: { nodeSelector: poolA } }),
        tc("deleting", { mode: "Dedicated", dedicated: { nodeSelector: poolA } }, true),
        tc("none", undefined),
        tc("private", { mode: "Private" }),
      ]),
    ).toEqual([
      { name: "a", nodeSelector: poolA },
      { name: "z", nodeSelector: { pool: "z" } },
    ]);
  });
});
