import {
  defaultIsolationProfileSpec,
  defaultSyncPolicySpec,
  parseIsolationProfileSpec,
  type PodSecurityLevel,
} from "@tenantplane/api";
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
    const lifted: HostRules = {
      ...defaultHostRules,
      floor: { ...defaultHostRules.floor, allowUnconfinedAppArmor: true },
    };
    expect(hostRulesReason(pod({}, { annotations: { [annotation]: "unconfined" } }), lifted, tenant)).toContain(
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
      "refused by host rules: spec.volumes[0].nfs: volume type nfs is not in IsolationProfile spec.workloads.volumes.allowedTypes (none allowed)",
    );
    const nfsAllowed: HostRules = { ...restricted, volumes: { allowedTypes: ["nfs"], allowedCSIDrivers: [] } };
    expect(hostRulesReason(withHostVolume, nfsAllowed, tenant)).toBe(
      "refused by host rules: spec.volumes[0].nfs: nfs volumes are forbidden (Pod Security restricted)",
    );
  });
});

describe("hostRulesReason: Services", () => {
  it("refuses NodePort, LoadBalancer and ExternalName types the profile does not allow", () => {
    const none: HostRules = {
      ...defaultHostRules,
      services: { nodePort: false, loadBalancer: false, externalName: false, allowedLoadBalancerClasses: [] },
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
      services: { nodePort: true, loadBalancer: true, externalName: true, allowedLoadBalancerClasses: [] },
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

// What a synced Pod may ask of a node is an allow-list owned by the IsolationProfile: it holds
// at every Pod Security level, privileged included, and each rule is lifted by one profile field.

const LEVELS: PodSecurityLevel[] = ["privileged", "baseline", "restricted"];

/** Host rules of a profile written as a user writes it, so each field is read the way the worker reads it. */
function rulesOf(level: PodSecurityLevel, workloads: Record<string, unknown> = {}) {
  return compileHostRules(parseIsolationProfileSpec({ podSecurity: { enforce: level }, workloads }));
}

const container = (extra: Record<string, unknown>) => ({ containers: [{ name: "c", image: "nginx", ...extra }] });
const context = (securityContext: Record<string, unknown>) => container({ securityContext });

describe("volumes: an allow-list", () => {
  it("lets every always-allowed volume type through under the built-in profile", () => {
    const volumes = [
      { name: "a", configMap: { name: "cm" } },
      { name: "b", secret: { secretName: "s" } },
      { name: "c", emptyDir: {} },
      { name: "d", projected: { sources: [{ serviceAccountToken: { path: "t" } }] } },
      { name: "e", downwardAPI: { items: [{ path: "n", fieldRef: { fieldPath: "metadata.name" } }] } },
      { name: "f", persistentVolumeClaim: { claimName: "data" } },
      { name: "g", ephemeral: { volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"] } } } },
    ];
    expect(hostRulesReason(pod({ volumes }), defaultHostRules, tenant)).toBeUndefined();
  });

  it.each([
    ["nfs", { server: "10.0.0.1", path: "/export" }],
    ["iscsi", { targetPortal: "10.0.0.1:3260", iqn: "iqn.2001-04.com.example:disk", lun: 0 }],
    ["rbd", { monitors: ["10.0.0.1:6789"], image: "disk", keyring: "/etc/ceph/keyring" }],
    ["cephfs", { monitors: ["10.0.0.1:6789"], secretFile: "/etc/ceph/secret" }],
    ["flexVolume", { driver: "example/driver", options: { a: "b" } }],
    ["gitRepo", { repository: "https://example.com/repo.git" }],
    ["gcePersistentDisk", { pdName: "disk-1" }],
    ["awsElasticBlockStore", { volumeID: "vol-1" }],
    ["image", { reference: "example.com/data:1" }],
    ["futureVolume", {}],
  ])("refuses %s at every Pod Security level until the profile names it", (type, source) => {
    const spec = {
      volumes: [
        { name: "ok", emptyDir: {} },
        { name: "v", [type]: source },
      ],
    };
    for (const level of LEVELS) {
      expect(hostRulesReason(pod(spec), rulesOf(level), tenant)).toContain(
        `refused by host rules: spec.volumes[1].${type}: volume type ${type} is not in IsolationProfile spec.workloads.volumes.allowedTypes (none allowed)`,
      );
    }
    if (type !== "futureVolume") {
      const allowed = rulesOf("privileged", { volumes: { allowedTypes: [type] } });
      expect(hostRulesReason(pod(spec), allowed, tenant)).toBeUndefined();
    }
  });

  it("allows an inline csi volume by its driver only", () => {
    const spec = { volumes: [{ name: "v", csi: { driver: "csi.example.com" } }] };
    expect(hostRulesReason(pod(spec), rulesOf("privileged"), tenant)).toBe(
      "refused by host rules: spec.volumes[0].csi.driver: inline CSI driver csi.example.com is not in IsolationProfile spec.workloads.volumes.allowedCSIDrivers (none allowed)",
    );
    const other = rulesOf("privileged", { volumes: { allowedCSIDrivers: ["csi.other.io"] } });
    expect(hostRulesReason(pod(spec), other, tenant)).toContain("(allowed: csi.other.io)");
    const allowed = rulesOf("restricted", { volumes: { allowedCSIDrivers: ["csi.example.com"] } });
    const hardened = pod({
      ...context({
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
        capabilities: { drop: ["ALL"] },
      }),
      volumes: spec.volumes,
    });
    expect(hostRulesReason(hardened, allowed, tenant)).toBeUndefined();
  });

  it("keeps hostPath refused even when a profile lists every other type", () => {
    const spec = { volumes: [{ name: "v", hostPath: { path: "/" } }] };
    expect(hostRulesReason(pod(spec), rulesOf("privileged"), tenant)).toContain(
      "spec.volumes[0].hostPath: mounts a host path (rule: tenant Pods never get host access)",
    );
  });
});

// [what, pod spec, pod metadata, field, problem, the profile field that lifts it]
const FLOOR: Array<
  [string, Record<string, unknown>, Record<string, unknown>, string, string, Record<string, unknown>]
> = [
  [
    "an added capability beyond baseline's list",
    context({ capabilities: { add: ["CHOWN", "SYS_ADMIN"] } }),
    {},
    "spec.containers[0].securityContext.capabilities.add[1]",
    "capability SYS_ADMIN is beyond Pod Security baseline's list and not in IsolationProfile spec.workloads.allowedCapabilities",
    { allowedCapabilities: ["SYS_ADMIN"] },
  ],
  [
    "a Pod seccomp profile Unconfined",
    { securityContext: { seccompProfile: { type: "Unconfined" } } },
    {},
    "spec.securityContext.seccompProfile.type",
    "seccomp profile Unconfined, which needs IsolationProfile spec.workloads.allowUnconfinedSeccomp: true",
    { allowUnconfinedSeccomp: true },
  ],
  [
    "a container seccomp profile Unconfined",
    { initContainers: [{ name: "i", securityContext: { seccompProfile: { type: "Unconfined" } } }] },
    {},
    "spec.initContainers[0].securityContext.seccompProfile.type",
    "seccomp profile Unconfined, which needs IsolationProfile spec.workloads.allowUnconfinedSeccomp: true",
    { allowUnconfinedSeccomp: true },
  ],
  [
    "the legacy Pod seccomp annotation",
    {},
    { annotations: { "seccomp.security.alpha.kubernetes.io/pod": "unconfined" } },
    "metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]",
    "seccomp profile unconfined, which needs IsolationProfile spec.workloads.allowUnconfinedSeccomp: true",
    { allowUnconfinedSeccomp: true },
  ],
  [
    "the legacy container seccomp annotation",
    {},
    { annotations: { "container.seccomp.security.alpha.kubernetes.io/c": "unconfined" } },
    "metadata.annotations[container.seccomp.security.alpha.kubernetes.io/c]",
    "seccomp profile unconfined, which needs IsolationProfile spec.workloads.allowUnconfinedSeccomp: true",
    { allowUnconfinedSeccomp: true },
  ],
  [
    "an AppArmor profile Unconfined",
    context({ appArmorProfile: { type: "Unconfined" } }),
    {},
    "spec.containers[0].securityContext.appArmorProfile.type",
    "AppArmor profile Unconfined, which needs IsolationProfile spec.workloads.allowUnconfinedAppArmor: true",
    { allowUnconfinedAppArmor: true },
  ],
  [
    "the AppArmor annotation",
    {},
    { annotations: { "container.apparmor.security.beta.kubernetes.io/c": "unconfined" } },
    "metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]",
    "AppArmor profile unconfined, which needs IsolationProfile spec.workloads.allowUnconfinedAppArmor: true",
    { allowUnconfinedAppArmor: true },
  ],
  [
    "procMount Unmasked",
    context({ procMount: "Unmasked" }),
    {},
    "spec.containers[0].securityContext.procMount",
    "procMount Unmasked exposes the node's /proc, which needs IsolationProfile spec.workloads.allowUnmaskedProcMount: true",
    { allowUnmaskedProcMount: true },
  ],
  [
    "an unsafe sysctl",
    {
      securityContext: {
        sysctls: [
          { name: "net.ipv4.tcp_syncookies", value: "1" },
          { name: "kernel.msgmax", value: "1" },
        ],
      },
    },
    {},
    "spec.securityContext.sysctls[1].name",
    "sysctl kernel.msgmax is outside Pod Security baseline's safe set and not in IsolationProfile spec.workloads.allowedSysctls",
    { allowedSysctls: ["kernel.msgmax"] },
  ],
  [
    "a liveness probe host",
    container({ livenessProbe: { httpGet: { host: "10.0.0.1", port: 80 } } }),
    {},
    "spec.containers[0].livenessProbe.httpGet.host",
    "the kubelet would connect to 10.0.0.1 from the node's network, which needs IsolationProfile spec.workloads.allowProbeHosts: true",
    { allowProbeHosts: true },
  ],
  [
    "a readiness probe tcpSocket host",
    container({ readinessProbe: { tcpSocket: { host: "metadata.internal", port: 80 } } }),
    {},
    "spec.containers[0].readinessProbe.tcpSocket.host",
    "the kubelet would connect to metadata.internal from the node's network, which needs IsolationProfile spec.workloads.allowProbeHosts: true",
    { allowProbeHosts: true },
  ],
  [
    "a startup probe host",
    container({ startupProbe: { httpGet: { host: "10.0.0.2", port: 80 } } }),
    {},
    "spec.containers[0].startupProbe.httpGet.host",
    "the kubelet would connect to 10.0.0.2 from the node's network, which needs IsolationProfile spec.workloads.allowProbeHosts: true",
    { allowProbeHosts: true },
  ],
  [
    "a postStart hook host",
    container({ lifecycle: { postStart: { httpGet: { host: "10.0.0.3", port: 80 } } } }),
    {},
    "spec.containers[0].lifecycle.postStart.httpGet.host",
    "the kubelet would connect to 10.0.0.3 from the node's network, which needs IsolationProfile spec.workloads.allowProbeHosts: true",
    { allowProbeHosts: true },
  ],
  [
    "a preStop hook tcpSocket host",
    { initContainers: [{ name: "i", lifecycle: { preStop: { tcpSocket: { host: "10.0.0.4", port: 80 } } } }] },
    {},
    "spec.initContainers[0].lifecycle.preStop.tcpSocket.host",
    "the kubelet would connect to 10.0.0.4 from the node's network, which needs IsolationProfile spec.workloads.allowProbeHosts: true",
    { allowProbeHosts: true },
  ],
  [
    "a scheduler other than the host's default",
    { schedulerName: "my-scheduler" },
    {},
    "spec.schedulerName",
    "scheduler my-scheduler is not in IsolationProfile spec.workloads.schedulers (none allowed besides the host's default-scheduler)",
    { schedulers: ["my-scheduler"] },
  ],
];

describe("the node floor", () => {
  it.each(FLOOR)("refuses %s at every Pod Security level, privileged included", (_, spec, metadata, field, problem) => {
    for (const level of LEVELS) {
      expect(hostRulesReason(pod(spec, metadata), rulesOf(level), tenant)).toContain(`${field}: ${problem}`);
    }
  });

  it.each(FLOOR)("lets the profile lift %s, that rule alone", (_, spec, metadata, field, problem, lift) => {
    expect(hostRulesReason(pod(spec, metadata), rulesOf("privileged", lift), tenant)).toBeUndefined();
    // Another lift leaves this rule standing.
    const [other] = FLOOR.filter((entry) => JSON.stringify(entry[5]) !== JSON.stringify(lift));
    expect(hostRulesReason(pod(spec, metadata), rulesOf("privileged", other![5]), tenant)).toContain(
      `${field}: ${problem}`,
    );
  });

  it("leaves the host's own refusal standing when a lift is not enough for the Pod Security level", () => {
    const spec = context({ capabilities: { add: ["SYS_ADMIN"] } });
    expect(hostRulesReason(pod(spec), rulesOf("baseline", { allowedCapabilities: ["SYS_ADMIN"] }), tenant)).toBe(
      "refused by host rules: spec.containers[0].securityContext.capabilities.add[0]: capability SYS_ADMIN is forbidden (Pod Security baseline)",
    );
  });

  it("lets through what baseline allows: its capabilities, safe sysctls, default profiles, probes without a host, the default scheduler", () => {
    const spec = {
      schedulerName: "default-scheduler",
      securityContext: {
        seccompProfile: { type: "RuntimeDefault" },
        appArmorProfile: { type: "RuntimeDefault" },
        sysctls: [{ name: "net.ipv4.ip_local_port_range", value: "1024 65535" }],
      },
      containers: [
        {
          name: "c",
          image: "nginx",
          securityContext: { procMount: "Default", capabilities: { add: ["NET_BIND_SERVICE", "CHOWN"] } },
          livenessProbe: { httpGet: { path: "/", port: 80, host: "" } },
          readinessProbe: { tcpSocket: { port: 80 } },
          lifecycle: { preStop: { httpGet: { path: "/stop", port: 80 } } },
        },
      ],
    };
    const annotations = { "container.apparmor.security.beta.kubernetes.io/c": "runtime/default" };
    for (const level of ["privileged", "baseline"] as const) {
      expect(hostRulesReason(pod(spec, { annotations }), rulesOf(level), tenant)).toBeUndefined();
    }
  });

  it("is planned as a Skip, which explain-sync predicts with the same planner", () => {
    const refused = pod({ volumes: [{ name: "v", nfs: { server: "x", path: "/" } }] });
    const result = plan({
      tenant,
      policy: { toHost: [{ kind: "Pod" }] },
      tenantObjects: [refused],
      hostObjects: [],
      rules: rulesOf("privileged"),
    });
    expect(result.decisions.map((d) => [d.action, d.reason])).toEqual([
      [
        "Skip",
        "refused by host rules: spec.volumes[0].nfs: volume type nfs is not in IsolationProfile spec.workloads.volumes.allowedTypes (none allowed)",
      ],
    ]);
  });
});

describe("tenant text in reasons", () => {
  it("quotes at most 1 KiB of it, marking each cut value", () => {
    const big = "x".repeat(200_000);
    const spec = {
      priorityClassName: big,
      runtimeClassName: big,
      schedulerName: big,
      securityContext: { sysctls: [{ name: big, value: "1" }] },
    };
    const annotations = { "container.apparmor.security.beta.kubernetes.io/c": big };
    for (const level of LEVELS) {
      const reason = hostRulesReason(pod(spec, { annotations }), rulesOf(level), tenant) ?? "";
      expect(reason).toContain("…(truncated)");
      expect(reason.split("x").length - 1).toBeLessThanOrEqual(1024);
      expect(reason).toMatch(/; and \d+ more$/);
    }
  });
});

describe("reason length", () => {
  it("bounds what adds up, one rewrite per removed toleration, and marks the cut", () => {
    const tolerations = Array.from({ length: 500 }, (_, i) => ({
      key: `example.com/${"k".repeat(200)}-${i}`,
      operator: "Exists",
    }));
    const result = plan({
      tenant,
      policy: { toHost: [{ kind: "Pod" }] },
      tenantObjects: [pod({ tolerations })],
      hostObjects: [],
    });
    const created = result.decisions[0];
    expect(created?.action).toBe("Create");
    expect(created?.reason.length).toBeLessThanOrEqual(2048 + "…(truncated)".length);
    expect(created?.reason.endsWith("…(truncated)")).toBe(true);
  });
});
