import { describe, expect, it } from "vitest";
import type { StorageRules } from "./host-rules.js";
import { planStorageClassCopies, type StorageClassObject } from "./storage-class-copies.js";

const tenant = "acme";
const tenantUid = "uid-acme";

function hostClass(name: string, fields: Partial<StorageClassObject> = {}, annotations?: Record<string, string>) {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name, uid: `uid-${name}`, resourceVersion: "1", ...(annotations ? { annotations } : {}) },
    provisioner: "disk.example.com",
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
    ...fields,
  } as StorageClassObject;
}

const defaultOnly: StorageRules = { allowedClasses: undefined, classMap: {}, hostDefaultClass: "standard" };
const standard = hostClass(
  "standard",
  { parameters: { type: "gp3" }, allowVolumeExpansion: true, mountOptions: ["noatime"] },
  { "storageclass.kubernetes.io/is-default-class": "true", team: "storage" },
);

function planWith(hostClasses: StorageClassObject[], storage: StorageRules = defaultOnly) {
  return planStorageClassCopies({ tenant, tenantUid, storage, hostClasses });
}

/** The copy as the host would serve it after the planned create. */
function created(hostClasses: StorageClassObject[], storage: StorageRules = defaultOnly): StorageClassObject {
  const d = planWith(hostClasses, storage).find((x) => x.action === "Create")!;
  return { ...d.object!, metadata: { ...d.object!.metadata, uid: "uid-copy", resourceVersion: "7" } };
}

describe("planStorageClassCopies", () => {
  it("copies the host's default class for a tenant whose profile names no classes, as the class would provision", () => {
    const [decision, ...rest] = planWith([standard, hostClass("fast")]);
    expect(rest).toEqual([]);
    expect(decision).toMatchObject({ action: "Create", name: "tp-acme.standard", hostClass: "standard" });
    expect(decision!.object).toEqual({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: {
        name: "tp-acme.standard",
        labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "acme" },
        // Never the default-class marker: a copy that became the host default would take every claim naming no class.
        annotations: { "tenantplane.io/storage-class": "standard" },
        ownerReferences: [
          {
            apiVersion: "tenantplane.io/v1alpha1",
            kind: "TenantCluster",
            name: "acme",
            uid: "uid-acme",
            controller: true,
          },
        ],
      },
      provisioner: "disk.example.com",
      parameters: { type: "gp3" },
      reclaimPolicy: "Delete",
      volumeBindingMode: "WaitForFirstConsumer",
      allowVolumeExpansion: true,
      mountOptions: ["noatime"],
    });
    expect(decision!.reason).toBe(
      "copy of host StorageClass standard (the host's default StorageClass, the only one IsolationProfile " +
        "spec.workloads.storage.allowedClasses (absent) allows) for tenant acme's claims: their host copies ask for it, " +
        "so only volumes provisioned for them (or made for this copy) can bind",
    );
  });

  it("copies every allowed class that exists, and none that does not", () => {
    const storage: StorageRules = {
      allowedClasses: ["standard", "fast", "missing"],
      classMap: {},
      hostDefaultClass: "standard",
    };
    const names = planWith([standard, hostClass("fast"), hostClass("slow")], storage).map(
      (d) => `${d.action} ${d.name}`,
    );
    expect(names).toEqual(["Create tp-acme.standard", "Create tp-acme.fast"]);
  });

  it("plans nothing while the host's default class is unknown, and deletes copies once the host has none", () => {
    const copy = created([standard]);
    expect(planWith([standard, copy], { ...defaultOnly, hostDefaultClass: undefined })).toEqual([]);
    const [decision] = planWith([hostClass("standard"), copy], { ...defaultOnly, hostDefaultClass: null });
    expect(decision).toMatchObject({ action: "Delete", name: "tp-acme.standard", current: copy });
    expect(decision!.reason).toContain("host class standard is no longer the host's default StorageClass");
  });

  it("is steady once the copy is in place", () => {
    expect(planWith([standard, created([standard])])).toEqual([]);
  });

  it("updates a copy in place for a field a class may change", () => {
    const copy = created([standard]);
    const grown = { ...standard, allowVolumeExpansion: false, mountOptions: ["noatime", "nodiratime"] };
    const [decision] = planWith([grown, copy]);
    expect(decision).toMatchObject({ action: "Update", name: "tp-acme.standard", current: copy });
    expect(decision!.object).toMatchObject({ allowVolumeExpansion: false, mountOptions: ["noatime", "nodiratime"] });
    expect(decision!.reason).toBe(
      "copy of host StorageClass standard brought in step: allowVolumeExpansion, mountOptions",
    );
    // Someone marking the copy as the host default is undone.
    const marked = {
      ...copy,
      metadata: {
        ...copy.metadata,
        annotations: { ...copy.metadata.annotations, "storageclass.kubernetes.io/is-default-class": "true" },
      },
    };
    expect(planWith([standard, marked])[0]).toMatchObject({
      action: "Update",
      reason: expect.stringContaining("metadata"),
    });
  });

  it("deletes a copy whose host class changed a field no class may change, to make it again", () => {
    const copy = created([standard]);
    const remade = {
      ...standard,
      parameters: { type: "io2" },
      metadata: { ...standard.metadata, uid: "uid-standard-2" },
    };
    const [decision, ...rest] = planWith([remade, copy]);
    expect(rest).toEqual([]);
    expect(decision).toMatchObject({ action: "Delete", name: "tp-acme.standard", current: copy });
    expect(decision!.reason).toBe(
      "host StorageClass standard changed parameters, which a StorageClass cannot change: the copy is made again; " +
        "claims already bound keep their volumes (a class is read only to provision or expand)",
    );
    // Once gone, it is made with the new parameters.
    expect(planWith([remade])[0]).toMatchObject({ action: "Create", object: { parameters: { type: "io2" } } });
  });

  it("reads server defaults as written: a class leaving out its reclaim policy and binding mode equals one stating them", () => {
    const bare = hostClass("standard", { reclaimPolicy: undefined, volumeBindingMode: undefined });
    const copy = created([bare]);
    const served = { ...copy, reclaimPolicy: "Delete", volumeBindingMode: "Immediate" };
    expect(planWith([bare, served])).toEqual([]);
  });

  it("deletes a copy whose class the profile no longer allows, or whose host class is gone; leaves other tenants' copies alone", () => {
    const storage: StorageRules = { allowedClasses: ["fast"], classMap: {}, hostDefaultClass: "standard" };
    const copy = created([standard]);
    const others = {
      ...copy,
      metadata: {
        ...copy.metadata,
        name: "tp-bank.standard",
        labels: { ...copy.metadata.labels, "tenantplane.io/tenant": "bank" },
      },
    };
    const decisions = planWith([standard, copy, others], storage);
    expect(decisions.map((d) => `${d.action} ${d.name}`)).toEqual(["Delete tp-acme.standard"]);
    expect(decisions[0]!.reason).toContain(
      "host class standard is no longer in IsolationProfile spec.workloads.storage.allowedClasses",
    );
    const [gone] = planWith([copy]);
    expect(gone).toMatchObject({
      action: "Delete",
      reason: expect.stringContaining("host StorageClass standard is gone"),
    });
  });

  it("never copies a copy, and never takes a name held by a class that is not this tenant's copy", () => {
    const copy = created([standard]);
    const listsACopy: StorageRules = {
      allowedClasses: ["tp-acme.standard"],
      classMap: {},
      hostDefaultClass: "standard",
    };
    expect(planWith([standard, copy], listsACopy).map((d) => d.action)).toEqual(["Delete"]);
    const squatter = hostClass("tp-acme.standard");
    const [decision] = planWith([standard, squatter]);
    expect(decision).toMatchObject({ action: "Skip", name: "tp-acme.standard" });
    expect(decision!.reason).toContain("exists and is not tenant acme's copy of standard: left alone");
  });
});
