import { createHash } from "node:crypto";

/** Kinds whose controller inside the tenant makes Pods from a template; tenantplane syncs those Pods, not the kinds. */
export const WORKLOAD_KINDS: readonly string[] = [
  "Deployment",
  "StatefulSet",
  "DaemonSet",
  "ReplicaSet",
  "Job",
  "CronJob",
];

/** The workload a synthesized object comes from. */
export interface WorkloadRef {
  kind: string;
  namespace: string;
  name: string;
}

/** A Pod (or a StatefulSet's claim) as the tenant's controller would make it from a workload's template. */
export interface TemplateObject {
  object: Record<string, unknown>;
  workload: WorkloadRef;
  /** Where in the workload it comes from: `spec.template`, `spec.volumeClaimTemplates[0]`, ... */
  field: string;
}

/** A workload whose Pod template cannot be read, and why. */
export interface TemplateProblem {
  workload: WorkloadRef;
  problem: string;
}

/** What {@link templateObjects} made of a manifest: the synthesized objects, and one line per workload it could not read. */
export interface TemplateObjects {
  objects: TemplateObject[];
  problems: TemplateProblem[];
}

type Json = Record<string, unknown>;

/**
 * The Pods the tenant's controllers would make from each workload in `manifest` (see
 * {@link WORKLOAD_KINDS}), one per workload, and for a StatefulSet the claims of its first
 * Pod. Each Pod is named as a template stand-in (`<workload>-<hash of the template>`; a
 * StatefulSet's first Pod is `<name>-0`, as its controller names it), carries the template's
 * labels, annotations and spec in the workload's namespace (`default` when it names none),
 * and names its ServiceAccount explicitly (`default` when the template names none), as the
 * tenant API sets it. Like the StatefulSet controller, a StatefulSet's Pod gets its stable
 * hostname and subdomain (spec.serviceName) and a volume per volumeClaimTemplate, bound to
 * the claim `<template>-<name>-0`. Other objects are ignored.
 */
export function templateObjects(manifest: readonly unknown[]): TemplateObjects {
  const found: TemplateObjects = { objects: [], problems: [] };
  for (const value of manifest) {
    if (!isJson(value) || typeof value["kind"] !== "string" || !WORKLOAD_KINDS.includes(value["kind"])) continue;
    const metadata = isJson(value["metadata"]) ? value["metadata"] : {};
    if (typeof metadata["name"] !== "string" || metadata["name"] === "") continue;
    const workload: WorkloadRef = {
      kind: value["kind"],
      namespace:
        typeof metadata["namespace"] === "string" && metadata["namespace"] !== "" ? metadata["namespace"] : "default",
      name: metadata["name"],
    };
    const field = workload.kind === "CronJob" ? "spec.jobTemplate.spec.template" : "spec.template";
    const template = at(value, field.split("."));
    if (!isJson(template) || !isJson(template["spec"])) {
      found.problems.push({
        workload,
        problem: `no Pod template at ${field}: the tenant API refuses such a ${workload.kind}`,
      });
      continue;
    }
    found.objects.push(...fromTemplate(value, workload, template, field));
  }
  return found;
}

function fromTemplate(workload: Json, ref: WorkloadRef, template: Json, field: string): TemplateObject[] {
  const templateMeta = isJson(template["metadata"]) ? template["metadata"] : {};
  const spec = structuredClone(template["spec"]) as Json;
  spec["serviceAccountName"] = stringAt(spec, "serviceAccountName") ?? stringAt(spec, "serviceAccount") ?? "default";
  const isSet = ref.kind === "StatefulSet";
  const name = isSet ? `${ref.name}-0` : `${ref.name}-${templateHash(template)}`;
  const metadata: Json = { name, namespace: ref.namespace };
  if (isJson(templateMeta["labels"])) metadata["labels"] = structuredClone(templateMeta["labels"]);
  if (isJson(templateMeta["annotations"])) metadata["annotations"] = structuredClone(templateMeta["annotations"]);
  const out: TemplateObject[] = [];
  if (isSet) {
    spec["hostname"] = name;
    const serviceName = stringAt(at(workload, ["spec"]), "serviceName");
    if (serviceName !== undefined) spec["subdomain"] = serviceName;
    const claims = at(workload, ["spec", "volumeClaimTemplates"]);
    const volumes = (Array.isArray(spec["volumes"]) ? spec["volumes"] : []) as Json[];
    (Array.isArray(claims) ? claims : []).forEach((claim, index) => {
      const claimName = isJson(claim) ? stringAt(at(claim, ["metadata"]), "name") : undefined;
      if (!isJson(claim) || claimName === undefined) return;
      const pvcName = `${claimName}-${ref.name}-0`;
      const selector = at(workload, ["spec", "selector", "matchLabels"]);
      out.push({
        object: {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: {
            name: pvcName,
            namespace: ref.namespace,
            ...(isJson(selector) ? { labels: structuredClone(selector) } : {}),
          },
          spec: structuredClone(isJson(claim["spec"]) ? claim["spec"] : {}),
        },
        workload: ref,
        field: `spec.volumeClaimTemplates[${index}]`,
      });
      // The controller's volume replaces a template volume of the same name.
      const volume = { name: claimName, persistentVolumeClaim: { claimName: pvcName } };
      const same = volumes.findIndex((v) => isJson(v) && v["name"] === claimName);
      if (same >= 0) volumes[same] = volume;
      else volumes.push(volume);
    });
    if (volumes.length > 0) spec["volumes"] = volumes;
  }
  return [{ object: { apiVersion: "v1", kind: "Pod", metadata, spec }, workload: ref, field }, ...out];
}

/** Ten hex digits of the template's content: a stable stand-in for the controller's random suffix. */
function templateHash(template: Json): string {
  return createHash("sha256").update(JSON.stringify(template)).digest("hex").slice(0, 10);
}

function isJson(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function at(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) current = isJson(current) ? current[key] : undefined;
  return current;
}

function stringAt(value: unknown, key: string): string | undefined {
  const found = isJson(value) ? value[key] : undefined;
  return typeof found === "string" && found !== "" ? found : undefined;
}
