import * as k8s from "@kubernetes/client-node";
import { ALWAYS_ALLOWED_VOLUME_TYPES, defaultSyncPolicySpec, type SyncPolicySpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { defaultHostRules, type HostRules } from "./host-rules.js";
import { POD_REFERENCES, podReferenceRule, type PodReferenceRule } from "./internal/pod-references.js";
import { plan } from "./plan.js";

// The table of Pod fields that can name an object is checked against the Pod API itself:
// @kubernetes/client-node's models are generated from Kubernetes' OpenAPI document (1.4.0:
// Kubernetes 1.34), so a field a new API version adds shows up here, not in our table.

interface Attribute {
  name: string;
  type: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };
const models = k8s as unknown as Record<string, Model | undefined>;

/** A field able to name another object: a `name` inside a reference, selector, source or projection, or a name-like field. */
function namesAnObject(type: string, field: string): boolean {
  if (field === "name") return /(Reference|Selector|Source|Projection)$/.test(type);
  return (
    /(Name|Names|Namespace|Namespaces)$/.test(field) ||
    ["namespace", "namespaces", "subdomain", "serviceAccount", "endpoints"].includes(field)
  );
}

/** Every path of the schema under `type` (lists spelled `[]`), and those of string fields that can name an object. */
function walk(type: string, path = "", stack: string[] = []): { all: string[]; naming: string[] } {
  const model = models[type];
  if (model === undefined) throw new Error(`no model ${type} in @kubernetes/client-node`);
  const found = { all: [] as string[], naming: [] as string[] };
  if (stack.includes(type)) return found;
  for (const attribute of model.getAttributeTypeMap()) {
    const list = /^Array<(.+)>$/.exec(attribute.type);
    const inner = list?.[1] ?? attribute.type;
    const at = `${path === "" ? "" : `${path}.`}${attribute.name}${list ? "[]" : ""}`;
    found.all.push(at);
    if (models[inner]?.getAttributeTypeMap !== undefined) {
      const nested = walk(inner, at, [...stack, type]);
      found.all.push(...nested.all);
      found.naming.push(...nested.naming);
    } else if (inner === "string" && namesAnObject(type, attribute.name)) {
      found.naming.push(at);
    }
  }
  return found;
}

const schema = walk("V1PodSpec");

describe("the table of Pod fields that can name an object", () => {
  it("covers every such field of the Pod API: each is mapped, refused, dropped, host-level or names no object", () => {
    const unsettled = schema.naming.filter((path) => podReferenceRule(path) === undefined);
    expect(unsettled, "add these Pod API fields to POD_REFERENCES (internal/pod-references.ts)").toEqual([]);
  });

  it("walks the real schema: it finds the references the planner must settle", () => {
    for (const path of [
      "volumes[].cinder.secretRef.name",
      "volumes[].cephfs.secretRef.name",
      "volumes[].rbd.secretRef.name",
      "volumes[].iscsi.secretRef.name",
      "volumes[].flexVolume.secretRef.name",
      "volumes[].azureFile.secretName",
      "volumes[].scaleIO.secretRef.name",
      "volumes[].storageos.secretRef.name",
      "volumes[].csi.nodePublishSecretRef.name",
      "volumes[].projected.sources[].secret.name",
      "volumes[].projected.sources[].configMap.name",
      "volumes[].projected.sources[].clusterTrustBundle.name",
      "volumes[].persistentVolumeClaim.claimName",
      "volumes[].ephemeral.volumeClaimTemplate.spec.dataSourceRef.namespace",
      "containers[].env[].valueFrom.secretKeyRef.name",
      "initContainers[].envFrom[].configMapRef.name",
      "ephemeralContainers[].envFrom[].secretRef.name",
      "imagePullSecrets[].name",
      "serviceAccountName",
      "resourceClaims[].resourceClaimTemplateName",
      "priorityClassName",
      "runtimeClassName",
    ]) {
      expect(schema.naming).toContain(path);
    }
    expect(schema.naming.length).toBeGreaterThan(70);
  });

  it("settles every volume type: always allowed, or a source the node mounts only when the profile names it", () => {
    const always: readonly string[] = ALWAYS_ALLOWED_VOLUME_TYPES;
    const types = models["V1Volume"]!.getAttributeTypeMap()
      .map((attribute) => attribute.name)
      .filter((type) => type !== "name");
    expect(types).toContain("cinder");
    const unsettled = types.filter(
      (type) => !always.includes(type) && podReferenceRule(`volumes[].${type}`)?.action !== "host",
    );
    expect(unsettled, "add these volume types to POD_REFERENCES as host-level sources").toEqual([]);
  });

  it("fails for a field it does not know, as for a volume type a later Pod API adds", () => {
    expect(podReferenceRule("volumes[].futureDisk.secretRef.name")).toBeUndefined();
    expect(podReferenceRule("containers[].env[].valueFrom.futureKeyRef.name")).toBeUndefined();
  });

  it("names only fields the Pod API has, each once", () => {
    const known = new Set(schema.all);
    expect(POD_REFERENCES.map((r) => r.path).filter((path) => !known.has(path))).toEqual([]);
    const paths = POD_REFERENCES.map((r) => r.path);
    expect(paths.filter((path, index) => paths.indexOf(path) !== index)).toEqual([]);
  });
});

// What a host copy holds must never resolve to an object tenantplane owns in tp-<tenant>.
const tenant = "dev";
const OWNED = [`${tenant}-kubeconfig`, `${tenant}-pki`, "k3s", "tenant-dns"];
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The spec of a Pod with `value` at table path `path` (index 0 of every list), and what a list item needs besides. */
function specWith(path: string, value: unknown): Obj {
  const spec: Obj = { containers: [{ name: "c", image: "busybox" }] };
  let parent: Obj = spec;
  const segments = path.split(".");
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    const key = segment.replace(/\[\]$/, "");
    if (last) {
      parent[key] = value;
    } else if (segment.endsWith("[]")) {
      const item: Obj = key === "volumes" ? { name: "v" } : key === "containers" ? spec["containers"][0] : {};
      if (key === "env") item["name"] = "E";
      if (key === "initContainers") Object.assign(item, { name: "i", image: "busybox" });
      parent[key] = [item];
      parent = item;
    } else {
      parent = parent[key] ??= {};
    }
  });
  return spec;
}

/** The value at table path `path` in a host copy of a {@link specWith} Pod. */
function valueAt(spec: Obj, path: string): unknown {
  return path.split(".").reduce<unknown>((at, segment) => {
    const value = (at as Obj | undefined)?.[segment.replace(/\[\]$/, "")];
    if (!segment.endsWith("[]")) return value;
    // The host copy's envFrom starts with the tenant's service links: the Pod's own source is last.
    return segment === "envFrom[]" ? (value as unknown[]).at(-1) : (value as unknown[] | undefined)?.[0];
  }, spec);
}

/** The volume type a `volumes[]` path uses, which the profile must allow. */
function rulesFor(path: string): HostRules {
  // The profile lets Pods claim devices (check-floor.ts), so what is left to refuse is the
  // claim's name. A variable, not a literal: FloorLifts without that switch accept it too.
  const floor = { ...defaultHostRules.floor, allowResourceClaims: true };
  if (path.startsWith("resourceClaims[]")) return { ...defaultHostRules, floor };
  const type = /^volumes\[\]\.([^.]+)/.exec(path)?.[1];
  if (type === undefined) return defaultHostRules;
  return { ...defaultHostRules, volumes: { allowedTypes: [type], allowedCSIDrivers: [] } };
}

function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

function planPod(spec: Obj, rules: HostRules, policy: SyncPolicySpec = defaultSyncPolicySpec) {
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "shop" }, spec };
  const { decisions } = plan({ tenant, policy, tenantObjects: [pod], hostObjects: [], rules });
  expect(decisions).toHaveLength(1);
  return decisions[0]!;
}

const mapped = POD_REFERENCES.flatMap(({ path, rule }) => (rule.action === "map" ? [{ path, rule }] : []));

describe.each(mapped)("$path", ({ path, rule }) => {
  const kind = (rule as Extract<PodReferenceRule, { action: "map" }>).kind;
  // The volume type and CSI driver are allowed, so the reference alone decides.
  const rules: HostRules = path.startsWith("volumes[].csi.")
    ? { ...defaultHostRules, volumes: { allowedTypes: [], allowedCSIDrivers: ["x"] } }
    : rulesFor(path);
  const spec = (name: string): Obj => {
    const built = specWith(path, name);
    if (path.startsWith("volumes[].csi.")) built["volumes"][0].csi.driver = "x";
    return built;
  };

  it(`names the tenant's host copy of the ${kind}, never an object tenantplane owns`, () => {
    const decision = planPod(spec(`${tenant}-kubeconfig`), rules);
    expect(decision.action).toBe("Create");
    const host = decision.object!["spec"] as Obj;
    expect(valueAt(host, path)).toBe(`${tenant}-kubeconfig-x-shop-x-${tenant}`);
    expect(strings(decision.object).filter((s) => OWNED.includes(s))).toEqual([]);
  });

  it(`is settled when the SyncPolicy does not sync ${kind}`, () => {
    const policy: SyncPolicySpec = { toHost: [{ kind: "Pod" }] };
    const decision = planPod(spec("creds"), rules, policy);
    const field = `spec.${path.replace(/\[\]/g, "[0]").replace(/\.[^.]+$/, "")}`;
    if (rule.optional === "never") {
      expect(decision.action).toBe("Skip");
      expect(decision.reason).toContain(`${field}: ${kind} creds will never have a host copy`);
    } else {
      // Only imagePullSecrets are optional without saying so.
      expect(decision.action).toBe(rule.optional === "always" ? "Create" : "Skip");
    }
    expect(strings(decision.object ?? {})).not.toContain("creds");
  });
});

const hostVolumes = POD_REFERENCES.flatMap(({ path, rule }) => {
  const type = /^volumes\[\]\.([^.]+)$/.exec(path)?.[1];
  return type !== undefined && rule.action === "host" ? [{ type, rule: rule.rule }] : [];
});

describe("a volume type the profile does not name", () => {
  it.each(hostVolumes)("$type is a Skip naming the rule", ({ type, rule }) => {
    const decision = planPod({ containers: [], volumes: [{ name: "v", [type]: {} }] }, defaultHostRules);
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toContain(`spec.volumes[0].${type}`);
    // The table names the rule the planner applies (for hostPath: the host-access rule).
    const named = type === "hostPath" ? "tenant Pods never get host access" : rule;
    expect(decision.reason).toContain(named);
  });
});

describe("references of a volume type the profile does not allow", () => {
  it("are refused with the type by the profile's allow-list, before any renaming (cinder naming the kubeconfig Secret)", () => {
    const decision = planPod(specWith("volumes[].cinder.secretRef.name", `${tenant}-kubeconfig`), defaultHostRules);
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toContain(
      "spec.volumes[0].cinder: volume type cinder is not in IsolationProfile spec.workloads.volumes.allowedTypes",
    );
  });
});

describe("refused references", () => {
  it.each([
    [
      "volumes[].projected.sources[].clusterTrustBundle",
      { name: "corp-ca", path: "ca.pem" },
      "spec.volumes[0].projected.sources[0].clusterTrustBundle: ClusterTrustBundle corp-ca is cluster-scoped in the tenant and never synced",
    ],
    [
      "volumes[].projected.sources[].podCertificate",
      { signerName: "example.com/signer", keyType: "ED25519", credentialBundlePath: "cred.pem" },
      "spec.volumes[0].projected.sources[0].podCertificate: the kubelet would have host signer example.com/signer issue",
    ],
    [
      "volumes[].ephemeral.volumeClaimTemplate.spec.volumeAttributesClassName",
      "gold",
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.volumeAttributesClassName: names VolumeAttributesClass gold, a host object",
    ],
    [
      "securityContext.windowsOptions.gmsaCredentialSpecName",
      "webapp",
      "spec.securityContext.windowsOptions.gmsaCredentialSpecName: names GMSACredentialSpec webapp",
    ],
    [
      "containers[].securityContext.windowsOptions.gmsaCredentialSpecName",
      "webapp",
      "spec.containers[0].securityContext.windowsOptions.gmsaCredentialSpecName: names GMSACredentialSpec webapp",
    ],
    [
      "resourceClaims[].resourceClaimName",
      "gpu",
      "spec.resourceClaims[0].resourceClaimName: ResourceClaim gpu will never have a host copy",
    ],
  ])("%s is a Skip naming the field and why", (path, value, reason) => {
    expect(podReferenceRule(path)?.action).toBe("refuse");
    const decision = planPod(
      specWith(path, value),
      path.startsWith("resourceClaims[]") ? rulesFor(path) : defaultHostRules,
    );
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toContain(reason);
    expect(decision).not.toHaveProperty("object");
  });

  it("glusterfs, once the profile allows it, is refused for its Endpoints", () => {
    const decision = planPod(specWith("volumes[].glusterfs.endpoints", "gluster"), rulesFor("volumes[].glusterfs"));
    expect(decision.reason).toContain(
      "spec.volumes[0].glusterfs.endpoints: Endpoints gluster will never have a host copy",
    );
  });
});

describe("dropped fields", () => {
  it("leave the host copy: ephemeral containers, with every reference in them", () => {
    const spec = specWith("ephemeralContainers[].envFrom[].secretRef.name", `${tenant}-kubeconfig`);
    const decision = planPod(spec, defaultHostRules);
    expect(decision.action).toBe("Create");
    expect(decision.object!["spec"]).not.toHaveProperty("ephemeralContainers");
    expect(strings(decision.object)).not.toContain(`${tenant}-kubeconfig`);
  });
});
