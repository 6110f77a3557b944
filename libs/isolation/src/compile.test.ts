import { ControlPlaneSpecSchema, defaultIsolationProfileSpec, parseIsolationProfileSpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { compileIsolation } from "./compile.js";
import { BUILT_IN_PROFILE_NAME, ISOLATION_KINDS } from "./constants.js";
import { isolationObjectSelector } from "./metadata.js";

const controlPlane = ControlPlaneSpecSchema.parse({});
const compileDefault = (profileName?: string) =>
  compileIsolation({
    tenant: "dev",
    hostNamespace: "tp-dev",
    profile: defaultIsolationProfileSpec,
    controlPlane,
    ...(profileName ? { profileName } : {}),
  });

describe("compileIsolation", () => {
  it("labels the namespace for Pod Security admission", () => {
    expect(compileDefault().namespaceLabels).toEqual({
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/enforce-version": "latest",
      "pod-security.kubernetes.io/audit": "restricted",
      "pod-security.kubernetes.io/audit-version": "latest",
      "pod-security.kubernetes.io/warn": "restricted",
      "pod-security.kubernetes.io/warn-version": "latest",
    });
  });

  it("produces the default objects, all in the host namespace, with fixed names", () => {
    const { objects, notes } = compileDefault();
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      "NetworkPolicy/tenantplane-default-deny",
      "NetworkPolicy/tenantplane-allow-control-plane",
      "NetworkPolicy/tenantplane-allow-control-plane-peers",
      "NetworkPolicy/tenantplane-allow-dns",
      "NetworkPolicy/tenantplane-allow-same-namespace",
      "ResourceQuota/tenantplane-quota",
      "LimitRange/tenantplane-limits",
    ]);
    expect(new Set(objects.map((o) => o.metadata.namespace))).toEqual(new Set(["tp-dev"]));
    expect(notes).toEqual([]);
  });

  it("marks every object as tenantplane's isolation object for the tenant, naming the profile", () => {
    for (const object of compileDefault("standard").objects) {
      expect(object.metadata.labels).toEqual({
        "app.kubernetes.io/managed-by": "tenantplane",
        "tenantplane.io/tenant": "dev",
        "tenantplane.io/component": "isolation",
      });
      expect(object.metadata.annotations).toMatchObject({ "tenantplane.io/isolation-profile": "standard" });
    }
  });

  it("raises the quota by the control plane's share, so the tenant keeps the profile's numbers", () => {
    const quota = compileDefault().objects.find((o) => o.kind === "ResourceQuota");
    if (quota?.kind !== "ResourceQuota") throw new Error("no quota compiled");
    expect(quota.spec.hard).toEqual({
      pods: "52",
      "requests.cpu": "8150m",
      "requests.memory": "16672Mi",
      "limits.cpu": "24700m",
      "limits.memory": "33408Mi",
      persistentvolumeclaims: "21",
      "requests.storage": "205Gi",
      "services.loadbalancers": "1",
    });
    const share = JSON.parse(quota.metadata.annotations["tenantplane.io/control-plane-share"] ?? "") as object;
    expect(Object.keys(share).sort()).toEqual([
      "limits.cpu",
      "limits.memory",
      "persistentvolumeclaims",
      "pods",
      "requests.cpu",
      "requests.memory",
      "requests.storage",
    ]);
  });

  it("records the built-in profile when no name is given", () => {
    expect(compileDefault().objects[0]?.metadata.annotations["tenantplane.io/isolation-profile"]).toBe(
      BUILT_IN_PROFILE_NAME,
    );
  });

  it("only produces kinds listed in ISOLATION_KINDS", () => {
    const known = new Set(ISOLATION_KINDS.map((k) => `${k.apiVersion}/${k.kind}`));
    for (const object of compileDefault().objects) expect(known.has(`${object.apiVersion}/${object.kind}`)).toBe(true);
  });

  it("is deterministic and does not share state with its input", () => {
    const profile = parseIsolationProfileSpec({
      network: { allow: { cidrs: [{ cidr: "10.0.0.0/8", except: ["10.1.0.0/16"] }] } },
    });
    const first = compileIsolation({ tenant: "dev", hostNamespace: "tp-dev", profile, controlPlane });
    expect(compileIsolation({ tenant: "dev", hostNamespace: "tp-dev", profile, controlPlane })).toEqual(first);
    const quota = first.objects.find((o) => o.kind === "ResourceQuota");
    if (quota?.kind === "ResourceQuota") quota.spec.hard.pods = "1";
    expect(profile.resourceQuota.hard.pods).toBe("50");
  });

  it("produces nothing but labels for a profile that switches everything off", () => {
    const profile = parseIsolationProfileSpec({
      podSecurity: { enforce: "privileged", audit: "privileged", warn: "privileged", version: "v1.34" },
      network: { defaultDeny: { ingress: false, egress: false } },
      resourceQuota: { hard: {} },
      limitRange: { container: { default: {}, defaultRequest: {}, max: {} }, persistentVolumeClaim: { max: {} } },
    });
    const compiled = compileIsolation({ tenant: "dev", hostNamespace: "tp-dev", profile, controlPlane });
    expect(compiled.objects).toEqual([]);
    expect(compiled.namespaceLabels["pod-security.kubernetes.io/enforce"]).toBe("privileged");
    expect(compiled.namespaceLabels["pod-security.kubernetes.io/warn-version"]).toBe("v1.34");
  });

  it("refuses a tenant name that cannot be a label value", () => {
    expect(() =>
      compileIsolation({ tenant: "Not OK", hostNamespace: "tp-x", profile: defaultIsolationProfileSpec, controlPlane }),
    ).toThrow('cannot compile isolation for "Not OK": not a valid tenant name');
  });
});

describe("isolationObjectSelector", () => {
  it("selects by managed-by, tenant and component, matching the compiled labels", () => {
    expect(isolationObjectSelector("dev")).toBe(
      "app.kubernetes.io/managed-by=tenantplane,tenantplane.io/tenant=dev,tenantplane.io/component=isolation",
    );
    const labels = compileDefault().objects[0]!.metadata.labels;
    for (const term of isolationObjectSelector("dev").split(",")) {
      const [key = "", value] = term.split("=");
      expect(labels[key]).toBe(value);
    }
  });
});
