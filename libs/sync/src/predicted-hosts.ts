import { isJsonObject, type JsonObject } from "./internal/json.js";
import type { PlannedDecisionWithObject } from "./plan.js";

/**
 * The host namespace's objects as they will be once `decisions` are applied: a Delete
 * removes its object, a Create adds the desired one, an Update replaces it. What the host
 * assigns is unknown before then and shows as a placeholder naming the object: a new
 * Service's ClusterIP (`<ClusterIP of tp-t/web-x-shop-x-t>`; an updated one keeps its own),
 * and a new Pod's address (`<IP of Pod tp-t/app-x-shop-x-t once Ready>`, counted as Ready,
 * as its Pods become; an updated one keeps its status). For predictions of what is derived
 * from host objects (explain-sync); never written anywhere.
 */
export function predictedHostObjects(
  hostObjects: readonly unknown[],
  decisions: readonly PlannedDecisionWithObject[],
): unknown[] {
  const byKey = new Map<string, unknown>();
  hostObjects.forEach((value, index) => byKey.set(keyOf(value) ?? `#${index}`, value));
  for (const d of decisions) {
    const key = `${d.kind}/${d.hostRef.name}`;
    const current = byKey.get(key);
    if (d.action === "Delete") byKey.delete(key);
    else if ((d.action === "Create" || d.action === "Update") && d.object !== undefined) {
      byKey.set(key, withAssigned(d.object as JsonObject, isJsonObject(current) ? current : undefined));
    }
  }
  return [...byKey.values()];
}

function withAssigned(desired: JsonObject, current: JsonObject | undefined): JsonObject {
  const metadata = isJsonObject(desired["metadata"]) ? desired["metadata"] : {};
  const where = `${String(metadata["namespace"])}/${String(metadata["name"])}`;
  if (desired["kind"] === "Service") {
    const spec = isJsonObject(desired["spec"]) ? desired["spec"] : {};
    if (spec["clusterIP"] === "None" || spec["type"] === "ExternalName") return desired;
    const kept = isJsonObject(current?.["spec"]) ? current["spec"]["clusterIP"] : undefined;
    const clusterIP = typeof kept === "string" && kept !== "" ? kept : `<ClusterIP of ${where}>`;
    return { ...desired, spec: { ...spec, clusterIP } };
  }
  if (desired["kind"] === "Pod") {
    const status = current?.["status"] ?? {
      phase: "Running",
      podIP: `<IP of Pod ${where} once Ready>`,
      conditions: [{ type: "Ready", status: "True" }],
    };
    return { ...desired, status };
  }
  return desired;
}

function keyOf(value: unknown): string | undefined {
  if (!isJsonObject(value) || !isJsonObject(value["metadata"])) return undefined;
  const kind = value["kind"];
  const name = value["metadata"]["name"];
  return typeof kind === "string" && typeof name === "string" ? `${kind}/${name}` : undefined;
}
