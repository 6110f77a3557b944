import { defaultIsolationProfileSpec, defaultSyncPolicySpec, parseIsolationProfileSpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { hostRulesReason } from "./check-host-rules.js";
import { compileHostRules, defaultHostRules, type HostRules } from "./host-rules.js";
import { KubeObjectSchema } from "./kube-object.js";
import { plan } from "./plan.js";
import { transform, translate } from "./transform.js";

const tenant = "dev";

function pod(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) {
  return KubeObjectSchema.parse({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "default", ...metadata },
    spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
  });
}

function service(spec: Record<string, unknown>) {
  return KubeObjectSchema.parse({ apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec });
}

const privileged: HostRules = { ...defaultHostRules, podSecurity: "privileged" };
const restrictedContainer = {
  name: "c",
  image: "nginx",
  securityContext: {
    allowPrivilegeEscalation: false,
    runAsNonRoot: true,
    seccompProfile: { type: "RuntimeDefault" },
    capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] },
  },
};

describe("hostRulesReason: host access", () => {
  it.each([
    [{ hostNetwork: true }, "spec.hostNetwork: shares the host's namespaces"],
    [{ hostPID: true }, "spec.hostPID: shares the host's namespaces"],
    [{ hostIPC: true }, "spec.hostIPC: shares the host's namespaces"],
    [{ volumes: [{ name: "v", hostPath: { path: "/" } }] }, "spec.volumes[0].hostPath: mounts a host path"],
    [
      { containers: [{ name: "c", securityContext: { privileged: true } }] },
      "spec.containers[0].securityContext.privileged: privileged container",
    ],
    [
      { initContainers: [{ name: "i", ports: [{ containerPort: 80, hostPort: 80 }] }] },
      "spec.initContainers[0].ports[0].hostPort: binds a host port",
    ],
  ])("refuses %j whatever the Pod Security level, naming the field and the rule", (spec, text) => {
    const reason = hostRulesReason(pod(spec), privileged, tenant);
    expect(reason).toContain(text);
    expect(reason).toContain("rule: tenant Pods never get host access");
  });

  it("lets an ordinary Pod through", () => {
    expect(hostRulesReason(pod({}), defaultHostRules, tenant)).toBeUndefined();
  });
});

describe("hostRulesReason: workload rules", () => {
  const rules = compileHostRules(
    parseIsolationProfileSpec({
      workloads: {
        allowedPriorityClasses: ["tenant-low"],
        allowedRuntimeClasses: ["gvisor"],
        nodeSelector: { pool: "tenants" },
        tolerations: [{ key: "pool", operator: "Equal", value: "tenants", effect: "NoSchedule" }],
      },
    }),
  );

  it("refuses priority and runtime classes outside the allowed lists, listing what is allowed", () => {
    expect(hostRulesReason(pod({ priorityClassName: "system-node-critical" }), defaultHostRules, tenant)).toBe(
      "refused by host rules: spec.priorityClassName: system-node-critical is not in IsolationProfile spec.workloads.allowedPriorityClasses (none allowed)",
    );
    expect(hostRulesReason(pod({ priorityClassName: "tenant-low", runtimeClassName: "gvisor" }), rules, tenant)).toBe(
      undefined,
    );
    expect(hostRulesReason(pod({ runtimeClassName: "runc-unsandboxed" }), rules, tenant)).toContain(
      "spec.runtimeClassName: runc-unsandboxed is not in IsolationProfile spec.workloads.allowedRuntimeClasses (allowed: gvisor)",
    );
  });

  it("never refuses a Pod for its tolerations: the host copy keeps the granted ones and the node failure defaults", () => {
    const defaults = [
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    ];
    const granted = { key: "pool", operator: "Equal", value: "tenants", effect: "NoSchedule" };
    const everything = [...defaults, granted, { operator: "Exists" }];
    expect(hostRulesReason(pod({ tolerations: everything }), rules, tenant)).toBeUndefined();
    const translation = translate(pod({ tolerations: everything }), tenant, { rules });
    expect(translation.object["spec"]).toMatchObject({ tolerations: [...defaults, granted] });
    expect(translation.rewrites).toContain(
      "toleration (any key) Exists (any effect) removed: not granted by IsolationProfile spec.workloads.tolerations",
    );
    expect(translation.refusals).toEqual([]);
  });

  it("removes a control-plane toleration the profile does not grant and says so in the Create reason", () => {
    // What Helm charts of node agents and operators commonly carry.
    const controlPlane = [
      { key: "node-role.kubernetes.io/master", operator: "Exists", effect: "NoSchedule" },
      { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
    ];
    const source = pod({ tolerations: controlPlane });
    const [decision] = plan({
      tenant,
      policy: defaultSyncPolicySpec,
      tenantObjects: [source],
      hostObjects: [],
      rules,
    }).decisions;
    expect(decision?.action).toBe("Create");
    expect(decision?.reason).toContain(
      "; toleration node-role.kubernetes.io/master Exists (NoSchedule) removed: not granted by IsolationProfile spec.workloads.tolerations" +
        "; toleration node-role.kubernetes.io/control-plane Exists (NoSchedule) removed: not granted by IsolationProfile spec.workloads.tolerations",
    );
    expect((decision?.object?.["spec"] as { tolerations: unknown[] }).tolerations).toEqual([
      { key: "pool", operator: "Equal", value: "tenants", effect: "NoSchedule" },
    ]);
    // Under the built-in profile, which grants none, the host copy carries no tolerations at all.
    const plain = plan({ tenant, policy: defaultSyncPolicySpec, tenantObjects: [source], hostObjects: [] });
    expect(plain.decisions[0]?.action).toBe("Create");
    expect(plain.decisions[0]?.object?.["spec"]).toMatchObject({ tolerations: [] });
  });

  it("refuses a node selector value that conflicts with the enforced one", () => {
    expect(hostRulesReason(pod({ nodeSelector: { pool: "system" } }), rules, tenant)).toBe(
      "refused by host rules: spec.nodeSelector[pool]: system conflicts with IsolationProfile spec.workloads.nodeSelector, which enforces tenants",
    );
    expect(hostRulesReason(pod({ nodeSelector: { pool: "tenants", disk: "ssd" } }), rules, tenant)).toBeUndefined();
  });

  it("enforces the node selector and tolerations on the host copy", () => {
    const copy = transform(pod({ nodeSelector: { disk: "ssd" } }), tenant, { rules });
    expect(copy["spec"]).toMatchObject({
      nodeSelector: { disk: "ssd", pool: "tenants" },
      tolerations: [{ key: "pool", operator: "Equal", value: "tenants", effect: "NoSchedule" }],
    });
    const plain = transform(pod({}), tenant);
    expect(plain["spec"]).not.toHaveProperty("nodeSelector");
    expect(plain["spec"]).not.toHaveProperty("tolerations");
  });
});

describe("hostRulesReason: Pod Security", () => {
  it.each([
    [
      { containers: [{ name: "c", securityContext: { capabilities: { add: ["SYS_ADMIN"] } } }] },
      "spec.containers[0].securityContext.capabilities.add[0]: capability SYS_ADMIN is forbidden (Pod Security baseline)",
    ],
    [
      { securityContext: { seccompProfile: { type: "Unconfined" } } },
      "spec.securityContext.seccompProfile.type: seccomp profile Unconfined is forbidden (Pod Security baseline)",
    ],
    [
      { securityContext: { sysctls: [{ name: "kernel.msgmax", value: "1" }] } },
      "spec.securityContext.sysctls[0].name: sysctl kernel.msgmax is not in the safe set (Pod Security baseline)",
    ],
    [
      { containers: [{ name: "c", securityContext: { procMount: "Unmasked" } }] },
      "spec.containers[0].securityContext.procMount: procMount must be Default (Pod Security baseline)",
    ],
    [
      { securityContext: { seLinuxOptions: { type: "spc_t" } } },
      "spec.securityContext.seLinuxOptions.type: SELinux type spc_t is forbidden (Pod Security baseline)",
    ],
    [
      { securityContext: { windowsOptions: { hostProcess: true } } },
      "spec.securityContext.windowsOptions.hostProcess: Windows host processes are forbidden (Pod Security baseline)",
    ],
  ])("predicts baseline refusing %j, naming level and field", (spec, text) => {
    expect(hostRulesReason(pod(spec), defaultHostRules, tenant)).toBe(`refused by host rules: ${text}`);
    expect(hostRulesReason(pod(spec), privileged, tenant)).toBeUndefined();
  });

  it("reads AppArmor annotations as baseline does", () => {
    const annotation = "container.apparmor.security.beta.kubernetes.io/c";
    expect(
      hostRulesReason(pod({}, { annotations: { [annotation]: "unconfined" } }), defaultHostRules, tenant),
    ).toContain(
      `metadata.annotations[${annotation}]: AppArmor profile unconfined is forbidden (Pod Security baseline)`,
    );
    expect(
      hostRulesReason(pod({}, { annotations: { [annotation]: "runtime/default" } }), defaultHostRules, tenant),
    ).toBeUndefined();
  });

  it("predicts restricted refusing a plain Pod, and admitting a hardened one", () => {
    const restricted: HostRules = { ...defaultHostRules, podSecurity: "restricted" };
    expect(hostRulesReason(pod({}), restricted, tenant)).toBe(
      "refused by host rules: spec.containers[0].securityContext.allowPrivilegeEscalation: must be false (Pod Security restricted); " +
        "spec.containers[0].securityContext.runAsNonRoot: must be true (here or in spec.securityContext) (Pod Security restricted); " +
        "spec.containers[0].securityContext.seccompProfile.type: must be RuntimeDefault or Localhost (here or in spec.securityContext) (Pod Security restricted); and 1 more",
    );
    expect(hostRulesReason(pod({ containers: [restrictedContainer] }), restricted, tenant)).toBeUndefined();
    const withHostVolume = pod({
      containers: [restrictedContainer],
      volumes: [{ name: "n", nfs: { server: "x", path: "/" } }],
    });
    expect(hostRulesReason(withHostVolume, restricted, tenant)).toBe(
      "refused by host rules: spec.volumes[0].nfs: nfs volumes are forbidden (Pod Security restricted)",
    );
  });
});

describe("hostRulesReason: Services", () => {
  it("refuses NodePort, LoadBalancer and ExternalName types the profile does not allow", () => {
    const none: HostRules = {
      ...defaultHostRules,
      services: { nodePort: false, loadBalancer: false, externalName: false },
    };
    expect(hostRulesReason(service({ type: "NodePort", ports: [{ port: 80 }] }), none, tenant)).toBe(
      "refused by host rules: spec.type: NodePort Services are not allowed by IsolationProfile spec.workloads.services.nodePort",
    );
    expect(hostRulesReason(service({ type: "LoadBalancer" }), none, tenant)).toContain(
      "spec.type: LoadBalancer Services are not allowed by IsolationProfile spec.workloads.services.loadBalancer",
    );
    expect(hostRulesReason(service({ type: "ExternalName", externalName: "example.com" }), none, tenant)).toContain(
      "spec.workloads.services.externalName",
    );
    expect(hostRulesReason(service({ type: "ClusterIP" }), none, tenant)).toBeUndefined();
  });

  it("refuses a Service that alone needs more node ports or load balancers than the quota holds", () => {
    const open: HostRules = {
      ...defaultHostRules,
      services: { nodePort: true, loadBalancer: true, externalName: true },
      serviceQuota: { nodePorts: 1, loadBalancers: 0 },
    };
    const ports = [{ port: 80 }, { port: 443 }];
    expect(hostRulesReason(service({ type: "NodePort", ports }), open, tenant)).toBe(
      "refused by host rules: spec.ports: NodePort needs 2 node ports, more than resourceQuota services.nodeports (1)",
    );
    expect(
      hostRulesReason(service({ type: "LoadBalancer", allocateLoadBalancerNodePorts: false, ports }), open, tenant),
    ).toBe("refused by host rules: spec.type: LoadBalancer exceeds resourceQuota services.loadbalancers (0)");
  });

  it("reads the quota from the profile's resourceQuota.hard", () => {
    const rules = compileHostRules(
      parseIsolationProfileSpec({
        resourceQuota: { hard: { "services.nodeports": "2", "services.loadbalancers": 1 } },
      }),
    );
    expect(rules.serviceQuota).toEqual({ nodePorts: 2, loadBalancers: 1 });
    expect(compileHostRules(defaultIsolationProfileSpec).serviceQuota).toEqual({ loadBalancers: 1 });
  });

  it.each([
    ["k3s.tp-victim.svc", "points at tenant victim's host namespace tp-victim, where its control plane runs"],
    ["k3s.tp-victim.svc.cluster.local.", "points at tenant victim's host namespace tp-victim"],
    ["K3S.TP-VICTIM.SVC.CLUSTER.LOCAL", "points at tenant victim's host namespace tp-victim"],
    [
      "kubernetes.default.svc.cluster.local",
      "points inside the cluster domain cluster.local outside the tenant's host namespace tp-dev",
    ],
    ["kubernetes.default.svc", "points inside the cluster domain"],
    ["10-0-0-1.kube-system.pod.cluster.local", "points inside the cluster domain"],
    ["cluster.local", "points inside the cluster domain"],
  ])("refuses ExternalName %s", (target, text) => {
    expect(
      hostRulesReason(service({ type: "ExternalName", externalName: target }), defaultHostRules, tenant),
    ).toContain(`spec.externalName: ${target} ${text}`);
  });

  it.each(["api.example.com", "web-x-shop-x-dev.tp-dev.svc.cluster.local", "db.tp-dev.svc", "svc.example.com"])(
    "allows ExternalName %s",
    (target) => {
      expect(hostRulesReason(service({ type: "ExternalName", externalName: target }), defaultHostRules, tenant)).toBe(
        undefined,
      );
    },
  );

  it("uses the configured cluster domain", () => {
    const rules = { ...defaultHostRules, clusterDomain: "corp.internal" };
    const target = service({ type: "ExternalName", externalName: "vault.secrets.svc.corp.internal" });
    expect(hostRulesReason(target, rules, tenant)).toContain("points inside the cluster domain corp.internal");
  });
});

describe("plan with host rules", () => {
  const source = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "default" },
    spec: { hostNetwork: true, containers: [{ name: "c" }] },
  };

  it("turns a refused object into a published Skip, and deletes the copy made before the rules tightened", () => {
    const before = transform(KubeObjectSchema.parse(source), tenant, { rules: privileged });
    const result = plan({
      tenant,
      policy: { toHost: [{ kind: "Pod" }] },
      tenantObjects: [source],
      hostObjects: [before],
    });
    expect(result.ignored).toEqual([]);
    expect(result.decisions.map((d) => [d.action, d.reason])).toEqual([
      [
        "Delete",
        expect.stringMatching(/^source Pod default\/p is not synced: refused by host rules: spec\.hostNetwork/),
      ],
      ["Skip", expect.stringMatching(/^refused by host rules: spec\.hostNetwork: shares the host's namespaces/)],
    ]);
  });

  it("applies the rules it is given instead of the defaults", () => {
    const allowed = { ...source, spec: { priorityClassName: "gold", containers: [{ name: "c" }] } };
    const input = { tenant, policy: { toHost: [{ kind: "Pod" as const }] }, tenantObjects: [allowed], hostObjects: [] };
    expect(plan(input).decisions[0]?.action).toBe("Skip");
    const rules = { ...defaultHostRules, allowedPriorityClasses: ["gold"] };
    expect(plan({ ...input, rules }).decisions[0]?.action).toBe("Create");
  });
});
