import { reverseMapping } from "@tenantplane/mapping";
import {
  ANNOTATION_PLACEMENT,
  placementText,
  PRIVATE_PLACEMENT,
  SHARED_PLACEMENT,
  type Placement,
} from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import {
  BARE_POD_REASON,
  HOST_STORAGE_REASON,
  planMigration,
  type MigrationInput,
  type MigrationPod,
} from "./migration-plan.js";

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

describe("planMigration with Private", () => {
  const privateSpec = { mode: "Private" as const, placement: PRIVATE_PLACEMENT, evictBarePods: false };
  const own = new Set(["own-1", "own-2"]);
  /** A tenant Pod its own scheduler bound to a node joined to its API (no host copy). */
  const onOwn = (name: string, opts: Parameters<typeof tenantPod>[1] = {}, node = "own-1"): MigrationPod => {
    const pod = tenantPod(name, opts);
    return { ...pod, spec: { nodeName: node } };
  };
  const claimCopy = (claim: string) => {
    const mapping = reverseMapping({ tenant, namespace: "shop", name: claim }, "PersistentVolumeClaim");
    return {
      metadata: {
        name: `${claim}-x-shop-x-dev`,
        namespace: "tp-dev",
        labels: mapping.labels,
        annotations: mapping.annotations,
      },
    };
  };
  const withClaim = (pod: MigrationPod, volume: Record<string, unknown>): MigrationPod => ({
    ...pod,
    spec: { ...pod.spec, volumes: [{ name: "data", ...volume }] },
  });

  for (const from of ["Shared", "Dedicated"] as const) {
    const placement = from === "Shared" ? SHARED_PLACEMENT : dedicated;
    const copies = [...web, ...api].map((p) => copy(p.metadata.name, placement));

    it(`${from} → Private: every Pod with a host copy is stale, one controller evicted at a time`, () => {
      const step = planMigration(
        input({
          spec: privateSpec,
          status: { mode: from },
          tenantPods: [...web, ...api],
          hostPods: copies,
          privateNodes: own,
        }),
      );
      expect(step.evict.map((e) => e.name)).toEqual(["api-1", "api-2"]);
      expect(step.status).toMatchObject({
        mode: from,
        migration: { from, to: "Private", phase: "Moving", moved: 0, left: 5 },
      });
      expect(step.notes[0]?.reason).toBe(
        `isolation migration ${from} → Private started: 5 Pod(s) of 2 workload(s) run in the old placement and move by eviction through the tenant API, one controller at a time, honouring its PodDisruptionBudgets`,
      );
    });

    it(`${from} → Private: a replacement on the tenant's own node, Running and Ready, is placed; pending, in flight`, () => {
      const migration = { from, to: "Private" as const, phase: "Moving" as const, startedAt: started };
      const replacements = [
        onOwn("api-3", { owner: "api", created: "2026-12-02T00:59:40Z" }),
        tenantPod("api-4", { owner: "api", created: "2026-12-02T00:59:41Z", ready: false }),
      ];
      const step = planMigration(
        input({
          spec: privateSpec,
          status: { mode: from, migration },
          tenantPods: [...web, ...replacements],
          hostPods: copies,
          privateNodes: own,
        }),
      );
      // api-4 (no node yet) is in flight: web waits for it.
      expect(step.evict).toEqual([]);
      expect(step.waiting).toContain("waiting for 1 Pod(s) to run in the new placement");
      expect(step.status?.migration).toMatchObject({ phase: "Moving", moved: 1, left: 3 });
    });
  }

  it("Shared → Private completes once every Pod runs on the tenant's own nodes, and the mode becomes Private", () => {
    const migration = { from: "Shared" as const, to: "Private" as const, phase: "Moving" as const, startedAt: started };
    const pods = ["web-4", "web-5", "web-6"].map((n) =>
      onOwn(n, { owner: "web", created: "2026-12-02T00:59:40Z" }, n === "web-5" ? "own-2" : "own-1"),
    );
    const step = planMigration(
      input({ spec: privateSpec, status: { mode: "Shared", migration }, tenantPods: pods, privateNodes: own }),
    );
    expect(step.status).toMatchObject({
      mode: "Private",
      migration: { from: "Shared", to: "Private", phase: "Complete", moved: 3, left: 0 },
    });
    expect(step.evict).toEqual([]);
    expect(step.notes.map((n) => n.key)).toEqual(["moved/shop/ReplicaSet/web", "finished"]);
  });

  it("a tenant made Private from the start gets its mode and no migration", () => {
    const step = planMigration(
      input({ spec: privateSpec, status: {}, tenantPods: [onOwn("web-1", { owner: "web" })], privateNodes: own }),
    );
    expect(step).toEqual({ status: { mode: "Private" }, evict: [], notes: [], waiting: undefined });
    // And once Private is in effect, Pods on its own nodes are at rest.
    const settled = planMigration(
      input({
        spec: privateSpec,
        status: { mode: "Private" },
        tenantPods: [onOwn("web-1", { owner: "web" })],
        privateNodes: own,
      }),
    );
    expect(settled).toEqual({ status: undefined, evict: [], notes: [], waiting: undefined });
  });

  it("going Private, a Pod on a claim whose storage the host holds is blocked naming the claim, never evicted", () => {
    const db = withClaim(tenantPod("db-0", { owner: "db" }), { persistentVolumeClaim: { claimName: "data-db-0" } });
    const cache = withClaim(tenantPod("cache-0", { owner: "cache" }), { ephemeral: { volumeClaimTemplate: {} } });
    const step = planMigration(
      input({
        spec: privateSpec,
        tenantPods: [db, cache, ...web],
        hostPods: [db, cache, ...web].map((p) => copy(p.metadata.name, SHARED_PLACEMENT)),
        hostClaims: [claimCopy("data-db-0"), claimCopy("cache-0-data")],
        privateNodes: own,
      }),
    );
    // web still moves; db and cache never do.
    expect(step.evict.map((e) => e.name)).toEqual(["web-1", "web-2", "web-3"]);
    expect(step.status?.migration?.phase).toBe("Moving");
    expect(step.status?.migration?.blocked).toEqual([
      {
        namespace: "shop",
        name: "cache-0",
        reason: `${HOST_STORAGE_REASON}: PersistentVolumeClaim cache-0-data (host copy tp-dev/cache-0-data-x-shop-x-dev)`,
      },
      {
        namespace: "shop",
        name: "db-0",
        reason: `${HOST_STORAGE_REASON}: PersistentVolumeClaim data-db-0 (host copy tp-dev/data-db-0-x-shop-x-dev)`,
      },
    ]);
    expect(HOST_STORAGE_REASON).toBe(
      "host-backed storage cannot follow to the tenant's own nodes (move the data to a claim there and recreate the workload, or stay Shared or Dedicated)",
    );
    const note = step.notes.find((n) => n.key.startsWith("blocked/shop/db-0/"));
    expect(note).toMatchObject({ action: "Skip", kind: "Pod", tenantRef: { namespace: "shop", name: "db-0" } });
    expect(note?.reason).toBe(
      `isolation migration Shared → Private cannot move Pod shop/db-0: ${HOST_STORAGE_REASON}: PersistentVolumeClaim data-db-0 (host copy tp-dev/data-db-0-x-shop-x-dev)`,
    );
  });

  it("is Blocked when only Pods on host storage are left, and a claim without a host copy does not block", () => {
    const migration = { from: "Shared" as const, to: "Private" as const, phase: "Moving" as const, startedAt: started };
    const db = withClaim(tenantPod("db-0", { owner: "db" }), { persistentVolumeClaim: { claimName: "data-db-0" } });
    const local = withClaim(tenantPod("local-0", { owner: "local" }), { persistentVolumeClaim: { claimName: "own" } });
    const step = planMigration(
      input({
        spec: privateSpec,
        status: { mode: "Shared", migration },
        tenantPods: [db, onOwn("web-4", { owner: "web", created: "2026-12-02T00:59:40Z" })],
        hostPods: [copy("db-0", SHARED_PLACEMENT)],
        hostClaims: [claimCopy("data-db-0")],
        privateNodes: own,
      }),
    );
    expect(step.evict).toEqual([]);
    expect(step.status).toMatchObject({ mode: "Shared", migration: { phase: "Blocked", moved: 1, left: 1 } });
    const movable = planMigration(
      input({
        spec: privateSpec,
        tenantPods: [local],
        hostPods: [copy("local-0", SHARED_PLACEMENT)],
        hostClaims: [claimCopy("data-db-0")],
        privateNodes: own,
      }),
    );
    expect(movable.evict.map((e) => e.name)).toEqual(["local-0"]);
  });

  for (const to of ["Shared", "Dedicated"] as const) {
    const spec = { mode: to, placement: to === "Shared" ? SHARED_PLACEMENT : dedicated, evictBarePods: false };

    it(`Private → ${to}: Pods on the tenant's own nodes are stale and move by eviction, host storage no obstacle`, () => {
      const pods = [
        ...["web-1", "web-2"].map((n) => onOwn(n, { owner: "web" })),
        withClaim(onOwn("db-0", { owner: "db" }), { persistentVolumeClaim: { claimName: "data-db-0" } }),
      ];
      const step = planMigration(
        input({
          spec,
          status: { mode: "Private" },
          tenantPods: pods,
          hostClaims: [claimCopy("data-db-0")],
          privateNodes: own,
        }),
      );
      expect(step.evict.map((e) => e.name)).toEqual(["db-0"]);
      expect(step.status).toMatchObject({
        mode: "Private",
        migration: { from: "Private", to, phase: "Moving", moved: 0, left: 3 },
      });
      expect(step.status?.migration?.blocked).toBeUndefined();
    });

    it(`Private → ${to}: replacements copied for ${to} complete it; the mode becomes ${to}`, () => {
      const migration = { from: "Private" as const, to, phase: "Moving" as const, startedAt: started };
      const pods = ["web-3", "web-4"].map((n) => tenantPod(n, { owner: "web", created: "2026-12-02T00:59:40Z" }));
      const copies = pods.map((p) => copy(p.metadata.name, spec.placement));
      const moving = planMigration(
        input({
          spec,
          status: { mode: "Private", migration },
          tenantPods: [...pods, onOwn("api-1", { owner: "api" })],
          hostPods: copies,
          privateNodes: own,
        }),
      );
      expect(moving.evict.map((e) => e.name)).toEqual(["api-1"]);
      const done = planMigration(
        input({ spec, status: { mode: "Private", migration }, tenantPods: pods, hostPods: copies, privateNodes: own }),
      );
      expect(done.status).toMatchObject({ mode: to, migration: { from: "Private", to, phase: "Complete", moved: 2 } });
    });
  }

  it("Private → Shared: a bare Pod on the tenant's own node blocks as any bare Pod does", () => {
    const step = planMigration(
      input({
        spec: { mode: "Shared", placement: SHARED_PLACEMENT, evictBarePods: false },
        status: { mode: "Private" },
        tenantPods: [onOwn("debug")],
        privateNodes: own,
      }),
    );
    expect(step.status?.migration).toMatchObject({
      phase: "Blocked",
      blocked: [{ name: "debug", reason: BARE_POD_REASON }],
    });
  });

  it("a Pod bound to a virtual node (its host node) is not the tenant's own", () => {
    const step = planMigration(
      input({
        spec: { mode: "Shared", placement: SHARED_PLACEMENT, evictBarePods: false },
        status: { mode: "Shared" },
        tenantPods: [onOwn("web-1", { owner: "web" }, "host-1")],
        privateNodes: own,
      }),
    );
    expect(step).toEqual({ status: undefined, evict: [], notes: [], waiting: undefined });
  });
});
