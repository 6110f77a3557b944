import { defaultSyncPolicySpec, type SyncKind, type SyncPolicySpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { defaultHostRules, type HostRules } from "./host-rules.js";
import { KubeObjectSchema } from "./kube-object.js";
import { plan, planKey, PlanMemo, type PlanInput } from "./plan.js";
import { ANNOTATION_VIRTUAL_SERVICE_ACCOUNT } from "./pod-environment.js";
import { transform } from "./transform.js";

// What a tenant Pod refers to that will never exist on the host is settled by the planner:
// the host must accept every Pod it plans to create, and a Pod that could never start is a
// Skip that names the reference.

const tenant = "dev";
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const policyOf = (...kinds: SyncKind[]): SyncPolicySpec => ({ toHost: kinds.map((kind) => ({ kind })) });
const withoutServiceAccount = policyOf("Pod", "ConfigMap", "Secret", "Service", "PersistentVolumeClaim");
const withoutSecret = policyOf("Pod", "ConfigMap", "Service", "PersistentVolumeClaim", "ServiceAccount");
const podsOnly = policyOf("Pod");
const csiDriverX: HostRules = { ...defaultHostRules, volumes: { allowedTypes: [], allowedCSIDrivers: ["x"] } };

/**
 * The shop/web Pod of examples/tenant/workloads.yaml as the tenant API stores it: its
 * ServiceAccount admission adds the projected token volume and its mount.
 */
function shopWeb(): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "shop", labels: { app: "web" } },
    spec: {
      serviceAccountName: "web",
      containers: [
        {
          name: "web",
          image: "nginx:1.27",
          ports: [{ containerPort: 8080 }],
          envFrom: [{ configMapRef: { name: "web-config" } }, { secretRef: { name: "web-credentials" } }],
          volumeMounts: [
            { name: "nginx", mountPath: "/etc/nginx/conf.d" },
            { name: "cache", mountPath: "/var/cache/nginx" },
            {
              name: "kube-api-access-x7k2p",
              mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
              readOnly: true,
            },
          ],
        },
      ],
      volumes: [
        { name: "nginx", configMap: { name: "nginx.conf" } },
        { name: "cache", persistentVolumeClaim: { claimName: "web-cache" } },
        {
          name: "kube-api-access-x7k2p",
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              { downwardAPI: { items: [{ path: "namespace", fieldRef: { fieldPath: "metadata.namespace" } }] } },
            ],
          },
        },
      ],
    },
  };
}

function run(policy: SyncPolicySpec, tenantObjects: unknown[], partial: Partial<PlanInput> = {}) {
  return plan({ tenant, policy, tenantObjects, hostObjects: [], ...partial });
}

function only(result: ReturnType<typeof plan>) {
  expect(result.decisions).toHaveLength(1);
  return result.decisions[0]!;
}

describe("a Pod whose ServiceAccount the policy does not sync", () => {
  it("runs as the host namespace's default ServiceAccount, and the reason says so", () => {
    const decision = only(run(withoutServiceAccount, [shopWeb()]));
    expect(decision.action).toBe("Create");
    expect(decision.reason).toContain(
      "; runs as host ServiceAccount default: SyncPolicy does not sync ServiceAccount web",
    );
    const spec = decision.object!["spec"] as Obj;
    expect(spec["serviceAccountName"]).toBe("default");
    expect(spec["automountServiceAccountToken"]).toBe(false);
    expect(decision.reason).not.toContain("refers to ServiceAccount");
  });

  it("still gets the token of its own tenant account, and reads its own name from the downward API", () => {
    const pod = shopWeb();
    pod["spec"].containers[0].env = [
      { name: "ACCOUNT", valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } } },
    ];
    const decision = only(run(withoutServiceAccount, [pod]));
    expect(decision.reason).toContain("token of ServiceAccount shop/web by TokenRequest");
    const host = decision.object!;
    expect(host.metadata.annotations[ANNOTATION_VIRTUAL_SERVICE_ACCOUNT]).toBe("web");
    const projected = (host["spec"] as Obj)["volumes"][2].projected.sources;
    expect(projected[0]).toEqual({
      secret: { name: "web-x-shop-x-dev.token", items: [{ key: "token-0", path: "token" }] },
    });
    expect((host["spec"] as Obj)["containers"][0].env[0].valueFrom.fieldRef.fieldPath).toBe(
      `metadata.annotations['${ANNOTATION_VIRTUAL_SERVICE_ACCOUNT}']`,
    );
  });

  it("keeps the renamed host copy of the account when the policy syncs ServiceAccounts", () => {
    const decision = only(run(defaultSyncPolicySpec, [shopWeb()]));
    expect((decision.object!["spec"] as Obj)["serviceAccountName"]).toBe("web-x-shop-x-dev");
    expect(decision.reason).not.toContain("runs as host ServiceAccount");
  });

  it("leaves out the account's image pull secrets the policy never copies", () => {
    const account = {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "builder", namespace: "ci" },
      imagePullSecrets: [{ name: "registry" }],
    };
    const decision = only(run(withoutSecret, [account]));
    expect(decision.action).toBe("Create");
    expect(decision.object!["imagePullSecrets"]).toEqual([]);
    expect(decision.reason).toContain(
      "imagePullSecrets[0]: optional Secret registry left out: SyncPolicy toHost does not list Secret",
    );
  });
});

describe("a required reference the policy never copies", () => {
  it("is a Skip naming the field, the object and the policy (the shop/web Pod without Secrets)", () => {
    const decision = only(run(withoutSecret, [shopWeb()]));
    expect(decision).toMatchObject({ action: "Skip", kind: "Pod", tenantRef: { namespace: "shop", name: "web" } });
    expect(decision.reason).toBe(
      "cannot be synced as written: spec.containers[0].envFrom[1].secretRef: Secret web-credentials will never have a host copy: SyncPolicy toHost does not list Secret",
    );
    expect(decision).not.toHaveProperty("object");
  });

  it.each([
    [
      "a ConfigMap volume",
      { volumes: [{ name: "v", configMap: { name: "settings" } }] },
      "spec.volumes[0].configMap: ConfigMap settings",
    ],
    [
      "a Secret volume",
      { volumes: [{ name: "v", secret: { secretName: "tls", optional: false } }] },
      "spec.volumes[0].secret: Secret tls",
    ],
    [
      "a claim",
      { volumes: [{ name: "v", persistentVolumeClaim: { claimName: "data" } }] },
      "spec.volumes[0].persistentVolumeClaim: PersistentVolumeClaim data",
    ],
    [
      "a projected Secret",
      { volumes: [{ name: "v", projected: { sources: [{ secret: { name: "tls" } }] } }] },
      "spec.volumes[0].projected.sources[0].secret: Secret tls",
    ],
    [
      "an env key",
      { containers: [{ name: "c", env: [{ name: "E", valueFrom: { configMapKeyRef: { name: "cfg", key: "k" } } }] }] },
      "spec.containers[0].env[0].valueFrom.configMapKeyRef: ConfigMap cfg",
    ],
    [
      "an init container's envFrom",
      { containers: [], initContainers: [{ name: "i", envFrom: [{ secretRef: { name: "db" } }] }] },
      "spec.initContainers[0].envFrom[0].secretRef: Secret db",
    ],
    [
      "a CSI driver's credentials",
      { volumes: [{ name: "v", csi: { driver: "x", nodePublishSecretRef: { name: "creds" } } }] },
      "spec.volumes[0].csi.nodePublishSecretRef: Secret creds",
    ],
    [
      "an ephemeral claim cloned from a claim",
      {
        volumes: [
          {
            name: "v",
            ephemeral: {
              volumeClaimTemplate: { spec: { dataSource: { kind: "PersistentVolumeClaim", name: "seed" } } },
            },
          },
        ],
      },
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.dataSource: PersistentVolumeClaim seed",
    ],
  ])("%s", (_, spec, named) => {
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [], ...spec } };
    // The profile allows the inline CSI driver, so the reference is what keeps the Pod back.
    const decision = only(run(podsOnly, [pod], { rules: csiDriverX }));
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toMatch(/^cannot be synced as written: /);
    expect(decision.reason).toContain(`${named} will never have a host copy: SyncPolicy toHost does not list `);
  });

  it("names every such reference, up to three, then counts the rest", () => {
    const env = ["a", "b", "c", "d"].map((name) => ({ name, valueFrom: { secretKeyRef: { name, key: "k" } } }));
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", env }] } };
    expect(only(run(podsOnly, [pod])).reason).toMatch(
      /env\[2\]\.valueFrom\.secretKeyRef: Secret c will never .*; and 1 more$/,
    );
  });

  it("keeps the copy made while the policy still synced the kind, by a full pass and by its key", () => {
    const existing = transform(KubeObjectSchema.parse(shopWeb()), tenant);
    const input: PlanInput = {
      tenant,
      policy: withoutSecret,
      tenantObjects: [shopWeb()],
      hostObjects: [existing],
      completeKinds: ["Pod"],
    };
    const full = plan(input);
    expect(full.decisions.map((d) => d.action)).toEqual(["Skip"]);
    expect(planKey(input, { kind: "Pod", namespace: "shop", name: "web" })).toEqual(full);
  });

  it("refuses dynamic resource claims, whose ResourceClaims and templates are never synced", () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: {
        containers: [{ name: "c", resources: { claims: [{ name: "gpu" }] } }],
        resourceClaims: [{ name: "gpu", resourceClaimTemplateName: "single-gpu" }],
      },
    };
    // The profile lets Pods claim devices (check-floor.ts); the claim still has no host copy
    // to name. A variable, not a literal: FloorLifts without that switch accept it too.
    const floor = { ...defaultHostRules.floor, allowResourceClaims: true };
    const rules: HostRules = { ...defaultHostRules, floor };
    expect(only(run(defaultSyncPolicySpec, [pod], { rules })).reason).toBe(
      "cannot be synced as written: spec.resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate single-gpu will never have a host copy: tenantplane does not sync ResourceClaimTemplate",
    );
  });
});

describe("an optional reference the policy never copies", () => {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "shop" },
    spec: {
      imagePullSecrets: [{ name: "registry" }],
      containers: [
        {
          name: "c",
          env: [
            { name: "PLAIN", value: "1" },
            { name: "TOKEN", valueFrom: { secretKeyRef: { name: "api", key: "token", optional: true } } },
            { name: "LEVEL", valueFrom: { configMapKeyRef: { name: "cfg", key: "level", optional: true } } },
          ],
          envFrom: [{ secretRef: { name: "extra", optional: true } }, { configMapRef: { name: "cfg" } }],
        },
      ],
      volumes: [
        { name: "tls", secret: { secretName: "tls", optional: true, defaultMode: 0o400 } },
        {
          name: "bundle",
          projected: { sources: [{ secret: { name: "ca", optional: true } }, { configMap: { name: "cfg" } }] },
        },
      ],
    },
  };

  it("is left out of the host copy as the kubelet would treat it missing, with a note for each", () => {
    const decision = only(run(policyOf("Pod", "ConfigMap"), [pod]));
    expect(decision.action).toBe("Create");
    const spec = decision.object!["spec"] as Obj;
    expect(spec["imagePullSecrets"]).toEqual([]);
    expect(spec["containers"][0].env.slice(0, 2)).toEqual([
      { name: "PLAIN", value: "1" },
      { name: "LEVEL", valueFrom: { configMapKeyRef: { name: "cfg-x-shop-x-dev", key: "level", optional: true } } },
    ]);
    expect(spec["containers"][0].envFrom).toEqual([
      { configMapRef: { name: "service-links.shop", optional: true } },
      { configMapRef: { name: "cfg-x-shop-x-dev" } },
    ]);
    // A missing optional Secret volume is an empty directory to the kubelet.
    expect(spec["volumes"][0]).toEqual({ name: "tls", emptyDir: {} });
    expect(spec["volumes"][1].projected.sources).toEqual([{ configMap: { name: "cfg-x-shop-x-dev" } }]);
    for (const note of [
      "spec.imagePullSecrets[0]: optional Secret registry left out: SyncPolicy toHost does not list Secret",
      "spec.containers[0].env[1].valueFrom.secretKeyRef: optional Secret api left out",
      "spec.containers[0].envFrom[0].secretRef: optional Secret extra left out",
      "spec.volumes[0].secret: optional Secret tls left out",
      "spec.volumes[1].projected.sources[0].secret: optional Secret ca left out",
    ]) {
      expect(decision.reason).toContain(note);
    }
  });

  it("is renamed like any other when the policy syncs its kind", () => {
    const spec = only(run(defaultSyncPolicySpec, [pod])).object!["spec"] as Obj;
    expect(spec["volumes"][0].secret).toEqual({ secretName: "tls-x-shop-x-dev", optional: true, defaultMode: 0o400 });
    expect(spec["imagePullSecrets"]).toEqual([{ name: "registry-x-shop-x-dev" }]);
  });
});

describe("planning with a memo", () => {
  it("forgets translations when the policy changes, since references are settled by it", () => {
    const memo = new PlanMemo();
    const objects = [shopWeb()];
    expect(only(run(defaultSyncPolicySpec, objects, { memo })).action).toBe("Create");
    expect(only(run(withoutSecret, objects, { memo })).action).toBe("Skip");
    expect(only(run(defaultSyncPolicySpec, objects, { memo })).action).toBe("Create");
  });
});
