import { defaultSyncPolicySpec } from "@tenantplane/api";
import { defaultHostRules, PlanMemo } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import { planKey, planPass } from "./key-plan.js";
import { LEAN_PAYLOAD_BYTES, LeanPlanMemo, needsFullTranslation } from "./lean-memo.js";

const tenant = "acme";
const ctx = {
  tenant,
  policy: defaultSyncPolicySpec,
  rules: defaultHostRules,
  hashKey: "k",
  completeKinds: ["ConfigMap"],
};
const cm = (name: string, bytes: number) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "shop", name, resourceVersion: "1" },
  data: { k: "x".repeat(bytes) },
});

describe("LeanPlanMemo", () => {
  it("keeps no payload of a large translation, and plans exactly as the plain memo", () => {
    const sources = [cm("big", LEAN_PAYLOAD_BYTES + 10), cm("small", 10)];
    const memo = new LeanPlanMemo();
    // The pass that translates gets the translations whole; the memo keeps the large one lean.
    const first = planPass({ ...ctx, memo, sources, hosts: [], deletedNamespaces: new Set() });
    const firstBig = first.decisions.find((d) => d.tenantRef.name === "big")!;
    expect(needsFullTranslation(firstBig.object)).toBe(false);
    expect((firstBig.object as { data?: { k: string } }).data?.k).toHaveLength(LEAN_PAYLOAD_BYTES + 10);
    const lean = planPass({ ...ctx, memo, sources, hosts: [], deletedNamespaces: new Set() });
    const full = planPass({ ...ctx, memo: new PlanMemo(), sources, hosts: [], deletedNamespaces: new Set() });
    const big = lean.decisions.find((d) => d.tenantRef.name === "big")!;
    const small = lean.decisions.find((d) => d.tenantRef.name === "small")!;
    expect(big.object && "data" in big.object).toBe(false);
    expect(needsFullTranslation(big.object)).toBe(true);
    expect(needsFullTranslation(small.object)).toBe(false);
    expect((small.object as { data?: unknown }).data).toEqual({ k: "x".repeat(10) });
    // Same actions, reasons and content hashes: only the retained payload differs.
    const strip = (ds: typeof lean.decisions) =>
      ds.map((d) => ({ ...d, object: d.object && { ...d.object, data: undefined } }));
    expect(strip(lean.decisions)).toEqual(strip(full.decisions));
  });

  it("a large source in sync plans nothing from the lean memo; planned again without it, the write has the payload", () => {
    const memo = new LeanPlanMemo();
    const source = cm("big", LEAN_PAYLOAD_BYTES * 2);
    const key = { kind: "ConfigMap", namespace: "shop", name: "big" };
    // The plan that translates it writes it whole, without a second translation.
    const translating = planKey({ ...ctx, memo, key, source, namespaceDeleted: false, hosts: [] });
    expect(needsFullTranslation(translating.decisions[0]?.object)).toBe(false);
    expect((translating.decisions[0]!.object as unknown as { data: { k: string } }).data.k).toHaveLength(
      LEAN_PAYLOAD_BYTES * 2,
    );
    // Planned from the memo later (the full pass translated it first): lean, so planned again.
    const first = planKey({ ...ctx, memo, key, source, namespaceDeleted: false, hosts: [] });
    expect(needsFullTranslation(first.decisions[0]?.object)).toBe(true);
    const again = planKey({ ...ctx, memo: undefined, key, source, namespaceDeleted: false, hosts: [] });
    const desired = again.decisions[0]!.object as unknown as { data: Record<string, string>; metadata: unknown };
    expect(desired.data.k).toHaveLength(LEAN_PAYLOAD_BYTES * 2);
    // The host copy as written: in sync from the lean memo's point of view (the hash is in metadata).
    const inSync = planKey({ ...ctx, memo, key, source, namespaceDeleted: false, hosts: [desired] });
    expect(inSync.decisions).toEqual([]);
    expect(inSync.inSync).toHaveLength(1);
  });
});
