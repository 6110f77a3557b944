import { hostLabelKey } from "@tenantplane/mapping";
import { describe, expect, it } from "vitest";
import { contentHash } from "./content-hash.js";
import { KubeObjectSchema, type KubeObject } from "./kube-object.js";
import { MalformedObjectError } from "./malformed-object-error.js";
import { transform, translate } from "./transform.js";

function object(kind: string, name: string, rest: Record<string, unknown> = {}, namespace = "shop"): KubeObject {
  return KubeObjectSchema.parse({ apiVersion: "v1", kind, metadata: { name, namespace }, ...rest });
}

const host = (name: string) => `${name}-x-shop-x-dev`;

describe("transform", () => {
  it("shares the source's string values: copies of megabyte ConfigMaps kept beside them cost no megabytes", () => {
    // Parsed, as the worker gets them: flat strings of their own, each 1 MB.
    const sources = Array.from({ length: 24 }, (_, i) =>
      object("ConfigMap", `big-${i}`, JSON.parse(`{"data":{"k":"${String(i % 10).repeat(1_000_000)}"}}`)),
    );
    const before = process.memoryUsage().heapUsed;
    const copies = sources.map((source) => transform(source, "dev", { hashKey: "k" }));
    const grown = process.memoryUsage().heapUsed - before;
    expect(copies.map((c) => (c["data"] as { k: string }).k.length)).toEqual(sources.map(() => 1_000_000));
    // A copy of each payload would be 24 MB at least.
    expect(grown).toBeLessThan(8 * 1024 * 1024);
  });

  it("renames into the tenant's host namespace and adds the reverse mapping", () => {
    const result = transform(object("ConfigMap", "settings", { data: { a: "1" } }), "dev");
    expect(result.metadata.name).toBe("settings-x-shop-x-dev");
    expect(result.metadata.namespace).toBe("tp-dev");
    expect(result.metadata.labels).toEqual({
      "app.kubernetes.io/managed-by": "tenantplane",
      "tenantplane.io/tenant": "dev",
      "tenantplane.io/virtual-namespace": "shop",
      "tenantplane.io/kind": "ConfigMap",
    });
    expect(result.metadata.annotations).toMatchObject({
      "tenantplane.io/virtual-namespace": "shop",
      "tenantplane.io/virtual-name": "settings",
    });
    expect(result.data).toEqual({ a: "1" });
  });

  it("places an object without a namespace as if it were in default", () => {
    const obj = KubeObjectSchema.parse({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } });
    const result = transform(obj, "dev");
    expect(result.metadata.name).toBe("c-x-default-x-dev");
    expect(result.metadata.annotations["tenantplane.io/virtual-namespace"]).toBe("default");
  });

  it("drops server-populated metadata and status, keeping the tenant's own labels and annotations", () => {
    const obj = KubeObjectSchema.parse({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "creds",
        namespace: "shop",
        generateName: "cr-",
        uid: "u",
        resourceVersion: "7",
        generation: 2,
        creationTimestamp: "2026-01-01T00:00:00Z",
        deletionTimestamp: "2026-01-02T00:00:00Z",
        deletionGracePeriodSeconds: 30,
        managedFields: [{ manager: "kubectl" }],
        ownerReferences: [{ kind: "Deployment", name: "x" }],
        finalizers: ["example.com/keep"],
        selfLink: "/api/v1/namespaces/shop/secrets/creds",
        labels: { team: "a" },
        annotations: { note: "b" },
      },
      type: "Opaque",
      data: { password: "cGFzcw==" },
      status: { anything: true },
    });
    const result = transform(obj, "dev");
    expect(Object.keys(result.metadata).sort()).toEqual(["annotations", "labels", "name", "namespace"]);
    expect(result.metadata.labels["team"]).toBe("a");
    expect(result.metadata.annotations["note"]).toBe("b");
    expect(result).not.toHaveProperty("status");
    expect(result.type).toBe("Opaque");
  });

  it("overwrites tenant-supplied tenantplane keys and never trusts them", () => {
    const obj = object("Pod", "web", {
      spec: { containers: [] },
    });
    obj.metadata.labels = {
      "app.kubernetes.io/managed-by": "helm",
      "tenantplane.io/tenant": "other",
      "tenantplane.io/control-plane": "true",
      app: "web",
    };
    obj.metadata.annotations = { "tenantplane.io/virtual-name": "forged", "tenantplane.io/content-hash": "0" };
    const result = transform(obj, "dev");
    expect(result.metadata.labels["app.kubernetes.io/managed-by"]).toBe("tenantplane");
    expect(result.metadata.labels["tenantplane.io/tenant"]).toBe("dev");
    expect(result.metadata.labels).not.toHaveProperty("tenantplane.io/control-plane");
    expect(result.metadata.labels["app"]).toBe("web");
    // The tenant's values live on under escaped keys, which its selectors are translated to as well.
    expect(result.metadata.labels[hostLabelKey("app.kubernetes.io/managed-by")]).toBe("helm");
    expect(result.metadata.labels[hostLabelKey("tenantplane.io/control-plane")]).toBe("true");
    expect(result.metadata.annotations["tenantplane.io/virtual-name"]).toBe("web");
    expect(result.metadata.annotations["tenantplane.io/content-hash"]).not.toBe("0");
  });

  it("records the content hash of the desired object without the hash annotation", () => {
    const result = transform(object("ConfigMap", "c", { data: { a: "1" } }), "dev");
    const { "tenantplane.io/content-hash": recorded, ...rest } = result.metadata.annotations;
    expect(recorded).toBe(contentHash({ ...result, metadata: { ...result.metadata, annotations: rest } }));
  });

  it("gives the same hash whatever the key order, and a different one when content changes", () => {
    const a = transform(object("ConfigMap", "c", { data: { a: "1", b: "2" } }), "dev");
    const b = transform(object("ConfigMap", "c", { data: { b: "2", a: "1" } }), "dev");
    const c = transform(object("ConfigMap", "c", { data: { a: "1", b: "3" } }), "dev");
    const hash = (o: typeof a) => o.metadata.annotations["tenantplane.io/content-hash"];
    expect(hash(a)).toBe(hash(b));
    expect(hash(a)).not.toBe(hash(c));
  });

  it("does not modify its input", () => {
    const obj = object("Pod", "web", {
      spec: { nodeName: "n1", volumes: [{ name: "v", secret: { secretName: "s" } }] },
    });
    const before = structuredClone(obj);
    transform(obj, "dev");
    expect(obj).toEqual(before);
  });
});

describe("transform of a Pod", () => {
  const pod = object("Pod", "web", {
    spec: {
      nodeName: "tenant-node",
      priority: 1000,
      serviceAccount: "builder",
      imagePullSecrets: [{ name: "registry" }],
      volumes: [
        { name: "cfg", configMap: { name: "settings" } },
        { name: "sec", secret: { secretName: "creds" } },
        { name: "data", persistentVolumeClaim: { claimName: "data" } },
        { name: "scratch", emptyDir: {} },
        {
          name: "kube-api-access",
          projected: {
            sources: [
              { serviceAccountToken: { path: "token" } },
              { configMap: { name: "kube-root-ca.crt" } },
              { secret: { name: "extra" } },
              { downwardAPI: { items: [] } },
            ],
          },
        },
      ],
      initContainers: [{ name: "init", envFrom: [{ configMapRef: { name: "settings" } }] }],
      containers: [
        {
          name: "app",
          env: [
            { name: "PLAIN", value: "x" },
            { name: "A", valueFrom: { configMapKeyRef: { name: "settings", key: "a" } } },
            { name: "B", valueFrom: { secretKeyRef: { name: "creds", key: "b" } } },
            { name: "C", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          ],
          envFrom: [{ secretRef: { name: "creds" } }, { configMapRef: { name: "kube-root-ca.crt" } }],
        },
      ],
      ephemeralContainers: [
        { name: "debug", env: [{ name: "D", valueFrom: { secretKeyRef: { name: "creds", key: "d" } } }] },
      ],
    },
    status: { phase: "Running" },
  });
  const spec = transform(pod, "dev")["spec"] as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  it("points volumes at the host copies; the token and its root CA come from the host Pod's token Secret", () => {
    expect(spec["volumes"][0].configMap.name).toBe(host("settings"));
    expect(spec["volumes"][1].secret.secretName).toBe(host("creds"));
    expect(spec["volumes"][2].persistentVolumeClaim.claimName).toBe(host("data"));
    expect(spec["volumes"][3]).toEqual({ name: "scratch", emptyDir: {} });
    expect(spec["volumes"][4].projected.sources).toEqual([
      { secret: { name: `${host("web")}.token`, items: [{ key: "token-0", path: "token" }] } },
      { secret: { name: `${host("web")}.token`, items: [{ key: "ca.crt", path: "ca.crt" }] } },
      { secret: { name: host("extra") } },
      { downwardAPI: { items: [] } },
    ]);
  });

  it("points env and envFrom of every container list at the host copies", () => {
    const env = spec["containers"][0].env;
    expect(env[0]).toEqual({ name: "PLAIN", value: "x" });
    expect(env[1].valueFrom.configMapKeyRef).toEqual({ name: host("settings"), key: "a" });
    expect(env[2].valueFrom.secretKeyRef).toEqual({ name: host("creds"), key: "b" });
    expect(env[3].valueFrom.fieldRef).toEqual({ fieldPath: "metadata.annotations['tenantplane.io/virtual-name']" });
    expect(spec["containers"][0].envFrom).toEqual([
      { configMapRef: { name: "service-links.shop", optional: true } },
      { secretRef: { name: host("creds") } },
      { configMapRef: { name: "kube-root-ca.crt" } },
    ]);
    expect(spec["initContainers"][0].envFrom[1].configMapRef.name).toBe(host("settings"));
  });

  it("never sends ephemeral containers: the API accepts them only through their subresource", () => {
    expect(spec).not.toHaveProperty("ephemeralContainers");
  });

  it("reports every object the Pod refers to, once each", () => {
    expect(translate(pod, "dev").references).toEqual([
      { kind: "ConfigMap", name: "settings" },
      { kind: "Secret", name: "creds" },
      { kind: "PersistentVolumeClaim", name: "data" },
      { kind: "Secret", name: "extra" },
      { kind: "Secret", name: "registry" },
      { kind: "ServiceAccount", name: "builder" },
    ]);
  });

  it("renames image pull secrets and the service account, dropping the deprecated alias", () => {
    expect(spec["imagePullSecrets"]).toEqual([{ name: host("registry") }]);
    expect(spec["serviceAccountName"]).toBe(host("builder"));
    expect(spec).not.toHaveProperty("serviceAccount");
  });

  it("leaves scheduling and priority to the host and never mounts host credentials", () => {
    expect(spec).not.toHaveProperty("nodeName");
    expect(spec).not.toHaveProperty("priority");
    expect(spec["automountServiceAccountToken"]).toBe(false);
  });

  it("keeps the default service account, which the host namespace has natively", () => {
    const result = transform(
      object("Pod", "p", { spec: { serviceAccountName: "default", serviceAccount: "default" } }),
      "dev",
    );
    expect(result["spec"]).toMatchObject({ serviceAccountName: "default" });
    expect(result["spec"]).not.toHaveProperty("serviceAccount");
  });

  it("names the field it cannot translate", () => {
    expect(() => transform(object("Pod", "p", { spec: { volumes: { name: "v" } } }), "dev")).toThrow(
      new MalformedObjectError("spec.volumes", "expected a list"),
    );
    const badEnv = {
      spec: { containers: [{ name: "c", env: [{ name: "E", valueFrom: { secretKeyRef: { name: 5 } } }] }] },
    };
    expect(() => transform(object("Pod", "p", badEnv), "dev")).toThrow(
      "spec.containers[0].env[0].valueFrom.secretKeyRef.name: expected a string",
    );
  });
});

describe("transform of a Service", () => {
  const service = (spec: Record<string, unknown>) =>
    transform(object("Service", "api", { spec }), "dev")["spec"] as Record<string, unknown>;

  it("scopes a selector to the tenant and virtual namespace, escaping reserved keys as on the Pods' labels", () => {
    expect(
      service({ selector: { app: "api", "tenantplane.io/tenant": "other", "app.kubernetes.io/managed-by": "Helm" } })[
        "selector"
      ],
    ).toEqual({
      app: "api",
      [hostLabelKey("tenantplane.io/tenant")]: "other",
      [hostLabelKey("app.kubernetes.io/managed-by")]: "Helm",
      "tenantplane.io/tenant": "dev",
      "tenantplane.io/virtual-namespace": "shop",
    });
  });

  it("never widens: the host selector matches a host Pod exactly when the tenant selector matches its source", () => {
    const selector = { app: "api", "app.kubernetes.io/managed-by": "Helm" };
    const hostSelector = service({ selector })["selector"] as Record<string, string>;
    const matches = (sel: Record<string, string>, labels: Record<string, string>) =>
      Object.entries(sel).every(([k, v]) => labels[k] === v);
    const pods: Array<Record<string, string>> = [
      { app: "api", "app.kubernetes.io/managed-by": "Helm" },
      { app: "api" },
      { app: "api", "app.kubernetes.io/managed-by": "Other" },
    ];
    for (const labels of pods) {
      const hostLabels = transform(object("Pod", "p", { metadata: { name: "p", namespace: "shop", labels } }), "dev")
        .metadata.labels;
      expect(matches(hostSelector, hostLabels)).toBe(matches(selector, labels));
    }
  });

  it("drops a requested load-balancer address, which could be another tenant's", () => {
    expect(service({ type: "LoadBalancer", loadBalancerIP: "203.0.113.9" })).toEqual({ type: "LoadBalancer" });
  });

  it("leaves an absent or empty selector as it is, so it never selects every Pod", () => {
    expect(service({ ports: [] })).not.toHaveProperty("selector");
    expect(service({ selector: {} })["selector"]).toEqual({});
  });

  it("drops cluster IPs, node ports, health-check port and external IPs", () => {
    const spec = service({
      type: "LoadBalancer",
      clusterIP: "10.43.0.10",
      clusterIPs: ["10.43.0.10"],
      healthCheckNodePort: 32000,
      externalIPs: ["203.0.113.5"],
      ports: [{ port: 80, targetPort: 8080, nodePort: 30080 }],
    });
    expect(spec).toEqual({ type: "LoadBalancer", ports: [{ port: 80, targetPort: 8080 }] });
  });

  it("keeps a headless Service headless", () => {
    expect(service({ clusterIP: "None", clusterIPs: ["None"] })).toMatchObject({
      clusterIP: "None",
      clusterIPs: ["None"],
    });
  });

  it("rejects a selector that is not a map of strings", () => {
    expect(() => service({ selector: { app: 1 } })).toThrow("spec.selector: expected a map of label values");
  });
});

describe("transform of a PersistentVolumeClaim", () => {
  it("lets the host bind the claim and points a clone source at the host copy", () => {
    const claim = object("PersistentVolumeClaim", "data", {
      spec: {
        volumeName: "pvc-123",
        accessModes: ["ReadWriteOnce"],
        dataSource: { kind: "PersistentVolumeClaim", name: "seed" },
        dataSourceRef: { kind: "VolumeSnapshot", apiGroup: "snapshot.storage.k8s.io", name: "snap" },
      },
    });
    claim.metadata.annotations = {
      "pv.kubernetes.io/bind-completed": "yes",
      "volume.kubernetes.io/selected-node": "tenant-node",
      "volume.beta.kubernetes.io/storage-provisioner": "x",
      keep: "me",
    };
    const result = transform(claim, "dev");
    expect(result["spec"]).toEqual({
      accessModes: ["ReadWriteOnce"],
      dataSource: { kind: "PersistentVolumeClaim", name: host("seed") },
      dataSourceRef: { kind: "VolumeSnapshot", apiGroup: "snapshot.storage.k8s.io", name: "snap" },
    });
    expect(Object.keys(result.metadata.annotations).filter((k) => k.includes("volume") || k.startsWith("pv."))).toEqual(
      [],
    );
    expect(result.metadata.annotations["keep"]).toBe("me");
  });
});

describe("transform of a ServiceAccount", () => {
  it("renames image pull secrets and drops the token Secret list", () => {
    const result = transform(
      object("ServiceAccount", "builder", { imagePullSecrets: [{ name: "registry" }], secrets: [{ name: "t" }] }),
      "dev",
    );
    expect(result["imagePullSecrets"]).toEqual([{ name: host("registry") }]);
    expect(result).not.toHaveProperty("secrets");
  });
});

describe("transform of Pod references the first version missed", () => {
  const spec = (podSpec: Record<string, unknown>) =>
    transform(object("Pod", "web", { spec: podSpec }), "dev")["spec"] as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  it("points every volume type's Secret reference at the host copy", () => {
    const volumes = [
      { name: "a", csi: { driver: "x", nodePublishSecretRef: { name: "csi-creds" } } },
      { name: "b", cephfs: { monitors: ["m"], secretRef: { name: "ceph" } } },
      { name: "c", rbd: { monitors: ["m"], image: "i", secretRef: { name: "rbd" } } },
      { name: "d", flexVolume: { driver: "x", secretRef: { name: "flex" } } },
      { name: "e", iscsi: { targetPortal: "t", iqn: "q", lun: 0, secretRef: { name: "iscsi" } } },
      { name: "f", scaleIO: { gateway: "g", system: "s", secretRef: { name: "scaleio" } } },
      { name: "g", storageos: { volumeName: "v", secretRef: { name: "storageos" } } },
      { name: "h", azureFile: { secretName: "azure", shareName: "s" } },
    ];
    const out = spec({ containers: [], volumes })["volumes"];
    expect(out[0].csi.nodePublishSecretRef.name).toBe(host("csi-creds"));
    expect(out[1].cephfs.secretRef.name).toBe(host("ceph"));
    expect(out[2].rbd.secretRef.name).toBe(host("rbd"));
    expect(out[3].flexVolume.secretRef.name).toBe(host("flex"));
    expect(out[4].iscsi.secretRef.name).toBe(host("iscsi"));
    expect(out[5].scaleIO.secretRef.name).toBe(host("scaleio"));
    expect(out[6].storageos.secretRef.name).toBe(host("storageos"));
    expect(out[7].azureFile.secretName).toBe(host("azure"));
  });

  it("rewrites an ephemeral claim template: clone sources point at host copies, reserved metadata keys go", () => {
    const template = {
      metadata: {
        labels: {
          app: "db",
          "tenantplane.io/kind": "PersistentVolumeClaim",
          "app.kubernetes.io/managed-by": "tenantplane",
        },
        annotations: { note: "x", "tenantplane.io/virtual-name": "forged" },
      },
      spec: {
        accessModes: ["ReadWriteOnce"],
        dataSource: { kind: "PersistentVolumeClaim", name: "seed" },
        dataSourceRef: { kind: "PersistentVolumeClaim", name: "seed" },
      },
    };
    const out = spec({ containers: [], volumes: [{ name: "v", ephemeral: { volumeClaimTemplate: template } }] });
    const result = out["volumes"][0].ephemeral.volumeClaimTemplate;
    expect(result.spec.dataSource.name).toBe(host("seed"));
    expect(result.spec.dataSourceRef.name).toBe(host("seed"));
    expect(result.metadata.annotations).toEqual({ note: "x" });
    expect(
      Object.keys(result.metadata.labels).filter(
        (k) => k.startsWith("tenantplane.io/") || k.startsWith("app.kubernetes.io/"),
      ),
    ).toEqual([]);
    expect(result.metadata.labels["app"]).toBe("db");
  });

  it("points a subdomain at the host copy of its headless Service and keeps the tenant's hostname", () => {
    expect(spec({ containers: [], subdomain: "db" })).toMatchObject({ subdomain: host("db"), hostname: "web" });
    expect(spec({ containers: [], subdomain: "db", hostname: "db-0" })).toMatchObject({
      subdomain: host("db"),
      hostname: "db-0",
    });
    expect(spec({ containers: [] })).not.toHaveProperty("hostname");
  });

  it("drops what the host's admission recomputes from class names", () => {
    const out = spec({ containers: [], priority: 5, preemptionPolicy: "Never", overhead: { cpu: "1" } });
    expect(out).not.toHaveProperty("priority");
    expect(out).not.toHaveProperty("preemptionPolicy");
    expect(out).not.toHaveProperty("overhead");
  });

  it("keeps inter-pod affinity and topology spread to the tenant's own Pods, with keys escaped", () => {
    const out = spec({
      containers: [],
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { app: "web" } } },
            {
              topologyKey: "zone",
              namespaces: ["a", "b"],
              labelSelector: { matchExpressions: [{ key: "app.kubernetes.io/managed-by", operator: "Exists" }] },
            },
            { topologyKey: "zone", namespaceSelector: {}, labelSelector: { matchLabels: { app: "web" } } },
          ],
        },
      },
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: "zone",
          whenUnsatisfiable: "DoNotSchedule",
          labelSelector: { matchLabels: { app: "web" } },
        },
      ],
    });
    const [own, listed, everywhere] = out["affinity"].podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    const inShop = { key: "tenantplane.io/virtual-namespace", operator: "In", values: ["shop"] };
    expect(own.labelSelector).toEqual({
      matchLabels: { app: "web", "tenantplane.io/tenant": "dev" },
      matchExpressions: [inShop],
    });
    expect(listed).not.toHaveProperty("namespaces");
    expect(listed.labelSelector.matchExpressions).toEqual([
      { key: hostLabelKey("app.kubernetes.io/managed-by"), operator: "Exists" },
      { key: "tenantplane.io/virtual-namespace", operator: "In", values: ["a", "b"] },
    ]);
    expect(everywhere).not.toHaveProperty("namespaceSelector");
    expect(everywhere.labelSelector).toEqual({
      matchLabels: { app: "web", "tenantplane.io/tenant": "dev" },
      matchExpressions: [],
    });
    expect(out["topologySpreadConstraints"][0].labelSelector.matchExpressions).toEqual([inShop]);
  });

  it("cannot carry a namespace selector by labels and says so", () => {
    const term = { topologyKey: "zone", namespaceSelector: { matchLabels: { team: "a" } } };
    expect(() =>
      spec({ containers: [], affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } }),
    ).toThrow(
      "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector: selecting virtual namespaces by label",
    );
  });
});
