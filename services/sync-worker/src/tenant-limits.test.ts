import { describe, expect, it } from "vitest";
import { encodeKey } from "./source-key.js";
import {
  heldBackStub,
  leanHostCopy,
  sizeFromWire,
  sizeOf,
  TenantBudget,
  withoutManagedFields,
} from "./tenant-limits.js";

const limits = { objectsPerKind: 2, objectBytes: 1000, totalBytes: 1500 };
const key = (kind: string, name: string) => encodeKey({ kind, namespace: "shop", name });

describe("TenantBudget", () => {
  it("holds back an object over the per-object limit, naming the limit and the chart value", () => {
    const budget = new TenantBudget(limits);
    expect(budget.judge("ConfigMap", "shop", "big", 1001)).toEqual({ limit: "objectBytes", bytes: 1001 });
    expect(budget.bytes).toBe(0);
    const reason = budget.reason("ConfigMap", "shop", "big", budget.excess(key("ConfigMap", "big"))!);
    expect(reason).toBe(
      "ConfigMap shop/big is 1001 B, over the limit of 1000 B per object: not synced; raise the chart value services.sync-worker.env.TENANT_MAX_OBJECT_BYTES to sync it",
    );
  });

  it("tells the size of an object's admitted version, and nothing for one held back", () => {
    const budget = new TenantBudget(limits);
    budget.judge("ConfigMap", "shop", "a", 300);
    budget.judge("ConfigMap", "shop", "a", 400);
    budget.judge("ConfigMap", "shop", "big", 1001);
    expect(budget.bytesOf({ kind: "ConfigMap", namespace: "shop", name: "a" })).toBe(400);
    expect(budget.bytesOf({ kind: "ConfigMap", namespace: "shop", name: "big" })).toBeUndefined();
    expect(budget.bytesOf({ kind: "Secret", namespace: "shop", name: "a" })).toBeUndefined();
  });

  it("admits the first objects of a kind up to the count, then holds back; other kinds have their own count", () => {
    const budget = new TenantBudget(limits);
    expect(budget.judge("ConfigMap", "shop", "a", 10)).toBeUndefined();
    expect(budget.judge("ConfigMap", "shop", "b", 10)).toBeUndefined();
    expect(budget.judge("ConfigMap", "shop", "c", 10)?.limit).toBe("objectsPerKind");
    expect(budget.judge("Secret", "shop", "c", 10)).toBeUndefined();
    // A new version of an admitted object is no new object.
    expect(budget.judge("ConfigMap", "shop", "a", 20)).toBeUndefined();
    expect(budget.bytes).toBe(40);
    expect(budget.summary()).toBe(
      "1 object not synced, over the tenant limits: 1 beyond 2 objects per kind (the chart value services.sync-worker.env.TENANT_MAX_OBJECTS_PER_KIND)",
    );
  });

  it("holds back what would take the total over, frees room on delete, and admits a later version that fits", () => {
    const budget = new TenantBudget(limits);
    expect(budget.judge("ConfigMap", "shop", "a", 900)).toBeUndefined();
    expect(budget.judge("Secret", "shop", "b", 700)?.limit).toBe("totalBytes");
    expect(budget.heldBack).toBe(1);
    budget.release("ConfigMap", "shop", "a");
    expect(budget.bytes).toBe(0);
    expect(budget.excess(key("Secret", "b"))?.limit).toBe("totalBytes");
    expect(budget.judge("Secret", "shop", "b", 700)).toBeUndefined();
    expect(budget.heldBack).toBe(0);
    expect(budget.summary()).toBeUndefined();
  });

  it("names the held-back objects that fit once room is free, oldest first and only as many as fit together", () => {
    const budget = new TenantBudget({ objectsPerKind: 2, objectBytes: 1000, totalBytes: 1500 });
    budget.judge("ConfigMap", "shop", "a", 900);
    budget.judge("ConfigMap", "shop", "b", 500);
    budget.judge("ConfigMap", "shop", "c", 400); // total
    budget.judge("Secret", "shop", "d", 300); // total
    budget.judge("ConfigMap", "shop", "huge", 1001); // per object: never fits by freeing room
    budget.judge("ConfigMap", "shop", "e", 50); // per kind: a and b are the two
    expect(budget.readmittable()).toEqual([]);
    budget.release("ConfigMap", "shop", "a");
    // 500 used: c (400) and d (300) make 1200, and e (50) would fit in bytes, but c is the one more ConfigMap.
    expect(budget.readmittable()).toEqual([
      { kind: "ConfigMap", namespace: "shop", name: "c" },
      { kind: "Secret", namespace: "shop", name: "d" },
    ]);
    // Naming them admits nothing: only a judged version is.
    expect(budget.heldBack).toBe(4);
  });

  it("an admitted object that grows past a limit is held back and its room freed", () => {
    const budget = new TenantBudget(limits);
    budget.judge("ConfigMap", "shop", "a", 900);
    expect(budget.judge("ConfigMap", "shop", "a", 1200)?.limit).toBe("objectBytes");
    expect(budget.bytes).toBe(0);
    expect(budget.judge("ConfigMap", "shop", "b", 1000)).toBeUndefined();
  });

  it("does not count objects in the tenant's system namespaces, which are never synced", () => {
    const budget = new TenantBudget(limits);
    expect(budget.judge("ConfigMap", "kube-system", "huge", 10_000)).toBeUndefined();
    expect(budget.bytes).toBe(0);
  });

  it("gives a reason that stays the same for one version, so its Skip is published once", () => {
    const budget = new TenantBudget(limits);
    budget.judge("ConfigMap", "shop", "a", 900);
    budget.judge("ConfigMap", "shop", "b", 700);
    const first = budget.reason("ConfigMap", "shop", "b", budget.excess(key("ConfigMap", "b"))!);
    budget.judge("Secret", "shop", "c", 100);
    expect(budget.reason("ConfigMap", "shop", "b", budget.excess(key("ConfigMap", "b"))!)).toBe(first);
    expect(first).toContain("limit of 1.5 KiB in total");
    expect(first).toContain("TENANT_MAX_BYTES");
  });
});

describe("TenantBudget.fits", () => {
  it("answers as judge would, and judges nothing", () => {
    const budget = new TenantBudget(limits);
    budget.judge("ConfigMap", "shop", "a", 900);
    expect(budget.fits("ConfigMap", "shop", "b", 600)).toBe(true);
    expect(budget.fits("ConfigMap", "shop", "b", 601)).toBe(false);
    expect(budget.fits("ConfigMap", "shop", "b", 1001)).toBe(false);
    // An admitted object's new version is weighed without its old one.
    expect(budget.fits("ConfigMap", "shop", "a", 1000)).toBe(true);
    // The system namespaces are never counted.
    expect(budget.fits("ConfigMap", "kube-system", "b", 5000)).toBe(true);
    expect(budget.bytes).toBe(900);
    expect(budget.heldBack).toBe(0);
    expect(budget.judge("ConfigMap", "shop", "b", 601)?.limit).toBe("totalBytes");
  });
});

describe("sizeFromWire", () => {
  it("is the size sizeOf gives the parsed object once its managed fields are dropped", () => {
    const metadata = {
      name: "c",
      namespace: "shop",
      annotations: { note: 'q"uote é' },
      managedFields: [{ manager: "kubectl", operation: "Apply", fieldsV1: { "f:data": {} } }],
    };
    const object = { kind: "ConfigMap", apiVersion: "v1", metadata, data: { payload: "x".repeat(70_000) } };
    const objectBytes = Buffer.byteLength(JSON.stringify(object));
    const metadataBytes = Buffer.byteLength(JSON.stringify(metadata));
    const { managedFields: _, ...cached } = metadata;
    expect(sizeFromWire(cached, objectBytes, metadataBytes)).toBe(
      sizeOf(withoutManagedFields(structuredClone(object) as never)),
    );
  });
});

describe("heldBackStub", () => {
  it("keeps identity and version, none of what the tenant wrote", () => {
    const obj = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "big",
        namespace: "shop",
        uid: "u1",
        resourceVersion: "7",
        labels: { a: "b" },
        annotations: { x: "y".repeat(1000) },
      },
      data: { k: "v".repeat(100_000) },
    };
    const stub = heldBackStub(obj);
    expect(stub).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big", namespace: "shop", uid: "u1", resourceVersion: "7" },
    });
    expect(sizeOf(stub)).toBeLessThan(200);
    expect(sizeOf(obj)).toBeGreaterThan(101_000);
  });
});

describe("leanHostCopy", () => {
  const labels = { "tenantplane.io/kind": "ConfigMap" };
  it("drops the payload of sync copies of ConfigMaps and Secrets, keeping metadata (the content hash)", () => {
    const copy = {
      kind: "ConfigMap",
      metadata: { name: "a", labels, annotations: { "tenantplane.io/content-hash": "h" } },
      data: { k: "v" },
      binaryData: { b: "AA==" },
    };
    expect(leanHostCopy(copy, "tenantplane.io/kind")).toEqual({ kind: "ConfigMap", metadata: copy.metadata });
    expect(copy.data).toEqual({ k: "v" });
  });

  it("keeps tenantplane's own objects (no sync kind label) and other kinds whole", () => {
    const records = { kind: "ConfigMap", metadata: { name: "tenant-dns-records", labels: {} }, data: { zone: "z" } };
    expect(leanHostCopy(records, "tenantplane.io/kind")).toBe(records);
    const pod = { kind: "Pod", metadata: { name: "p", labels: { "tenantplane.io/kind": "Pod" } }, spec: {} };
    expect(leanHostCopy(pod, "tenantplane.io/kind")).toBe(pod);
  });

  it("drops managedFields from every object it keeps, sync copy or not", () => {
    const managedFields = [{ manager: "kube-scheduler", fieldsV1: { "f:spec": { "f:nodeName": {} } } }];
    const pod = { kind: "Pod", metadata: { name: "p", labels: { "tenantplane.io/kind": "Pod" }, managedFields } };
    const records = { kind: "ConfigMap", metadata: { name: "tenant-dns-records", managedFields }, data: {} };
    expect(leanHostCopy(pod, "tenantplane.io/kind").metadata).toEqual({ name: "p", labels: pod.metadata.labels });
    expect(leanHostCopy(records, "tenantplane.io/kind").metadata).toEqual({ name: "tenant-dns-records" });
  });
});

describe("withoutManagedFields", () => {
  it("removes them and leaves the rest of the object as read", () => {
    const obj = {
      kind: "Secret",
      metadata: { name: "s", uid: "u", managedFields: [{ manager: "m" }] },
      data: { a: "Yg==" },
    };
    expect(withoutManagedFields(obj)).toEqual({
      kind: "Secret",
      metadata: { name: "s", uid: "u" },
      data: { a: "Yg==" },
    });
  });
});

describe("sizeOf", () => {
  it("is the UTF-8 length of the object's JSON, whatever it holds", () => {
    const objects = [
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { payload: "x".repeat(100_000) } },
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "é€😀", namespace: "n", labels: { "a/b": 'q"uote\\back' } },
        data: { ctl: "tab\there\nline\u0001\u001f", lone: "\ud800x\udfff", pair: "😀" },
        binaryData: {},
      },
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p", generation: 3, deletionGracePeriodSeconds: 0, ratio: -1.5e-7, big: 1e21 },
        spec: { containers: [{ name: "c", args: [], ports: [1, 2.5, null], ok: true, no: false }], empty: [[], [{}]] },
        odd: {
          nan: Number.NaN,
          inf: Number.POSITIVE_INFINITY,
          skipped: undefined,
          fn: () => 1,
          list: [undefined, () => 1],
        },
        date: new Date(0),
      },
    ];
    for (const obj of objects) expect(sizeOf(obj as never)).toBe(Buffer.byteLength(JSON.stringify(obj)));
  });
});
