import { describe, expect, it } from "vitest";
import { defaultHostRules, type HostRules } from "./host-rules.js";
import { plan } from "./plan.js";
import { applyServiceQuota } from "./service-quota.js";

const tenant = "dev";
const rules: HostRules = {
  ...defaultHostRules,
  services: { nodePort: true, loadBalancer: true, externalName: true, allowedLoadBalancerClasses: [] },
  serviceQuota: { loadBalancers: 2, nodePorts: 3 },
};

function service(name: string, type: string, ports = 1) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default" },
    spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) },
  };
}

function quota(tenantObjects: unknown[], hostObjects: unknown[] = []) {
  const input = { tenant, policy: { toHost: [{ kind: "Service" as const }] }, rules, tenantObjects, hostObjects };
  return applyServiceQuota(plan(input), rules, tenant, hostObjects).decisions.map((d) => [
    d.tenantRef.name,
    d.action,
    d.reason,
  ]);
}

describe("applyServiceQuota", () => {
  it("lets Services claim the quota in plan order and refuses the one past it", () => {
    const lbs = ["a", "b", "c"].map((name) => service(name, "LoadBalancer", 0));
    expect(quota(lbs)).toEqual([
      ["a", "Create", "host Service tp-dev/a-x-default-x-dev absent"],
      ["b", "Create", "host Service tp-dev/b-x-default-x-dev absent"],
      [
        "c",
        "Skip",
        "refused by host rules: spec.type: LoadBalancer would exceed resourceQuota services.loadbalancers (2, 2 in use)",
      ],
    ]);
  });

  it("counts what the host namespace already holds, but not the control plane's load balancer", () => {
    // The host quota holds the control plane's share on top of the profile's numbers.
    const controlPlane = {
      kind: "Service",
      metadata: {
        name: "k3s",
        namespace: "tp-dev",
        labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "dev" },
      },
      spec: { type: "LoadBalancer" },
    };
    const foreign = { kind: "Service", metadata: { name: "ops", namespace: "tp-dev" }, spec: { type: "LoadBalancer" } };
    const three = ["a", "b", "c"].map((name) => service(name, "LoadBalancer", 0));
    const actions = (host: unknown[]) => quota(three, host).map(([name, action]) => `${name} ${action}`);
    expect(actions([controlPlane])).toEqual(["a Create", "b Create", "c Skip"]);
    expect(actions([controlPlane, foreign])).toEqual(["a Create", "b Skip", "c Skip"]);
  });

  it("counts node ports, including a LoadBalancer's", () => {
    const decisions = quota([service("a", "NodePort", 2), service("b", "LoadBalancer", 2)]);
    expect(decisions[1]).toEqual([
      "b",
      "Skip",
      "refused by host rules: spec.ports: 2 node ports would exceed resourceQuota services.nodeports (3, 2 in use)",
    ]);
  });

  it("does not count a copy twice when it is updated in place", () => {
    const old = plan({
      tenant,
      policy: { toHost: [{ kind: "Service" }] },
      rules,
      tenantObjects: [service("a", "LoadBalancer", 0)],
      hostObjects: [],
    }).decisions[0]?.object;
    const changed = { ...service("a", "LoadBalancer", 1) };
    expect(quota([changed, service("b", "LoadBalancer", 0)], [old]).map(([, action]) => action)).toEqual([
      "Update",
      "Create",
    ]);
  });
});
