import type { HostRules } from "../host-rules.js";
import { isJsonObject, type JsonObject } from "./json.js";
import { podSecurityViolations } from "./pod-security.js";
import { items, podContainers, read, type Violation } from "./violation.js";

const WORKLOADS = "IsolationProfile spec.workloads";
const HOST_ACCESS = "rule: tenant Pods never get host access";

/**
 * What keeps `pod` off the host: host access (host namespaces, hostPath, privileged
 * containers, host ports, whatever the profile says), names outside the profile's
 * allowed priority and runtime classes, node selector values that conflict with the
 * profile's, and anything the host namespace's Pod Security level would refuse.
 * Tolerations the profile does not grant are no reason: the translator removes them.
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

  const reported = new Set(found.map((v) => v.field));
  for (const violation of podSecurityViolations(pod, rules.podSecurity)) {
    if (!reported.has(violation.field)) found.push(violation);
  }
  return found;
}

function listed(names: readonly string[]): string {
  return names.length === 0 ? "none allowed" : `allowed: ${names.join(", ")}`;
}
