import { describe, expect, it } from "vitest";
import { quotaReaderRbac, quotaView, tenantQuota, viewIsCurrent, type QuotaLike } from "./quota.js";

const quota = (overrides: Partial<QuotaLike> = {}): QuotaLike => ({
  metadata: {
    name: "tenantplane-quota",
    annotations: {
      "tenantplane.io/isolation-profile": "(built-in)",
      "tenantplane.io/control-plane-share": JSON.stringify({
        pods: "2",
        "limits.cpu": "700m",
        "requests.memory": "288Mi",
      }),
    },
  },
  spec: { hard: { pods: "52", "limits.cpu": "24700m", "requests.memory": "16672Mi", "services.loadbalancers": "1" } },
  status: {
    hard: { pods: "52", "limits.cpu": "24700m", "requests.memory": "16672Mi", "services.loadbalancers": "1" },
    used: { pods: "5", "limits.cpu": "2200m", "requests.memory": "672Mi", "services.loadbalancers": "0" },
  },
  ...overrides,
});

describe("tenantQuota", () => {
  it("takes the control plane's share out of the host's limits and usage", () => {
    expect(tenantQuota(quota())).toEqual({
      profile: "(built-in)",
      hard: { pods: "50", "limits.cpu": "24", "requests.memory": "16Gi", "services.loadbalancers": "1" },
      used: { pods: "3", "limits.cpu": "1500m", "requests.memory": "384Mi", "services.loadbalancers": "0" },
      share: { pods: "2", "limits.cpu": "700m", "requests.memory": "288Mi" },
    });
  });

  it("never shows usage below zero while the control plane is still starting", () => {
    const starting = quota({ status: { ...quota().status, used: { pods: "1", "limits.cpu": "500m" } } });
    expect(tenantQuota(starting).used).toEqual({ pods: "0", "limits.cpu": "0" });
  });

  it("reads the limits from spec before the quota controller has seen the quota, and no usage", () => {
    const fresh = quota({ status: {} });
    expect(tenantQuota(fresh).hard["pods"]).toBe("50");
    expect(tenantQuota(fresh).used).toEqual({});
  });

  it("shows the host's numbers when the share annotation is missing or not JSON", () => {
    const missing: Record<string, string> = {};
    for (const annotations of [missing, { "tenantplane.io/control-plane-share": "not json" }]) {
      const view = tenantQuota(quota({ metadata: { name: "tenantplane-quota", annotations } }));
      expect(view.hard["pods"]).toBe("52");
      expect(view.share).toEqual({});
    }
  });
});

describe("quotaView", () => {
  it("is the ConfigMap kube-public/tenantplane-quota with JSON, a table, the profile and the host quota", () => {
    const view = quotaView("dev", "tp-dev", quota());
    expect(view.metadata).toEqual({
      name: "tenantplane-quota",
      namespace: "kube-public",
      labels: { "app.kubernetes.io/managed-by": "tenantplane" },
    });
    const data = view["data"] as Record<string, string>;
    expect(JSON.parse(data["hard"]!)).toEqual(tenantQuota(quota()).hard);
    expect(JSON.parse(data["used"]!)).toEqual(tenantQuota(quota()).used);
    expect(data["profile"]).toBe("(built-in)");
    expect(data["hostQuota"]).toBe("ResourceQuota tenantplane-quota in host namespace tp-dev");
    expect(data["summary"]!.split("\n")).toEqual([
      "RESOURCE                USED   HARD",
      "limits.cpu              1500m  24",
      "pods                    3      50",
      "requests.memory         384Mi  16Gi",
      "services.loadbalancers  0      1",
    ]);
    expect(data["about"]).toContain("Warning Event on the Pod");
  });

  it("says so when the profile sets no quota", () => {
    const data = quotaView("dev", "tp-dev", undefined)["data"] as Record<string, string>;
    expect(data["summary"]).toBe("no quota: the isolation profile of tenant dev sets no limits");
    expect(data["hard"]).toBe("{}");
  });

  it("is the same object for the same quota, whatever the order of its maps", () => {
    const reordered = quota();
    reordered.status!.used = Object.fromEntries(Object.entries(reordered.status!.used!).reverse());
    expect(quotaView("dev", "tp-dev", reordered)).toEqual(quotaView("dev", "tp-dev", quota()));
  });
});

describe("viewIsCurrent", () => {
  const desired = quotaView("dev", "tp-dev", quota());
  it("needs no write for what the tenant already shows, and one for a tenant's edit or a lost label", () => {
    expect(viewIsCurrent(structuredClone(desired), desired)).toBe(true);
    expect(viewIsCurrent(undefined, desired)).toBe(false);
    const edited = structuredClone(desired);
    (edited["data"] as Record<string, string>)["hard"] = '{"pods":"1000"}';
    expect(viewIsCurrent(edited, desired)).toBe(false);
    const added = structuredClone(desired);
    (added["data"] as Record<string, string>)["mine"] = "x";
    expect(viewIsCurrent(added, desired)).toBe(false);
    expect(viewIsCurrent({ data: desired["data"], metadata: { labels: {} } }, desired)).toBe(false);
  });
});

describe("quotaReaderRbac", () => {
  it("lets every authenticated user get and watch the mirror, and nothing else", () => {
    const [role, binding] = quotaReaderRbac();
    expect(role["rules"]).toEqual([
      { apiGroups: [""], resources: ["configmaps"], resourceNames: ["tenantplane-quota"], verbs: ["get", "watch"] },
    ]);
    expect(binding["subjects"]).toEqual([
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" },
    ]);
    expect(binding.metadata.namespace).toBe("kube-public");
  });
});
