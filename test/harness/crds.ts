import {
  ApiextensionsV1Api,
  KubernetesObjectApi,
  loadYaml,
  PatchStrategy,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { waitFor } from "./wait-for.js";

/** Field manager the harness applies CRDs with. */
export const harnessFieldManager = "tenantplane-test-harness";

/**
 * Server-side applies each CustomResourceDefinition (forcing ownership, so re-running is
 * idempotent) and waits until every one reports `Established=True` and its group-version is
 * discoverable. Returns the CRD names.
 */
export async function installCrds(kc: KubeConfig, manifests: readonly object[]): Promise<string[]> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const manifest of manifests as readonly V1CustomResourceDefinition[]) {
    if (manifest.kind !== "CustomResourceDefinition" || manifest.metadata?.name === undefined) {
      throw new Error(`installCrds: expected named CustomResourceDefinitions, got kind ${String(manifest.kind)}`);
    }
    // client-node serialises built-in kinds through its typed models, which silently drop wire
    // keys such as `x-kubernetes-int-or-string` on plain objects; loadYaml maps them into the model.
    const typed = loadYaml<V1CustomResourceDefinition>(JSON.stringify(manifest));
    await objects.patch(typed, undefined, undefined, harnessFieldManager, true, PatchStrategy.ServerSideApply);
    names.push(manifest.metadata.name);
  }
  for (const name of names) {
    await waitFor(
      async () => {
        const crd = await extensions.readCustomResourceDefinition({ name });
        return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false;
      },
      { description: `CRD ${name} to be Established`, timeoutMs: 30_000, intervalMs: 100 },
    );
  }
  return names;
}
