import type { Toleration } from "@tenantplane/api";
import type { HostRules } from "../host-rules.js";
import { canonicalJson } from "@tenantplane/api";
import { isJsonObject, type JsonObject } from "./json.js";
import { podSecurityViolations } from "./pod-security.js";
import { items, podContainers, read, type Violation } from "./violation.js";

const WORKLOADS = "IsolationProfile spec.workloads";
const HOST_ACCESS = "rule: tenant Pods never get host access";

// The DefaultTolerationSeconds admission plugin adds these to every Pod in the tenant's
// own API server; they only bound how long a Pod stays on a failed node.
const NODE_FAILURE_TAINTS = new Set(["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]);

/**
 * What keeps `pod` off the host: host access (host namespaces, hostPath, privileged
 * containers, host ports, whatever the profile says), names outside the profile's
 * allowed priority and runtime classes, tolerations and node selector values the profile
 * does not grant, and anything the host namespace's Pod Security level would refuse.
 */
export function podViolations(pod: JsonObject, rules: HostRules): Violation[] {
  const found: Violation[] = [];
  const spec = read(pod, "spec");
  for (const key of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (read(spec, key) === true)
      found.push({ field: `spec.${key}`, problem: `shares the host's namespaces (${HOST_ACCESS})` });
  }
  for (const [volume, index] of items(read(spec, "volumes"))) {
    if (volume["hostPath"] !== undefined) {
      found.push({ field: `spec.volumes[${index}].hostPath`, problem: `mounts a host path (${HOST_ACCESS})` });
    }
  }
  for (const [container, path] of podContainers(spec)) {
    if (read(read(container, "securityContext"), "privileged") === true) {
      found.push({ field: `${path}.securityContext.privileged`, problem: `privileged container (${HOST_ACCESS})` });
    }
    for (const [port, index] of items(read(container, "ports"))) {
      const hostPort = read(port, "hostPort");
      if (hostPort !== undefined && hostPort !== 0) {
        found.push({ field: `${path}.ports[${index}].hostPort`, problem: `binds a host port (${HOST_ACCESS})` });
      }
    }
  }

  const priorityClass = read(spec, "priorityClassName");
  if (
    typeof priorityClass === "string" &&
    priorityClass !== "" &&
    !rules.allowedPriorityClasses.includes(priorityClass)
  ) {
    found.push({
      field: "spec.priorityClassName",
      problem: `${priorityClass} is not in ${WORKLOADS}.allowedPriorityClasses (${listed(rules.allowedPriorityClasses)})`,
    });
  }
  const runtimeClass = read(spec, "runtimeClassName");
  if (typeof runtimeClass === "string" && runtimeClass !== "" && !rules.allowedRuntimeClasses.includes(runtimeClass)) {
    found.push({
      field: "spec.runtimeClassName",
      problem: `${runtimeClass} is not in ${WORKLOADS}.allowedRuntimeClasses (${listed(rules.allowedRuntimeClasses)})`,
    });
  }
  const nodeSelector = read(spec, "nodeSelector");
  if (isJsonObject(nodeSelector)) {
    for (const [key, wanted] of Object.entries(rules.nodeSelector)) {
      const value = nodeSelector[key];
      if (value !== undefined && value !== wanted) {
        found.push({
          field: `spec.nodeSelector[${key}]`,
          problem: `${String(value)} conflicts with ${WORKLOADS}.nodeSelector, which enforces ${wanted}`,
        });
      }
    }
  }
  for (const [toleration, index] of items(read(spec, "tolerations"))) {
    if (!isGrantedToleration(toleration, rules)) {
      found.push({
        field: `spec.tolerations[${index}]`,
        problem: `toleration ${describeToleration(toleration)} is not granted by ${WORKLOADS}.tolerations`,
      });
    }
  }

  const reported = new Set(found.map((v) => v.field));
  for (const violation of podSecurityViolations(pod, rules.podSecurity)) {
    if (!reported.has(violation.field)) found.push(violation);
  }
  return found;
}

/** The Pod's tolerations that the profile grants, plus the profile's own, without repeats. */
export function enforcedTolerations(tolerations: unknown, rules: HostRules): unknown[] {
  const kept = items(tolerations)
    .map(([toleration]) => toleration)
    .filter((toleration) => isGrantedToleration(toleration, rules));
  const seen = new Set(kept.map((t) => canonicalJson(t)));
  for (const toleration of rules.tolerations) {
    const key = canonicalJson(toleration);
    if (!seen.has(key)) kept.push({ ...toleration });
    seen.add(key);
  }
  return kept;
}

function isGrantedToleration(toleration: JsonObject, rules: HostRules): boolean {
  const key = read(toleration, "key");
  if (
    typeof key === "string" &&
    NODE_FAILURE_TAINTS.has(key) &&
    read(toleration, "effect") === "NoExecute" &&
    (read(toleration, "operator") ?? "Equal") === "Exists"
  ) {
    return true;
  }
  return rules.tolerations.some((granted) => sameToleration(toleration, granted));
}

// tolerationSeconds only shortens how long a NoExecute toleration holds, so it is not compared.
function sameToleration(toleration: JsonObject, granted: Toleration): boolean {
  const operator = (t: { operator?: unknown }) => t.operator ?? "Equal";
  return (
    (toleration["key"] ?? "") === (granted.key ?? "") &&
    operator(toleration) === operator(granted) &&
    (operator(granted) === "Exists" || (toleration["value"] ?? "") === (granted.value ?? "")) &&
    (toleration["effect"] ?? "") === (granted.effect ?? "")
  );
}

function describeToleration(toleration: JsonObject): string {
  const key = typeof toleration["key"] === "string" && toleration["key"] !== "" ? toleration["key"] : "(any key)";
  const effect =
    typeof toleration["effect"] === "string" && toleration["effect"] !== "" ? toleration["effect"] : "any effect";
  return `${key} ${String(toleration["operator"] ?? "Equal")} (${effect})`;
}

function listed(names: readonly string[]): string {
  return names.length === 0 ? "none allowed" : `allowed: ${names.join(", ")}`;
}
