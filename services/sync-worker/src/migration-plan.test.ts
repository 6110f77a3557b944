import { reverseMapping } from "@tenantplane/mapping";
import { ANNOTATION_PLACEMENT, placementText, SHARED_PLACEMENT, type Placement } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import { BARE_POD_REASON, planMigration, type MigrationInput, type MigrationPod } from "./migration-plan.js";

const tenant = "dev";
const now = new Date("2026-12-02T01:00:00Z");
const started = "2026-12-02T00:59:00Z";
const dedicated: Placement = { mode: "Dedicated", nodeSelector: { pool: "a" } };

function tenantPod(
  name: string,
  opts: { owner?: string; ready?: boolean; deleting?: boolean; created?: string; phase?: string } = {},
): MigrationPod {
  return {
    metadata: {
      name,
      namespace: "shop",
      uid: `uid-${name}`,
      creationTimestamp: opts.created ?? "2026-12-01T00:00:00Z",
      ...(opts.deleting ? { deletionTimestamp: "2026-12-02T00:59:30Z" } : {}),
      ...(opts.owner === undefined
        ? {}
        : { ownerReferences: [{ kind: "ReplicaSet", name: opts.owner, uid: `rs-${opts.owner}`, controller: true }] }),
    },
    status: {
      phase: opts.phase ?? (opts.ready === false ? "Pending" : "Running"),
      conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
    },
  };
}

function copy(name: string, placement: Placement): MigrationPod {
  const mapping = reverseMapping({ tenant, namespace: "shop", name }, "Pod");
  const text = placementText(placement);
  return {
    metadata: {
      name: `${name}-x-shop-x-dev`,
      namespace: "tp-dev",
      labels: mapping.labels,
      annotations: { ...mapping.annotations, ...(text === undefined ? {} : { [ANNOTATION_PLACEMENT]: text }) },
    },
  };
}

function input(partial: Partial<MigrationInput>): MigrationInput {
  return {
    tenant,
    now,
    spec: { mode: "Dedicated", placement: dedicated, evictBarePods: false },
    status: { mode: "Shared" },
    tenantPods: [],
    hostPods: [],
    ...partial,
  };
}

const web = ["web-1", "web-2", "web-3"].map((n) => tenantPod(n, { owner: "web" }));
const api = ["api-1", "api-2"].map((n) => tenantPod(n, { owner: "api" }));
const sharedCopies = [...web, ...api].map((p) => copy(p.metadata.name, SHARED_PLACEMENT));

describe("planMigration", () => {
  it("does nothing while the effective mode is the one asked for and every copy is placed for it", () => {
    const step = planMigration(
      input({
        spec: { mode: "Shared", placement: SHARED_PLACEMENT, evictBarePods: false },
        tenantPods: web,
        hostPods: sharedCopies,
      }),
    );
    expect(step).toEqual({ status: undefined, evict: [], notes: [], waiting: undefined });
  });

  it("writes the mode once for a TenantCluster that never showed one", () => {
    const step = planMigration(
      input({
        spec: { mode: "Shared", placement: SHARED_PLACEMENT, evictBarePods: false },
        status: {},
        tenantPods: web,
        hostPods: sharedCopies,
      }),
    );
    expect(step.status).toEqual({ mode: "Shared" });
    expect(step.evict).toEqual([]);
  });

  it("starts a migration: evicts the first controller's Pods only, says so, and stays in the old mode", () => {
    const step = planMigration(input({ tenantPods: [...web, ...api], hostPods: sharedCopies }));
    expect(step.evict.map((e) => e.name)).toEqual(["api-1", "api-2"]);
    expect(step.evict[0]).toEqual({ namespace: "shop", name: "api-1", uid: "uid-api-1" });
    expect(step.status).toEqual({
      mode: "Shared",
      migration: { from: "Shared", to: "Dedicated", phase: "Moving", moved: 0, left: 5, startedAt: now.toISOString() },
    });
    expect(step.notes.map((n) => n.key)).toEqual(["started", "moving/shop/ReplicaSet/api"]);
    expect(step.notes[0]?.reason).toContain(
      "isolation migration Shared → Dedicated started: 5 Pod(s) of 2 workload(s)",
    );
    for (const note of step.notes) expect(Buffer.byteLength(note.reason)).toBeLessThanOrEqual(1024);
  });

  it("keeps evicting the controller part way through (a PodDisruptionBudget let one go) and starts no other", () => {
    const migration = { from: "Shared", to: "Dedicated", phase: "Moving", startedAt: started } as const;
    const replacement = tenantPod("api-9", { owner: "api", ready: false, created: "2026-12-02T00:59:40Z" });
    const step = planMigration(
      input({
        status: { mode: "Shared", migration },
        tenantPods: [...web, api[1]!, replacement],
        hostPods: [...sharedCopies, copy("api-9", dedicated)],
      }),
    );
    expect(step.evict.map((e) => e.name)).toEqual(["api-2"]);
    expect(step.notes.map((n) => n.key)).toEqual(["moving/shop/ReplicaSet/api"]);
    expect(step.status?.migration).toMatchObject({ phase: "Moving", startedAt: started, moved: 0, left: 4 });
  });

  it("waits while a moved controller's replacements are not Running, then takes the next controller", () => {
    const migration = { from: "Shared", to: "Dedicated", phase: "Moving", startedAt: started } as const;
    const created = "2026-12-02T00:59:40Z";
    const pending = ["api-8", "api-9"].map((n) => tenantPod(n, { owner: "api", ready: false, created }));
    const hostPods = [...sharedCopies, copy("api-8", dedicated), copy("api-9", dedicated)];
    const waiting = planMigration(
      input({ status: { mode: "Shared", migration }, tenantPods: [...web, ...pending], hostPods }),
    );
    expect(waiting.evict).toEqual([]);
    expect(waiting.waiting).toContain("waiting for 2 Pod(s) to run in the new placement");
    // Evicted Pods still terminating hold the next controller back too.
    const terminating = planMigration(
      input({
        status: { mode: "Shared", migration },
        tenantPods: [...web, tenantPod("api-1", { owner: "api", deleting: true })],
        hostPods,
      }),
    );
    expect(terminating.evict).toEqual([]);

    const running = ["api-8", "api-9"].map((n) => tenantPod(n, { owner: "api", created }));
    const next = planMigration(
      input({ status: { mode: "Shared", migration }, tenantPods: [...web, ...running], hostPods }),
    );
    expect(next.evict.map((e) => e.name)).toEqual(["web-1", "web-2", "web-3"]);
    expect(next.notes.map((n) => n.key)).toEqual(["moved/shop/ReplicaSet/api", "moving/shop/ReplicaSet/web"]);
    expect(next.notes[0]?.reason).toContain("ReplicaSet shop/api moved, its 2 Pod(s) run in the new placement");
    expect(next.status?.migration).toMatchObject({ moved: 2, left: 3 });
  });

  it("completes once every Pod runs in the new placement, and only then switches the mode", () => {
    const migration = { from: "Shared", to: "Dedicated", phase: "Moving", startedAt: started } as const;
    const pods = ["web-7", "web-8"].map((n) => tenantPod(n, { owner: "web", created: "2026-12-02T00:59:50Z" }));
    const step = planMigration(
      input({
        status: { mode: "Shared", migration },
        tenantPods: pods,
        hostPods: pods.map((p) => copy(p.metadata.name, dedicated)),
      }),
    );
    expect(step.status).toEqual({
      mode: "Dedicated",
      migration: {
        from: "Shared",
        to: "Dedicated",
        phase: "Complete",
        moved: 2,
        left: 0,
        startedAt: started,
        finishedAt: now.toISOString(),
      },
    });
    expect(step.notes.map((n) => n.key)).toEqual(["moved/shop/ReplicaSet/web", "finished"]);
    // Planned again (the status written): nothing more to do or say.
    const again = planMigration(
      input({ status: step.status, tenantPods: pods, hostPods: pods.map((p) => copy(p.metadata.name, dedicated)) }),
    );
    expect(again).toEqual({ status: undefined, evict: [], notes: [], waiting: undefined });
  });

  it("reports a bare Pod as blocked, by name and reason, and ends Blocked when only it is left", () => {
    const bare = tenantPod("debug");
    const step = planMigration(input({ tenantPods: [bare], hostPods: [copy("debug", SHARED_PLACEMENT)] }));
    expect(step.evict).toEqual([]);
    expect(step.status?.migration).toMatchObject({
      phase: "Blocked",
      left: 1,
      blocked: [{ namespace: "shop", name: "debug", reason: BARE_POD_REASON }],
    });
    expect(step.status?.mode).toBe("Shared");
    expect(step.notes.map((n) => [n.action, n.kind, n.key])).toEqual([
      ["Update", "TenantCluster", "started"],
      ["Skip", "Pod", "blocked/shop/debug/uid-debug"],
    ]);
    // Deleted by its owner: the migration completes.
    const done = planMigration(input({ status: step.status, tenantPods: [], hostPods: [] }));
    expect(done.status).toMatchObject({ mode: "Dedicated", migration: { phase: "Complete", left: 0 } });
  });

  it("evicts a bare Pod when evictBarePods is set", () => {
    const bare = tenantPod("debug");
    const step = planMigration(
      input({
        spec: { mode: "Dedicated", placement: dedicated, evictBarePods: true },
        tenantPods: [bare],
        hostPods: [copy("debug", SHARED_PLACEMENT)],
      }),
    );
    expect(step.evict.map((e) => e.name)).toEqual(["debug"]);
    expect(step.status?.migration?.blocked).toBeUndefined();
  });

  it("lists at most 50 blocked Pods and counts all that are left", () => {
    const bare = Array.from({ length: 60 }, (_, i) => tenantPod(`p${String(i).padStart(2, "0")}`));
    const step = planMigration(
      input({ tenantPods: bare, hostPods: bare.map((p) => copy(p.metadata.name, SHARED_PLACEMENT)) }),
    );
    expect(step.status?.migration?.blocked).toHaveLength(50);
    expect(step.status?.migration?.left).toBe(60);
  });

  it("goes back: copies made Dedicated are stale once Shared is asked for again, mid-migration too", () => {
    const migration = { from: "Shared", to: "Dedicated", phase: "Moving", startedAt: started } as const;
    const step = planMigration(
      input({
        spec: { mode: "Shared", placement: SHARED_PLACEMENT, evictBarePods: false },
        status: { mode: "Shared", migration },
        tenantPods: web,
        hostPods: web.map((p) => copy(p.metadata.name, dedicated)),
      }),
    );
    expect(step.status?.migration).toMatchObject({
      from: "Dedicated",
      to: "Shared",
      phase: "Moving",
      startedAt: now.toISOString(),
    });
    expect(step.evict.map((e) => e.name)).toEqual(["web-1", "web-2", "web-3"]);
  });

  it("ignores Pods never synced (no host copy from before the migration), but waits for new ones", () => {
    const unsynced = tenantPod("skipped", { owner: "skipped", ready: false });
    const step = planMigration(input({ tenantPods: [unsynced], hostPods: [] }));
    expect(step.status?.migration).toMatchObject({ phase: "Complete", left: 0 });
    const migration = { from: "Shared", to: "Dedicated", phase: "Moving", startedAt: started } as const;
    const fresh = tenantPod("web-9", { owner: "web", ready: false, created: "2026-12-02T00:59:59Z" });
    const waiting = planMigration(input({ status: { mode: "Shared", migration }, tenantPods: [fresh], hostPods: [] }));
    expect(waiting.status?.migration?.phase).toBe("Moving");
    expect(waiting.waiting).toContain("waiting for 1 Pod(s)");
  });

  it("ignores finished Pods: they run nowhere", () => {
    const done = tenantPod("job-1", { owner: "job", phase: "Succeeded" });
    const step = planMigration(
      input({ status: { mode: "Shared" }, tenantPods: [done], hostPods: [copy("job-1", SHARED_PLACEMENT)] }),
    );
    expect(step.status?.migration).toMatchObject({ phase: "Complete", left: 0 });
    expect(step.evict).toEqual([]);
  });

  it("resumes from status alone: the same input gives the same step", () => {
    const migration = { from: "Shared", to: "Dedicated", phase: "Moving", startedAt: started } as const;
    const a = planMigration(input({ status: { mode: "Shared", migration }, tenantPods: web, hostPods: sharedCopies }));
    const b = planMigration(input({ status: { mode: "Shared", migration }, tenantPods: web, hostPods: sharedCopies }));
    expect(a).toEqual(b);
    expect(a.notes.map((n) => n.key)).toEqual(["moving/shop/ReplicaSet/web"]);
  });
});
