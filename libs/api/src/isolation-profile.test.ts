import { describe, expect, it } from "vitest";
import { API_VERSION } from "./constants.js";
import {
  CLASS_MAP_TARGET_MESSAGE,
  defaultIsolationProfileSpec,
  parseIsolationProfile,
  parseIsolationProfileSpec,
} from "./isolation-profile.js";
import { addQuantities, compareQuantities } from "./quantity.js";
import { ValidationError } from "./validation-error.js";

function issuesOf(input: unknown): string[] {
  try {
    parseIsolationProfileSpec(input);
  } catch (e) {
    if (e instanceof ValidationError) return e.issues.map((i) => `${i.path}: ${i.message}`);
    throw e;
  }
  throw new Error("expected a ValidationError");
}

describe("defaultIsolationProfileSpec", () => {
  it("denies by default, allows DNS and the namespace itself", () => {
    expect(defaultIsolationProfileSpec.network).toEqual({
      defaultDeny: { ingress: true, egress: true },
      allow: { dns: true, sameNamespace: true, namespaces: [], cidrs: [] },
    });
  });

  it("lets tenant workloads touch nothing host-wide: no priority or runtime classes, no node ports or load balancers", () => {
    expect(defaultIsolationProfileSpec.workloads).toEqual({
      allowedPriorityClasses: [],
      allowedRuntimeClasses: [],
      nodeSelector: {},
      tolerations: [],
      services: { nodePort: false, loadBalancer: false, externalName: true, allowedLoadBalancerClasses: [] },
      schedulers: [],
      volumes: { allowedTypes: [], allowedCSIDrivers: [] },
      allowedCapabilities: [],
      allowedSysctls: [],
      allowUnconfinedSeccomp: false,
      allowUnconfinedAppArmor: false,
      allowUnmaskedProcMount: false,
      allowProbeHosts: false,
      allowResourceClaims: false,
      allowedAnnotationPrefixes: [],
      // No allowedClasses: claims get the host's default StorageClass and no other.
      storage: { classMap: {} },
    });
  });

  it("enforces baseline and audits and warns on restricted", () => {
    expect(defaultIsolationProfileSpec.podSecurity).toEqual({
      enforce: "baseline",
      audit: "restricted",
      warn: "restricted",
      version: "latest",
    });
  });

  it("fits a small team twice over: ten two-replica Deployments and two StatefulSets with claims", () => {
    const { hard } = defaultIsolationProfileSpec.resourceQuota;
    const { container, persistentVolumeClaim } = defaultIsolationProfileSpec.limitRange;
    // 24 Pods of one container that sets nothing, so the LimitRange's defaults size each; four 10Gi claims.
    const pods = 10 * 2 + 2 * 2;
    const times = (n: number, q: string | undefined) => addQuantities(...Array<string>(n).fill(q ?? "0"));
    const needs: Record<string, string> = {
      pods: String(pods),
      "requests.cpu": times(pods, container.defaultRequest["cpu"]),
      "requests.memory": times(pods, container.defaultRequest["memory"]),
      "limits.cpu": times(pods, container.default["cpu"]),
      "limits.memory": times(pods, container.default["memory"]),
      persistentvolumeclaims: "4",
      "requests.storage": times(4, "10Gi"),
    };
    for (const [key, need] of Object.entries(needs)) {
      expect(
        compareQuantities(hard[key] ?? "0", addQuantities(need, need)),
        `${key}: ${hard[key]} for 2x ${need}`,
      ).not.toBe(-1);
    }
    expect(compareQuantities(persistentVolumeClaim.max["storage"] ?? "0", "10Gi")).toBe(1);
    // The control plane's load balancer is tenantplane's share, added on the host; this one is the tenant's.
    expect(hard["services.loadbalancers"]).toBe("1");
  });

  it("gives containers defaults within the bounds", () => {
    expect(defaultIsolationProfileSpec.limitRange).toEqual({
      container: {
        default: { cpu: "500m", memory: "512Mi" },
        defaultRequest: { cpu: "100m", memory: "128Mi" },
        min: {},
        max: { cpu: "4", memory: "8Gi" },
      },
      persistentVolumeClaim: { min: {}, max: { storage: "50Gi" } },
    });
  });
});

describe("parseIsolationProfileSpec", () => {
  it("names an unknown or never-allowed volume type, saying what may be named", () => {
    const issues = issuesOf({
      workloads: { volumes: { allowedTypes: ["nfs", "hostPath"], allowedCSIDrivers: ["Bad"] } },
    });
    expect(issues).toEqual([
      expect.stringMatching(
        /^spec\.workloads\.volumes\.allowedTypes\[1\]: unknown volume type "hostPath": use one of .*nfs.*hostPath never/,
      ),
      expect.stringMatching(/^spec\.workloads\.volumes\.allowedCSIDrivers\[0\]: must be a CSI driver name/),
    ]);
  });

  it("names an annotation prefix without its slash", () => {
    expect(
      issuesOf({ workloads: { allowedAnnotationPrefixes: ["metallb.io/", "*.cilium.io/", "metallb.io"] } }),
    ).toEqual([
      expect.stringMatching(/^spec\.workloads\.allowedAnnotationPrefixes\[2\]: must be a key prefix ending in '\/'/),
    ]);
  });

  it("names a bad capability and a bad sysctl", () => {
    expect(issuesOf({ workloads: { allowedCapabilities: ["sys_admin"], allowedSysctls: ["kernel msgmax"] } })).toEqual([
      expect.stringMatching(/^spec\.workloads\.allowedCapabilities\[0\]: must be a capability name like SYS_PTRACE/),
      expect.stringMatching(/^spec\.workloads\.allowedSysctls\[0\]: must be a sysctl name like kernel\.msgmax/),
    ]);
  });

  it("keeps storage classes and a class map, and refuses a map onto a class it does not allow", () => {
    const spec = parseIsolationProfileSpec({
      workloads: { storage: { allowedClasses: ["standard", "ssd"], classMap: { fast: "ssd" } } },
    });
    expect(spec.workloads.storage).toEqual({ allowedClasses: ["standard", "ssd"], classMap: { fast: "ssd" } });
    expect(issuesOf({ workloads: { storage: { allowedClasses: ["standard"], classMap: { fast: "ssd" } } } })).toEqual([
      `spec.workloads.storage.classMap.fast: ${CLASS_MAP_TARGET_MESSAGE}`,
    ]);
    // Without allowedClasses the target can only be the host's default class, known at sync time.
    expect(
      parseIsolationProfileSpec({ workloads: { storage: { classMap: { fast: "standard" } } } }).workloads.storage,
    ).toEqual({ classMap: { fast: "standard" } });
    expect(issuesOf({ workloads: { storage: { allowedClasses: ["Fast Disk"], classMap: { "a b": "c" } } } })).toEqual([
      expect.stringMatching(/^spec\.workloads\.storage\.allowedClasses\[0\]: must be an object name/),
      "spec.workloads.storage.classMap: keys must be StorageClass names like fast",
      `spec.workloads.storage.classMap[a b]: ${CLASS_MAP_TARGET_MESSAGE}`,
    ]);
  });

  it("names a bad node selector key and a bad toleration effect", () => {
    expect(issuesOf({ workloads: { nodeSelector: { "no spaces": "x" }, tolerations: [{ effect: "Never" }] } })).toEqual(
      [
        expect.stringMatching(/^spec\.workloads\.nodeSelector: keys must be label keys/),
        expect.stringMatching(/^spec\.workloads\.tolerations\[0\]\.effect: /),
      ],
    );
  });

  it("replaces a map default as a whole when the map is set", () => {
    const spec = parseIsolationProfileSpec({
      resourceQuota: { hard: { pods: 5 } },
      limitRange: { container: { max: {} } },
    });
    expect(spec.resourceQuota.hard).toEqual({ pods: "5" });
    expect(spec.limitRange.container.max).toEqual({});
    expect(spec.limitRange.container.default).toEqual({ cpu: "500m", memory: "512Mi" });
  });

  it("defaults rule fields: namespaces flow both ways, CIDRs are egress, ports are TCP", () => {
    const spec = parseIsolationProfileSpec({
      network: {
        allow: {
          namespaces: [{ name: "ingress-nginx" }],
          cidrs: [{ cidr: "0.0.0.0/0", except: ["10.0.0.0/8"], ports: [{ port: 443 }] }],
        },
      },
    });
    expect(spec.network.allow.namespaces).toEqual([{ name: "ingress-nginx", direction: "Both" }]);
    expect(spec.network.allow.cidrs).toEqual([
      { cidr: "0.0.0.0/0", except: ["10.0.0.0/8"], direction: "Egress", ports: [{ protocol: "TCP", port: 443 }] },
    ]);
  });

  it("accepts IPv6 ranges", () => {
    const spec = parseIsolationProfileSpec({
      network: { allow: { cidrs: [{ cidr: "fd00::/8", except: ["fd00:1::/32"] }] } },
    });
    expect(spec.network.allow.cidrs[0]?.cidr).toBe("fd00::/8");
  });

  it.each([
    [
      { podSecurity: { enforce: "strict" } },
      'spec.podSecurity.enforce: unknown Pod Security level "strict": use one of privileged, baseline, restricted',
    ],
    [
      { podSecurity: { version: "1.34" } },
      'spec.podSecurity.version: must be "latest" or a Kubernetes minor version like v1.34',
    ],
    [{ network: { defaultDeny: { ingress: "yes" } } }, "spec.network.defaultDeny.ingress:"],
    [
      { network: { allow: { cidrs: [{ cidr: "10.0.0.1/8" }] } } },
      "spec.network.allow.cidrs[0].cidr: must be a CIDR in canonical form",
    ],
    [
      { network: { allow: { cidrs: [{ cidr: "10.0.0.0/8", except: ["10.0.0.0/8"] }] } } },
      "spec.network.allow.cidrs[0].except[0]: must be a strictly smaller range inside 10.0.0.0/8",
    ],
    [
      { network: { allow: { cidrs: [{ cidr: "0.0.0.0/0", direction: "Out" }] } } },
      "spec.network.allow.cidrs[0].direction:",
    ],
    [
      { network: { allow: { namespaces: [{ name: "Kube_System" }] } } },
      "spec.network.allow.namespaces[0].name: must be a namespace name",
    ],
    [
      { network: { allow: { namespaces: [{ name: "a", ports: [{ port: 0 }] }] } } },
      "spec.network.allow.namespaces[0].ports[0].port:",
    ],
    [
      { network: { allow: { namespaces: [{ name: "a", ports: [{ port: 80, endPort: 79 }] }] } } },
      "spec.network.allow.namespaces[0].ports[0].endPort: endPort must be greater than or equal to port",
    ],
    [
      { network: { allow: { namespaces: [{ name: "a", ports: [{ port: 80, protocol: "ICMP" }] }] } } },
      "spec.network.allow.namespaces[0].ports[0].protocol:",
    ],
    [
      { resourceQuota: { hard: { "requests.cpu": "lots" } } },
      "spec.resourceQuota.hard[requests.cpu]: must be a quantity like 10Gi, 500m or 2",
    ],
    [
      { limitRange: { persistentVolumeClaim: { max: { storage: "-1Gi" } } } },
      "spec.limitRange.persistentVolumeClaim.max.storage: must be a quantity",
    ],
  ])("rejects %j", (input, expected) => {
    const issues = issuesOf(input);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toContain(expected);
  });
});

describe("parseIsolationProfile", () => {
  it("applies the defaults to a profile without spec", () => {
    const profile = parseIsolationProfile({
      apiVersion: API_VERSION,
      kind: "IsolationProfile",
      metadata: { name: "p" },
    });
    expect(profile.spec).toEqual(defaultIsolationProfileSpec);
  });

  it("names the profile in the error", () => {
    expect(() =>
      parseIsolationProfile({
        apiVersion: API_VERSION,
        kind: "IsolationProfile",
        metadata: { name: "p" },
        spec: { podSecurity: { warn: "none" } },
      }),
    ).toThrow(/^IsolationProfile "p" is invalid: spec\.podSecurity\.warn: /);
  });
});
