import type { PlanResult } from "@tenantplane/sync";
import { describe, expect, it } from "vitest";
import { KubeApiError, type Objects } from "@tenantplane/kube";
import type { Cluster } from "./host.js";
import {
  applyManifest,
  asStored,
  deletableKinds,
  manifestNamespaces,
  manifestView,
  sourceKeyOf,
  withoutTerminating,
} from "./tenant-objects.js";

const cm = (namespace: string | undefined, name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...(namespace === undefined ? {} : { namespace }), ...extra },
});

describe("live explain-sync inputs", () => {
  it("keys objects by kind, namespace (default when empty) and name", () => {
    expect(sourceKeyOf(cm("shop", "a"))).toBe("ConfigMap/shop/a");
    expect(sourceKeyOf(cm(undefined, "a"))).toBe("ConfigMap/default/a");
    expect(sourceKeyOf(cm("", "a"))).toBe("ConfigMap/default/a");
    expect(sourceKeyOf("x")).toBeUndefined();
    expect(sourceKeyOf({ kind: "ConfigMap" })).toBeUndefined();
  });

  it("applies the manifest over the tenant's objects, manifest first, dropping objects being deleted", () => {
    const manifest = [cm("shop", "a"), "not an object", cm(undefined, "b")];
    const listed = [
      cm("shop", "a", { uid: "old" }),
      cm("default", "b"),
      cm("shop", "c"),
      cm("shop", "d", { deletionTimestamp: "2026-01-01T00:00:00Z" }),
    ];
    expect(applyManifest(manifest, listed)).toEqual([...manifest, cm("shop", "c")]);
  });

  it("with prune, counts the listed objects of the manifest's namespaces that it lacks as deleted", () => {
    const manifest = [cm("shop", "a"), cm(undefined, "b"), "not an object"];
    const listed = [cm("shop", "a", { uid: "old" }), cm("shop", "gone"), cm("default", "gone-too"), cm("web", "kept")];
    expect(applyManifest(manifest, listed, { prune: true })).toEqual([...manifest, cm("web", "kept")]);
    expect(manifestNamespaces([cm("", "x"), cm("shop", "y"), 42])).toEqual(new Set(["default", "shop"]));
    // Without prune an object left out of the manifest stays.
    expect(applyManifest(manifest, listed)).toEqual([...manifest, ...listed.slice(1)]);
  });

  it("counts objects in a namespace being deleted as gone", () => {
    const namespaces = [
      { metadata: { name: "shop" } },
      { metadata: { name: "old", deletionTimestamp: "2026-01-01T00:00:00Z" } },
      { metadata: { name: "older" }, status: { phase: "Terminating" } },
    ];
    expect(withoutTerminating([cm("shop", "a"), cm("old", "b"), cm("older", "c")], namespaces)).toEqual([
      cm("shop", "a"),
    ]);
  });

  it("allows Deletes of policy kinds only when the tenant was listed", () => {
    expect(deletableKinds(["Pod", "ConfigMap"], true)).toEqual([
      "Pod",
      "ConfigMap",
      "Secret",
      "Service",
      "ServiceAccount",
      "PersistentVolumeClaim",
    ]);
    expect(deletableKinds(["Pod", "ConfigMap"], false)).toEqual([
      "Secret",
      "Service",
      "ServiceAccount",
      "PersistentVolumeClaim",
    ]);
  });

  it("shows every action, and ignored or in-sync entries only for the manifest's objects", () => {
    const target = (name: string) => ({
      tenant: "dev",
      kind: "ConfigMap",
      tenantRef: { namespace: "shop", name },
      hostRef: { namespace: "tp-dev", name: `${name}-x-shop-x-dev` },
      hashed: false,
    });
    const result: PlanResult = {
      decisions: [{ ...target("other"), action: "Update", reason: "r" }],
      ignored: [
        { ...target("a"), action: "Skip", reason: "i" },
        { ...target("other2"), action: "Skip", reason: "i" },
      ],
      inSync: [target("a"), target("other3")],
    };
    expect(manifestView(result, [cm("shop", "a")])).toEqual({
      decisions: result.decisions,
      ignored: [result.ignored[0]],
      inSync: [result.inSync[0]],
    });
  });
});

describe("asStored", () => {
  /** A tenant API whose dry-run apply defaults a ConfigMap and refuses the name "bad". */
  function tenantApi(calls: unknown[]): Cluster {
    const objects = {
      apply: async (obj: { metadata: { name: string } }, opts: unknown) => {
        calls.push({ obj, opts });
        if (obj.metadata.name === "bad") {
          throw new KubeApiError("PATCH", "/api/v1/namespaces/shop/configmaps/bad", 422, {
            message: 'ConfigMap "bad" is invalid: data: Too long',
          });
        }
        return { ...obj, metadata: { ...obj.metadata, uid: "u1" }, data: { defaulted: "yes" } };
      },
    };
    return {
      objects: objects as unknown as Objects,
      client: undefined as never,
      server: "https://127.0.0.1:6443",
      label: "tenant dev's API",
    };
  }

  it("dry-runs named core objects of the given kinds, in the default namespace when unset, and keeps the rest as written", async () => {
    const calls: { obj: unknown; opts: unknown }[] = [];
    const other = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" } };
    const manifest = [cm(undefined, "a"), other, { apiVersion: "v1", kind: "Secret", metadata: { name: "s" } }, "x"];
    const stored = await asStored(tenantApi(calls), manifest, ["ConfigMap"]);
    expect(stored.notes).toEqual([]);
    expect(stored.objects).toEqual([
      { ...cm("default", "a", { uid: "u1" }), data: { defaulted: "yes" } },
      other,
      manifest[2],
      "x",
    ]);
    expect(calls).toEqual([{ obj: cm("default", "a"), opts: { dryRun: true } }]);
  });

  it("keeps an object the tenant API refuses as written, with a note naming it and the answer", async () => {
    const stored = await asStored(tenantApi([]), [cm("shop", "bad")], ["ConfigMap"]);
    expect(stored.objects).toEqual([cm("shop", "bad")]);
    expect(stored.notes).toEqual([
      'ConfigMap shop/bad: planned as written, since a dry run on tenant dev\'s API failed (cannot apply ConfigMap/shop/bad: ConfigMap "bad" is invalid: data: Too long)',
    ]);
  });
});
