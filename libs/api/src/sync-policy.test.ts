import { describe, expect, it } from "vitest";
import { API_VERSION } from "./constants.js";
import { defaultSyncPolicySpec, parseSyncPolicy, parseSyncPolicySpec, SYNC_KINDS } from "./sync-policy.js";

describe("SyncPolicy", () => {
  it("parses a policy", () => {
    const policy = parseSyncPolicy({
      apiVersion: API_VERSION,
      kind: "SyncPolicy",
      metadata: { name: "workloads" },
      spec: { toHost: [{ kind: "Pod" }, { kind: "Secret" }] },
    });
    expect(policy.spec.toHost.map((r) => r.kind)).toEqual(["Pod", "Secret"]);
  });

  it("rejects an unknown kind, naming the supported ones", () => {
    expect(() => parseSyncPolicySpec({ toHost: [{ kind: "Deployment" }] })).toThrow(
      'spec.toHost[0].kind: unknown kind "Deployment": use one of Pod, ConfigMap, Secret, Service, ServiceAccount, PersistentVolumeClaim',
    );
  });

  it("rejects a kind listed twice and a missing toHost", () => {
    expect(() => parseSyncPolicySpec({ toHost: [{ kind: "Pod" }, { kind: "Pod" }] })).toThrow(
      "spec.toHost: each kind may appear once in toHost",
    );
    expect(() => parseSyncPolicySpec({})).toThrow("spec.toHost:");
  });

  it("defaults to every supported kind", () => {
    expect(defaultSyncPolicySpec.toHost.map((r) => r.kind)).toEqual([...SYNC_KINDS]);
    expect(parseSyncPolicySpec(defaultSyncPolicySpec)).toEqual(defaultSyncPolicySpec);
  });
});
