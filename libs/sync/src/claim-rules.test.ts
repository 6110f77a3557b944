import { defaultSyncPolicySpec, parseIsolationProfileSpec, type SyncPolicySpec } from "@tenantplane/api";
import { describe, expect, it } from "vitest";
import { contentHash } from "./content-hash.js";
import { defaultStorageClass } from "./default-storage-class.js";
import { compileHostRules, defaultHostRules, type HostRules } from "./host-rules.js";
import { plan } from "./plan.js";

const tenant = "acme";

/** The rules of a profile with `storage` (and other workloads fields) on a host whose default class is `hostDefault`. */
function rulesOf(workloads: Record<string, unknown>, hostDefault: string | null | undefined = "standard"): HostRules {
  return compileHostRules(parseIsolationProfileSpec({ workloads }), undefined, hostDefault);
}

function claim(spec: Record<string, unknown>, annotations?: Record<string, string>) {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "data", namespace: "shop", ...(annotations ? { annotations } : {}) },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, ...spec },
  };
}

function pod(spec: Record<string, unknown>) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "shop" },
    spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
  };
}

function only(obj: unknown, rules: HostRules, policy: SyncPolicySpec = defaultSyncPolicySpec) {
  const result = plan({ tenant, policy, rules, tenantObjects: [obj], hostObjects: [] });
  expect(result.decisions).toHaveLength(1);
  return result.decisions[0]!;
}

function ephemeral(template: Record<string, unknown>) {
  return pod({ volumes: [{ name: "scratch", ephemeral: { volumeClaimTemplate: template } }] });
}

const CLASS = "IsolationProfile spec.workloads.storage.allowedClasses";

describe("a tenant claim's host copy", () => {
  it("names no host volume: volumeName, selector and binding annotations are dropped, each named", () => {
    const annotations = {
      "pv.kubernetes.io/bind-completed": "yes",
      "pv.kubernetes.io/bound-by-controller": "yes",
      "volume.kubernetes.io/selected-node": "node-a",
      "volume.kubernetes.io/storage-provisioner": "example.com/disk",
      "volume.beta.kubernetes.io/storage-provisioner": "example.com/disk",
      team: "shop",
    };
    const decision = only(
      claim({ volumeName: "someone-elses-pv", selector: { matchLabels: { owner: "bank" } } }, annotations),
      rulesOf({}),
    );
    expect(decision.action).toBe("Create");
    const spec = decision.object?.["spec"] as Record<string, unknown>;
    expect(spec).not.toHaveProperty("volumeName");
    expect(spec).not.toHaveProperty("selector");
    expect(spec["storageClassName"]).toBe("tp-acme.standard");
    const kept = Object.keys(decision.object?.metadata.annotations ?? {}).filter(
      (k) => !k.startsWith("tenantplane.io/"),
    );
    expect(kept).toEqual(["team"]);
    expect(decision.reason).toContain(
      "spec.volumeName, spec.selector, metadata.annotations[pv.kubernetes.io/bind-completed], " +
        "metadata.annotations[pv.kubernetes.io/bound-by-controller] and 3 more dropped: " +
        "a tenant claim may not pick, pre-bind or mark as bound a host volume",
    );
    expect(decision.reason).toContain("spec.storageClassName set to the host's default StorageClass standard");
  });

  it("says nothing about dropping when the tenant named no volume", () => {
    const decision = only(claim({ storageClassName: "standard" }), rulesOf({}));
    expect(decision.action).toBe("Create");
    expect(decision.reason).not.toContain("dropped");
  });

  it("refuses a class the profile does not allow, naming the field and the rule", () => {
    const decision = only(claim({ storageClassName: "fast" }), rulesOf({}));
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toBe(
      `cannot be synced as written: spec.storageClassName: storage class fast is not in ${CLASS} ` +
        "(absent, so only the host's default StorageClass, standard)",
    );
    expect(
      only(claim({ storageClassName: "fast" }), rulesOf({ storage: { allowedClasses: ["standard"] } })).reason,
    ).toBe(
      `cannot be synced as written: spec.storageClassName: storage class fast is not in ${CLASS} (allowed: standard)`,
    );
  });

  it("keeps a listed class, and maps a tenant class through classMap before the check", () => {
    const rules = rulesOf({ storage: { allowedClasses: ["standard", "ssd"], classMap: { fast: "ssd" } } });
    const listed = only(claim({ storageClassName: "ssd" }), rules);
    expect(listed.action).toBe("Create");
    expect((listed.object?.["spec"] as Record<string, unknown>)["storageClassName"]).toBe("tp-acme.ssd");
    const mapped = only(claim({ storageClassName: "fast" }), rules);
    expect(mapped.action).toBe("Create");
    expect((mapped.object?.["spec"] as Record<string, unknown>)["storageClassName"]).toBe("tp-acme.ssd");
    expect(mapped.reason).toContain(
      "spec.storageClassName fast mapped to host class ssd by IsolationProfile spec.workloads.storage.classMap",
    );
    // The beta annotation is a class request like the field, mapped and checked the same way.
    const beta = only(claim({}, { "volume.beta.kubernetes.io/storage-class": "fast" }), rules);
    expect((beta.object?.["spec"] as Record<string, unknown>)["storageClassName"]).toBe("tp-acme.ssd");
  });

  it('refuses class "", which binds any pre-made volume without a class', () => {
    const decision = only(claim({ storageClassName: "" }), rulesOf({}));
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toContain('spec.storageClassName: class "" asks for a pre-made volume without a class');
  });

  it("refuses a claim without a class on a host without a default class, saying how to fix it", () => {
    const decision = only(claim({}), rulesOf({}, null));
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toContain(
      "spec.storageClassName: no class asked and the host has no default StorageClass " +
        "(none is annotated storageclass.kubernetes.io/is-default-class=true): ask for a class in " +
        `${CLASS} (absent, so only the host's default StorageClass, and the host has none)`,
    );
  });

  it("offline, with the host's default class unknown, assumes nothing: no class stays no class", () => {
    const decision = only(claim({}), defaultHostRules);
    expect(decision.action).toBe("Create");
    expect(decision.object?.["spec"]).not.toHaveProperty("storageClassName");
    expect(
      only(claim({ storageClassName: "fast" }), rulesOf({ storage: { allowedClasses: ["ssd"] } }, undefined)).action,
    ).toBe("Skip");
  });

  it("refuses a VolumeAttributesClass, a host-wide class no rule grants", () => {
    const decision = only(claim({ volumeAttributesClassName: "gold" }), rulesOf({}));
    expect(decision.reason).toBe(
      "cannot be synced as written: spec.volumeAttributesClassName: names VolumeAttributesClass gold, a host object: no IsolationProfile rule grants one",
    );
  });
});

describe("a claim's data source", () => {
  const rules = rulesOf({});
  const source = (spec: Record<string, unknown>) => only(claim({ storageClassName: "standard", ...spec }), rules);

  it("clones the tenant's own claim, by its host copy", () => {
    const decision = source({
      dataSource: { kind: "PersistentVolumeClaim", name: "seed" },
      dataSourceRef: { kind: "PersistentVolumeClaim", name: "seed", namespace: "shop" },
    });
    expect(decision.action).toBe("Create");
    const spec = decision.object?.["spec"] as Record<string, Record<string, unknown>>;
    expect(spec["dataSource"]).toEqual({ kind: "PersistentVolumeClaim", name: "seed-x-shop-x-acme" });
    // Its own namespace is the copy's own: the field goes, as the host's claim is in the same one.
    expect(spec["dataSourceRef"]).toEqual({ kind: "PersistentVolumeClaim", name: "seed-x-shop-x-acme" });
  });

  it("refuses a source in another namespace, naming dataSourceRef.namespace", () => {
    const decision = source({
      dataSourceRef: { kind: "PersistentVolumeClaim", name: "kubeconfig", namespace: "tp-other" },
    });
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toBe(
      "cannot be synced as written: spec.dataSourceRef.namespace: names a source in namespace tp-other: " +
        "a claim is filled only from the tenant's own claims in its own namespace; leave the field out",
    );
  });

  it("refuses a claim source when claims are not synced: the name would be some other host claim", () => {
    const podOnly: SyncPolicySpec = { toHost: [{ kind: "Pod" }] };
    expect(source({ dataSource: { kind: "PersistentVolumeClaim", name: "seed" } }).action).toBe("Create");
    const refused = only(
      ephemeral({
        spec: { storageClassName: "standard", dataSource: { kind: "PersistentVolumeClaim", name: "k3s-data" } },
      }),
      rules,
      podOnly,
    );
    expect(refused.action).toBe("Skip");
    expect(refused.reason).toContain(
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.dataSource: PersistentVolumeClaim k3s-data will never have a host copy",
    );
  });

  it("refuses a VolumeSnapshot and any populator's object", () => {
    const snapshot = source({
      dataSource: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: "nightly" },
    });
    expect(snapshot.reason).toContain(
      "spec.dataSource: VolumeSnapshot nightly: tenantplane does not copy VolumeSnapshots",
    );
    const populator = source({ dataSourceRef: { apiGroup: "example.com", kind: "Backup", name: "b1" } });
    expect(populator.reason).toContain(
      "spec.dataSourceRef: Backup.example.com b1: only PersistentVolumeClaim sources are mapped",
    );
  });
});

describe("the tenant's own copy of a host class", () => {
  const specOf = (d: { object?: Record<string, unknown> | undefined }) => d.object?.["spec"] as Record<string, unknown>;

  it("is the class a claim's copy asks for, named in the reason: static volumes of the host class never match", () => {
    const decision = only(claim({ storageClassName: "standard" }), rulesOf({}));
    expect(decision.action).toBe("Create");
    expect(specOf(decision)["storageClassName"]).toBe("tp-acme.standard");
    expect(decision.reason).toContain(
      "spec.storageClassName standard becomes tp-acme.standard, the tenant's own copy of that host class: " +
        "no volume made for anyone else can bind",
    );
  });

  it("is the copy of the host's default class for a claim naming none, and of the mapped class under classMap", () => {
    const byDefault = only(claim({}), rulesOf({}, "gp3"));
    expect(specOf(byDefault)["storageClassName"]).toBe("tp-acme.gp3");
    expect(byDefault.reason).toContain("spec.storageClassName set to the host's default StorageClass gp3");
    expect(byDefault.reason).toContain("gp3 becomes tp-acme.gp3");
    const mapped = only(
      claim({ storageClassName: "fast" }),
      rulesOf({ storage: { allowedClasses: ["ssd"], classMap: { fast: "ssd" } } }),
    );
    expect(specOf(mapped)["storageClassName"]).toBe("tp-acme.ssd");
  });

  it("cannot be asked for by name: a copy (the tenant's own or another's) is not an allowed host class", () => {
    for (const asked of ["tp-acme.standard", "tp-bank.standard"]) {
      const decision = only(claim({ storageClassName: asked }), rulesOf({}));
      expect(decision.action).toBe("Skip");
      expect(decision.reason).toContain(`storage class ${asked} is not in ${CLASS}`);
    }
  });

  it("is not forced on a host claim made earlier: its class cannot change, so it is kept and the claim stays in step", () => {
    const rules = rulesOf({});
    const fresh = only(claim({ storageClassName: "standard" }), rules);
    // The copy as made before classes were copied: the host class itself, hashed as desired then.
    const old = structuredClone(fresh.object!) as Record<string, unknown> & {
      metadata: { annotations: Record<string, string> };
    };
    (old["spec"] as Record<string, unknown>)["storageClassName"] = "standard";
    delete old.metadata.annotations["tenantplane.io/content-hash"];
    old.metadata.annotations["tenantplane.io/content-hash"] = contentHash(old);
    const steady = plan({
      tenant,
      policy: defaultSyncPolicySpec,
      rules,
      tenantObjects: [claim({ storageClassName: "standard" })],
      hostObjects: [old],
    });
    expect(steady.decisions).toEqual([]);
    expect(steady.inSync).toHaveLength(1);

    const grown = claim({ storageClassName: "standard", resources: { requests: { storage: "2Gi" } } });
    const update = plan({ tenant, policy: defaultSyncPolicySpec, rules, tenantObjects: [grown], hostObjects: [old] });
    const decision = update.decisions[0]!;
    expect(decision.action).toBe("Update");
    expect(specOf(decision)).toMatchObject({
      storageClassName: "standard",
      resources: { requests: { storage: "2Gi" } },
    });
    expect(decision.reason).toContain(
      "spec.storageClassName kept as standard: the host copy was made with it and a claim's class cannot change",
    );
  });
});

describe("a host Pod made before class copies", () => {
  it("keeps its ephemeral volumes' template classes (a Pod's volumes cannot change) and stays in step otherwise", () => {
    const rules = rulesOf({});
    const template = { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } };
    const tenantPod = (image: string) =>
      pod({
        containers: [{ name: "c", image }],
        volumes: [{ name: "scratch", ephemeral: { volumeClaimTemplate: template } }],
      });
    const fresh = only(tenantPod("nginx"), rules);
    const old = structuredClone(fresh.object!) as Record<string, unknown> & {
      metadata: { annotations: Record<string, string> };
    };
    const volumes = (
      old["spec"] as { volumes: Array<{ ephemeral: { volumeClaimTemplate: { spec: Record<string, unknown> } } }> }
    ).volumes;
    expect(volumes[0]!.ephemeral.volumeClaimTemplate.spec["storageClassName"]).toBe("tp-acme.standard");
    volumes[0]!.ephemeral.volumeClaimTemplate.spec["storageClassName"] = "standard";
    delete old.metadata.annotations["tenantplane.io/content-hash"];
    old.metadata.annotations["tenantplane.io/content-hash"] = contentHash(old);
    const input = { tenant, policy: defaultSyncPolicySpec, rules };
    expect(plan({ ...input, tenantObjects: [tenantPod("nginx")], hostObjects: [old] }).decisions).toEqual([]);
    const [update] = plan({ ...input, tenantObjects: [tenantPod("nginx:2")], hostObjects: [old] }).decisions;
    expect(update?.action).toBe("Update");
    expect(JSON.stringify(update?.object?.["spec"])).toContain('"storageClassName":"standard"');
    expect(update?.reason).toContain("volume scratch's claim template class kept as standard");
  });
});

describe("an ephemeral volume's claim template", () => {
  const path = "spec.volumes[0].ephemeral.volumeClaimTemplate";

  it("gets the rules of a claim: no volume binding, selector or binding annotations", () => {
    const decision = only(
      ephemeral({
        metadata: {
          annotations: {
            "pv.kubernetes.io/bind-completed": "yes",
            "volume.kubernetes.io/selected-node": "n1",
            keep: "x",
          },
        },
        spec: {
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: "1Gi" } },
          volumeName: "static-pv",
          selector: { matchLabels: { owner: "bank" } },
        },
      }),
      rulesOf({}),
    );
    expect(decision.action).toBe("Create");
    type Template = { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };
    const volumes = (decision.object?.["spec"] as { volumes: Array<{ ephemeral: { volumeClaimTemplate: Template } }> })
      .volumes;
    const template = volumes[0]!.ephemeral.volumeClaimTemplate;
    expect(template.spec).not.toHaveProperty("volumeName");
    expect(template.spec).not.toHaveProperty("selector");
    expect(template.spec["storageClassName"]).toBe("tp-acme.standard");
    expect(template.metadata.annotations).toEqual({ keep: "x" });
    expect(decision.reason).toContain(
      `${path}.spec.volumeName, ${path}.spec.selector, ${path}.metadata.annotations[pv.kubernetes.io/bind-completed], ` +
        `${path}.metadata.annotations[volume.kubernetes.io/selected-node] dropped`,
    );
  });

  it("is refused for a class the profile does not allow", () => {
    const decision = only(ephemeral({ spec: { storageClassName: "fast" } }), rulesOf({}));
    expect(decision.action).toBe("Skip");
    expect(decision.reason).toContain(`${path}.spec.storageClassName: storage class fast is not in ${CLASS}`);
  });
});

describe("a Pod's resource claims", () => {
  const withClaims = pod({
    containers: [{ name: "c", image: "nginx", resources: { claims: [{ name: "gpu" }] } }],
    resourceClaims: [{ name: "gpu", resourceClaimTemplateName: "single-gpu" }],
  });

  it("are refused at every Pod Security level unless the profile allows them, naming the field and the rule", () => {
    for (const enforce of ["privileged", "baseline", "restricted"]) {
      const rules = compileHostRules(parseIsolationProfileSpec({ podSecurity: { enforce } }));
      const decision = only(withClaims, rules);
      expect(decision.action).toBe("Skip");
      expect(decision.reason).toContain(
        "spec.resourceClaims[0]: claim gpu asks the node's drivers for devices, which needs " +
          "IsolationProfile spec.workloads.allowResourceClaims: true",
      );
    }
  });

  it("once allowed, still name a ResourceClaimTemplate that is never synced, and are refused for it", () => {
    const decision = only(withClaims, rulesOf({ allowResourceClaims: true }));
    expect(decision.action).toBe("Skip");
    expect(decision.reason).not.toContain("allowResourceClaims");
    expect(decision.reason).toContain("ResourceClaimTemplate single-gpu will never have a host copy");
  });
});

describe("defaultStorageClass", () => {
  const sc = (name: string, created: string, annotations: Record<string, string> = {}) => ({
    metadata: { name, creationTimestamp: created, annotations },
  });
  const marked = { "storageclass.kubernetes.io/is-default-class": "true" };

  it("is the class marked default, the newest when several are, ties by name, as the API server picks", () => {
    expect(defaultStorageClass([sc("a", "2026-01-01T00:00:00Z"), sc("b", "2026-01-01T00:00:00Z", marked)])).toBe("b");
    expect(
      defaultStorageClass([
        sc("old", "2025-01-01T00:00:00Z", marked),
        sc("new", "2026-01-01T00:00:00Z", { "storageclass.beta.kubernetes.io/is-default-class": "true" }),
      ]),
    ).toBe("new");
    expect(
      defaultStorageClass([sc("z", "2026-01-01T00:00:00Z", marked), sc("y", "2026-01-01T00:00:00Z", marked)]),
    ).toBe("y");
  });

  it("is null when no class is marked, or marked anything but true", () => {
    expect(defaultStorageClass([])).toBeNull();
    expect(
      defaultStorageClass([sc("a", "", { "storageclass.kubernetes.io/is-default-class": "false" }), null, 3, {}]),
    ).toBeNull();
  });
});
