import { describe, expect, it } from "vitest";
import { orphanedVolumes, planClaim, virtualVolume, type VolumeObject } from "./pvcs.js";

const claim: VolumeObject = {
  metadata: { name: "data", namespace: "shop", uid: "c-uid" },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
  status: { phase: "Pending" },
};
const hostBound: VolumeObject = {
  metadata: { name: "data-x-shop-x-t", namespace: "tp-t" },
  spec: { volumeName: "pvc-host-123" },
  status: { phase: "Bound", capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] },
};

describe("planClaim", () => {
  it("gives a claim bound on the host a pre-bound virtual volume, its name and the host's status", () => {
    const steps = planClaim({ tenant: claim, host: hostBound, volume: undefined });
    expect(steps.map((s) => s.action)).toEqual(["CreateVolume", "VolumeStatus", "BindClaim", "ClaimStatus"]);
    expect(steps[2]).toEqual({ action: "BindClaim", volumeName: "pvc-c-uid" });
    expect(steps[3]).toEqual({
      action: "ClaimStatus",
      patch: { phase: "Bound", capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] },
    });
  });

  it("writes the virtual volume so the tenant's volume controller agrees: claimRef, class, Retain", () => {
    const v = virtualVolume({ ...claim, spec: { ...claim.spec, storageClassName: "fast" } }, hostBound);
    expect(v.spec).toMatchObject({
      capacity: { storage: "1Gi" },
      claimRef: { namespace: "shop", name: "data", uid: "c-uid" },
      storageClassName: "fast",
      persistentVolumeReclaimPolicy: "Retain",
      csi: { volumeHandle: "pvc-host-123" },
    });
  });

  it("does nothing once the tenant shows the binding", () => {
    const done: VolumeObject = {
      ...claim,
      spec: { ...claim.spec, volumeName: "pvc-c-uid" },
      status: { phase: "Bound", capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] },
    };
    const volume: VolumeObject = { metadata: { name: "pvc-c-uid" }, status: { phase: "Bound" } };
    expect(planClaim({ tenant: done, host: hostBound, volume })).toEqual([]);
  });

  it("waits while the host claim is Pending, and leaves a claim the tenant bound itself alone", () => {
    expect(
      planClaim({ tenant: claim, host: { ...hostBound, status: { phase: "Pending" } }, volume: undefined }),
    ).toEqual([]);
    const own = { ...claim, spec: { ...claim.spec, volumeName: "my-pv" } };
    expect(planClaim({ tenant: own, host: hostBound, volume: undefined })).toEqual([]);
  });
});

describe("orphanedVolumes", () => {
  it("returns virtual volumes whose claim is gone, never the tenant's own", () => {
    const mine = (name: string, uid: string): VolumeObject => ({
      metadata: { name, labels: { "tenantplane.io/virtual-volume": "true" } },
      spec: { claimRef: { uid } },
    });
    const theirs: VolumeObject = { metadata: { name: "own" }, spec: { claimRef: { uid: "gone" } } };
    const out = orphanedVolumes([mine("a", "c-uid"), mine("b", "gone"), theirs], [claim]);
    expect(out.map((v) => v.metadata.name)).toEqual(["b"]);
  });
});
