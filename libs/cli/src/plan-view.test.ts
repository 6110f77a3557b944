import { describe, expect, it } from "vitest";
import { clusterScopedKinds } from "./cluster-scoped.js";
import { markTemplates, relabel, withTemplateRows } from "./plan-view.js";
import type { TemplateObject } from "./workload-pods.js";

const row = (kind: string, namespace: string, name: string, reason: string, action = "Skip") => ({
  tenant: "dev",
  kind,
  action,
  reason,
  tenantRef: { namespace, name },
  hostRef: { namespace: "tp-dev", name: `${name}-x-${namespace}-x-dev` },
  hashed: false,
});

describe("relabel", () => {
  const scoped = clusterScopedKinds([
    { kind: "CustomResourceDefinition", spec: { scope: "Cluster", names: { kind: "Widget" } } },
    { kind: "CustomResourceDefinition", spec: { scope: "Namespaced", names: { kind: "Gadget" } } },
  ]);

  it("shows cluster-scoped objects (built-in, and kinds of cluster-scoped CRDs in the manifest) without a namespace", () => {
    const rows = relabel(
      [
        row("ClusterRole", "default", "reader", "kind ClusterRole not in SyncPolicy toHost"),
        row("Widget", "default", "w", "kind Widget not in SyncPolicy toHost"),
        row("Gadget", "shop", "g", "kind Gadget not in SyncPolicy toHost"),
      ],
      scoped,
    );
    expect(rows.map((r) => [r.tenantRef, r.hostRef.namespace, r.reason])).toEqual([
      [{ namespace: "", name: "reader" }, "", "cluster-scoped: stays in the tenant API, never synced"],
      [{ namespace: "", name: "w" }, "", "cluster-scoped: stays in the tenant API, never synced"],
      [{ namespace: "shop", name: "g" }, "tp-dev", "kind Gadget not in SyncPolicy toHost"],
    ]);
  });

  it("says a workload is not synced itself but by its template, or why its template cannot be read", () => {
    const [deployment, broken] = relabel(
      [
        row("Deployment", "shop", "web", "kind Deployment not in SyncPolicy toHost (tenantplane syncs Pod, ...)"),
        row("DaemonSet", "shop", "agent", "kind DaemonSet not in SyncPolicy toHost"),
      ],
      scoped,
      [
        {
          workload: { kind: "DaemonSet", namespace: "shop", name: "agent" },
          problem: "no Pod template at spec.template",
        },
      ],
    );
    expect(deployment?.reason).toBe(
      'not synced itself: the Deployment controller in the tenant makes its Pods from spec.template; the rows "from spec.template of Deployment shop/web" predict them',
    );
    expect(deployment?.hostRef.namespace).toBe("");
    expect(broken).toMatchObject({ reason: "no Pod template at spec.template", malformed: true });
  });
});

describe("template rows", () => {
  const origin: TemplateObject = {
    object: { kind: "Pod", metadata: { name: "web-0123456789", namespace: "shop" } },
    workload: { kind: "Deployment", namespace: "shop", name: "web" },
    field: "spec.template",
  };

  it("marks the stand-in's rows with their workload and say so in the reason, placed after the workload's row", () => {
    const marked = markTemplates(
      [row("Pod", "shop", "web-0123456789", "host Pod absent", "Create"), row("Pod", "shop", "other", "x", "Create")],
      [origin],
    );
    expect(marked).toEqual([
      expect.objectContaining({
        template: { kind: "Deployment", namespace: "shop", name: "web", field: "spec.template" },
        reason: "from spec.template of Deployment shop/web (each of its Pods): host Pod absent",
      }),
    ]);
    const workload = row("Deployment", "shop", "web", "not synced itself");
    const before = row("ConfigMap", "shop", "a", "x", "Create");
    const after = row("Service", "shop", "web", "x", "Create");
    expect(withTemplateRows([before, workload, after], marked).map((r) => r.kind)).toEqual([
      "ConfigMap",
      "Deployment",
      "Pod",
      "Service",
    ]);
  });
});
