import { describe, expect, it } from "vitest";
import { templateObjects } from "./workload-pods.js";

const podSpec = { containers: [{ name: "app", image: "nginx:1.27" }] };

describe("templateObjects", () => {
  it("makes one Pod per workload from its template: namespace, labels, the ServiceAccount it names", () => {
    const { objects, problems } = templateObjects([
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "shop" },
        spec: {
          template: {
            metadata: { labels: { app: "web" }, annotations: { a: "1" } },
            spec: { ...podSpec, serviceAccountName: "web" },
          },
        },
      },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
    ]);
    expect(problems).toEqual([]);
    expect(objects).toHaveLength(1);
    const [pod] = objects;
    expect(pod?.workload).toEqual({ kind: "Deployment", namespace: "shop", name: "web" });
    expect(pod?.field).toBe("spec.template");
    expect(pod?.object).toMatchObject({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: expect.stringMatching(/^web-[0-9a-f]{10}$/), namespace: "shop", labels: { app: "web" } },
      spec: { ...podSpec, serviceAccountName: "web" },
    });
  });

  it("names the ServiceAccount `default` when the template names none, and `default` is the namespace when the workload names none", () => {
    const { objects } = templateObjects([
      { kind: "Job", metadata: { name: "once" }, spec: { template: { spec: { ...podSpec, restartPolicy: "Never" } } } },
      {
        kind: "CronJob",
        metadata: { name: "nightly", namespace: "ops" },
        spec: { jobTemplate: { spec: { template: { spec: { ...podSpec, serviceAccount: "legacy" } } } } },
      },
    ]);
    expect(
      objects.map((o) => [
        o.object["metadata"],
        (o.object["spec"] as { serviceAccountName: string }).serviceAccountName,
        o.field,
      ]),
    ).toEqual([
      [{ name: expect.stringMatching(/^once-/), namespace: "default" }, "default", "spec.template"],
      [{ name: expect.stringMatching(/^nightly-/), namespace: "ops" }, "legacy", "spec.jobTemplate.spec.template"],
    ]);
  });

  it("gives a StatefulSet's first Pod its stable name, hostname, subdomain and claims, as its controller does", () => {
    const { objects } = templateObjects([
      {
        kind: "StatefulSet",
        metadata: { name: "db", namespace: "shop" },
        spec: {
          serviceName: "db",
          selector: { matchLabels: { app: "db" } },
          template: {
            metadata: { labels: { app: "db" } },
            spec: {
              ...podSpec,
              volumes: [
                { name: "data", emptyDir: {} },
                { name: "conf", configMap: { name: "c" } },
              ],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: "data" },
              spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
            },
            { metadata: { name: "logs" }, spec: { storageClassName: "fast" } },
          ],
        },
      },
    ]);
    const [pod, data, logs] = objects;
    expect(pod?.object).toMatchObject({
      kind: "Pod",
      metadata: { name: "db-0", namespace: "shop" },
      spec: {
        hostname: "db-0",
        subdomain: "db",
        serviceAccountName: "default",
        volumes: [
          { name: "data", persistentVolumeClaim: { claimName: "data-db-0" } },
          { name: "conf", configMap: { name: "c" } },
          { name: "logs", persistentVolumeClaim: { claimName: "logs-db-0" } },
        ],
      },
    });
    expect(data).toMatchObject({
      field: "spec.volumeClaimTemplates[0]",
      object: {
        kind: "PersistentVolumeClaim",
        metadata: { name: "data-db-0", namespace: "shop", labels: { app: "db" } },
        spec: { accessModes: ["ReadWriteOnce"] },
      },
    });
    expect(logs?.object).toMatchObject({ metadata: { name: "logs-db-0" }, spec: { storageClassName: "fast" } });
  });

  it("reports a workload without a Pod template, and the same template always gives the same name", () => {
    const deployment = { kind: "Deployment", metadata: { name: "web" }, spec: { template: { spec: podSpec } } };
    expect(templateObjects([{ kind: "DaemonSet", metadata: { name: "agent", namespace: "ops" }, spec: {} }])).toEqual({
      objects: [],
      problems: [
        {
          workload: { kind: "DaemonSet", namespace: "ops", name: "agent" },
          problem: "no Pod template at spec.template: the tenant API refuses such a DaemonSet",
        },
      ],
    });
    const first = templateObjects([deployment]).objects[0]?.object["metadata"];
    expect(templateObjects([structuredClone(deployment)]).objects[0]?.object["metadata"]).toEqual(first);
  });
});
