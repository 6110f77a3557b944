import { defaultSyncPolicySpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { plan } from "./plan.js";

// The provisioner's control-plane Services select `tenantplane.io/control-plane-of: <tenant>`;
// that is safe only because no tenant object can bring the key to the host.
describe("a tenant Pod posing as the control plane", () => {
  it("reaches the host without the control-plane labels, so no control-plane Service selects it", () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "impostor",
        namespace: "default",
        labels: {
          app: "web",
          "tenantplane.io/control-plane-of": "dev",
          "tenantplane.io/control-plane": "true",
        },
      },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    };
    const { decisions } = plan({ tenant: "dev", policy: defaultSyncPolicySpec, tenantObjects: [pod], hostObjects: [] });
    const created = decisions.find((d) => d.action === "Create" && d.kind === "Pod");
    expect(created).toBeDefined();
    const labels = (created?.object as { metadata: { labels: Record<string, string> } }).metadata.labels;
    expect(labels["tenantplane.io/control-plane-of"]).toBeUndefined();
    expect(labels["tenantplane.io/control-plane"]).toBeUndefined();
    expect(labels["app"]).toBe("web");
    expect(labels["tenantplane.io/tenant"]).toBe("dev");
  });
});
