import { describe, expect, it } from "vitest";
import { ControlPlaneSpecSchema, defaultIsolationProfileSpec } from "@tenantplane/api";
import { compileIsolation } from "./compile.js";
import { LOCKDOWN_PROFILE_NAME, chooseIsolationProfile, lockdownIsolationProfileSpec } from "./profile-choice.js";

const profile = (spec: unknown) => ({
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "IsolationProfile",
  metadata: { name: "p" },
  spec,
});

describe("chooseIsolationProfile", () => {
  it("uses the built-in profile when none is named", () => {
    expect(chooseIsolationProfile(undefined, undefined)).toEqual({ profile: defaultIsolationProfileSpec });
  });

  it("uses a named profile that exists and parses", () => {
    const choice = chooseIsolationProfile("p", profile({ podSecurity: { enforce: "privileged" } }));
    expect(choice.problem).toBeUndefined();
    expect(choice.profileName).toBe("p");
    expect(choice.profile.podSecurity.enforce).toBe("privileged");
  });

  it("locks the tenant down while the named profile is missing", () => {
    const choice = chooseIsolationProfile("late", undefined);
    expect(choice.profile).toBe(lockdownIsolationProfileSpec);
    expect(choice.profileName).toBe(LOCKDOWN_PROFILE_NAME);
    expect(choice.problem?.reason).toBe("ProfileNotFound");
    expect(choice.problem?.message).toContain("spec.isolationProfileRef.name");
  });

  it("locks the tenant down while the named profile is invalid, naming the field", () => {
    const choice = chooseIsolationProfile("p", profile({ podSecurity: { enforce: "lax" } }));
    expect(choice.profile).toBe(lockdownIsolationProfileSpec);
    expect(choice.problem?.reason).toBe("InvalidProfile");
    expect(choice.problem?.message).toContain("podSecurity.enforce");
  });
});

describe("the lockdown profile", () => {
  const compiled = compileIsolation({
    tenant: "dev",
    hostNamespace: "tp-dev",
    profile: lockdownIsolationProfileSpec,
    controlPlane: ControlPlaneSpecSchema.parse({}),
    profileName: LOCKDOWN_PROFILE_NAME,
  });

  it("enforces restricted Pod Security", () => {
    expect(compiled.namespaceLabels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
  });

  it("denies all traffic but keeps the tenant API reachable on 6443 and the tenant DNS server from the namespace", () => {
    const names = compiled.objects.filter((o) => o.kind === "NetworkPolicy").map((o) => o.metadata.name);
    expect(names).toEqual([
      "tenantplane-default-deny",
      "tenantplane-allow-control-plane",
      "tenantplane-allow-control-plane-peers",
    ]);
    const deny = compiled.objects.find((o) => o.metadata.name === "tenantplane-default-deny");
    expect(deny?.kind === "NetworkPolicy" && deny.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    const api = compiled.objects.find((o) => o.metadata.name === "tenantplane-allow-control-plane");
    expect(api?.kind === "NetworkPolicy" && api.spec.ingress).toEqual([
      { ports: [{ protocol: "TCP", port: 6443 }] },
      {
        from: [{ podSelector: {} }],
        ports: [
          { protocol: "UDP", port: 1053 },
          { protocol: "TCP", port: 1053 },
        ],
      },
    ]);
  });

  it("keeps the built-in quota and limits", () => {
    expect(lockdownIsolationProfileSpec.resourceQuota).toEqual(defaultIsolationProfileSpec.resourceQuota);
    expect(lockdownIsolationProfileSpec.limitRange).toEqual(defaultIsolationProfileSpec.limitRange);
  });
});
