import { describe, expect, it } from "vitest";
import { ownedStatusFields } from "./refusal-status.js";

describe("ownedStatusFields", () => {
  it("carries forward only what the manager owns on the status subresource, minus conditions and phase", () => {
    const tc = {
      metadata: {
        managedFields: [
          {
            manager: "tenantplane-provisioner",
            subresource: "status",
            fieldsV1: {
              "f:status": { "f:phase": {}, "f:conditions": {}, "f:hostNamespace": {}, "f:kubeconfigSecretRef": {} },
            },
          },
          { manager: "tenantplane-provisioner", fieldsV1: { "f:spec": {} } },
          { manager: "tenantplane-isolation", subresource: "status", fieldsV1: { "f:status": { "f:endpoint": {} } } },
        ],
      },
      status: {
        phase: "Ready" as const,
        hostNamespace: "tp-a",
        kubeconfigSecretRef: { namespace: "tp-a", name: "a-kubeconfig", key: "kubeconfig" },
        endpoint: "https://k3s.tp-a.svc:6443",
      },
    };
    expect(ownedStatusFields(tc, "tenantplane-provisioner")).toEqual({
      hostNamespace: "tp-a",
      kubeconfigSecretRef: { namespace: "tp-a", name: "a-kubeconfig", key: "kubeconfig" },
    });
    expect(ownedStatusFields(tc, "tenantplane-isolation")).toEqual({ endpoint: "https://k3s.tp-a.svc:6443" });
    expect(ownedStatusFields({}, "tenantplane-isolation")).toEqual({});
  });
});
